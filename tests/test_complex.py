"""Complex numbers against the installed PyTorch: conjugate views, real/imag views, constructors,
random draws, autograd (gradcheck and torch's conjugate-Wirtinger gradients) and optimizers."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _pair(values, dtype="complex64", requires_grad=False):
    """The same values as a torchplug and a torch tensor."""
    arr = np.asarray(values, dtype=dtype)
    a = tp.tensor(arr.copy(), requires_grad=requires_grad)
    b = torch.tensor(arr.copy(), requires_grad=requires_grad)
    return a, b


def _same(a, b, rtol=1e-6, atol=1e-6):
    """torchplug tensor ``a`` holds what torch tensor ``b`` holds (dtype names and values)."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    expected = b.detach().resolve_conj().resolve_neg().numpy()
    np.testing.assert_allclose(np.asarray(a.detach().tolist()), expected, rtol=rtol, atol=atol)


Z = [1 + 2j, 3 - 4j, -0.5 + 0.25j]


# ---- conj: the conjugate bit ---------------------------------------------------------------------
def test_conj_is_a_lazy_view_like_torch():
    a, b = _pair(Z)
    ca, cb = a.conj(), b.conj()
    assert ca.is_conj() is cb.is_conj() is True
    assert a.is_conj() is b.is_conj() is False
    assert ca._base is a
    _same(ca, cb)
    assert ca.tolist() == pytest.approx(cb.tolist())
    assert repr(ca).replace("torchplug", "torch") == repr(cb)
    assert ca.conj().is_conj() is False
    _same(ca.conj(), b)
    ra, rb = ca.resolve_conj(), cb.resolve_conj()
    assert ra.is_conj() is rb.is_conj() is False
    _same(ra, rb)
    assert ra.data_ptr() != a.data_ptr()


def test_write_through_conj_view_stores_the_conjugate():
    a, b = _pair(Z)
    ca, cb = a.conj(), b.conj()
    ca[0] = 1 + 1j
    cb[0] = 1 + 1j
    _same(a, b)
    ca.mul_(2j)
    cb.mul_(2j)
    _same(a, b)
    assert ca.is_conj() and a._version == b._version
    ca[1:].copy_(tp.tensor([5 + 6j, 7 - 8j]))
    cb[1:].copy_(torch.tensor([5 + 6j, 7 - 8j]))
    _same(a, b)


def test_views_of_a_conj_view_stay_conjugate():
    a, b = _pair([[1 + 1j, 2 - 3j], [4j, -5 + 0j]])
    for fa, fb in [(lambda t: t.conj().t(), lambda t: t.conj().t()),
                   (lambda t: t.conj()[0], lambda t: t.conj()[0]),
                   (lambda t: t.conj().reshape(4), lambda t: t.conj().reshape(4)),
                   (lambda t: t.mH, lambda t: t.mH),
                   (lambda t: t.adjoint(), lambda t: t.adjoint())]:
        va, vb = fa(a), fb(b)
        assert va.is_conj() is vb.is_conj()
        _same(va, vb)


def test_ops_on_conj_inputs_resolve_them():
    a, b = _pair(Z)
    for fa, fb in [(lambda t: t.conj() + 1, lambda t: t.conj() + 1),
                   (lambda t: t.conj() * t, lambda t: t.conj() * t),
                   (lambda t: t.conj().clone(), lambda t: t.conj().clone()),
                   (lambda t: t.conj().exp(), lambda t: t.conj().exp()),
                   (lambda t: t.conj().sum(), lambda t: t.conj().sum())]:
        ra, rb = fa(a), fb(b)
        assert ra.is_conj() is rb.is_conj() is False
        _same(ra, rb, rtol=1e-5)


def test_conj_of_real_tensors_is_the_tensor_itself():
    x = tp.tensor([1.0, -2.0])
    assert x.conj() is x and not x.conj().is_conj()
    assert tp.conj_physical(x) is x and x.conj_physical_() is x
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag


def test_conj_physical_and_refusals():
    a, b = _pair(Z)
    _same(tp.conj_physical(a), torch.conj_physical(b))
    assert not tp.conj_physical(a).is_conj()
    c = a.clone()
    c.conj_physical_()
    _same(c, b.conj_physical())
    with pytest.raises(RuntimeError, match="^view_as_real doesn't work on unresolved conjugated tensors"):
        tp.view_as_real(a.conj())
    with pytest.raises(RuntimeError, match="^Can't call numpy\\(\\) on Tensor that has conjugate bit set"):
        a.conj().numpy()
    assert np.allclose(a.conj().resolve_conj().numpy(), b.conj().resolve_conj().numpy())


# ---- real / imag / view_as_real / view_as_complex -----------------------------------------------------
def test_real_imag_are_writable_views():
    a, b = _pair(Z)
    for ta, tb in ((a.real, b.real), (a.imag, b.imag), (tp.real(a), torch.real(b)), (tp.imag(a), torch.imag(b))):
        _same(ta, tb)
        assert ta._base is a
    a.real.mul_(2)
    b.real.mul_(2)
    a.imag[1] = 10
    b.imag[1] = 10
    _same(a, b)
    assert a._version == b._version
    a.real = tp.tensor([5.0, 6.0, 7.0])
    b.real = torch.tensor([5.0, 6.0, 7.0])
    a.imag = 3
    b.imag = 3
    _same(a, b)
    _same(a.conj().real, b.conj().real)
    _same(a.conj().imag, b.conj().imag)


def test_imag_of_a_conj_view_is_a_negated_view_like_torch():
    a, b = _pair(Z)
    ia, ib = a.conj().imag, b.conj().imag
    assert ia.is_neg() is ib.is_neg() is True and ia._base is a
    _same(ia, ib)
    ia[0] = 7.0
    ib[0] = 7.0
    ia.mul_(2)
    ib.mul_(2)
    _same(a, b)
    assert a._version == b._version
    for fa, fb in [(lambda t: t + 1, lambda t: t + 1), (lambda t: t.resolve_neg(), lambda t: t.resolve_neg()),
                   (lambda t: t[1:], lambda t: t[1:]), (lambda t: -t, lambda t: -t)]:
        ra, rb = fa(ia), fb(ib)
        assert ra.is_neg() is rb.is_neg()
        _same(ra, rb)
    assert ia.tolist() == ib.tolist()
    with pytest.raises(RuntimeError, match="^Can't call numpy\\(\\) on Tensor that has negative bit set"):
        ia.numpy()
    assert not tp.tensor([1.0]).is_neg() and tp.resolve_neg(a) is a


def test_view_as_real_and_complex_share_storage():
    a, b = _pair([[1 + 2j, 3 - 4j], [5j, -1 + 0j]], "complex128")
    ra, rb = tp.view_as_real(a), torch.view_as_real(b)
    _same(ra, rb)
    assert ra.stride() == rb.stride() and ra._base is a
    ra[0, 0, 1] = 9.0
    rb[0, 0, 1] = 9.0
    _same(a, b)
    ta, tb = tp.view_as_real(a.t()), torch.view_as_real(b.t())
    assert ta.stride() == tb.stride() and ta.storage_offset() == tb.storage_offset()
    ca, cb = tp.view_as_complex(ra), torch.view_as_complex(rb)
    _same(ca, cb)
    assert ca.data_ptr() == a.data_ptr()


@pytest.mark.parametrize("make", [
    lambda m: m.ones(3, 3), lambda m: m.ones(3, 2, dtype=m.int32), lambda m: m.ones(2, 3)[:, :2],
    lambda m: m.ones(9)[1:].view(4, 2), lambda m: m.ones(4, 2).t().contiguous().t(), lambda m: m.ones(()),
])
def test_view_as_complex_errors_match_torch(make):
    with pytest.raises(RuntimeError) as expected:
        torch.view_as_complex(make(torch))
    with pytest.raises(RuntimeError) as got:
        tp.view_as_complex(make(tp))
    assert str(got.value) == str(expected.value)


def test_view_as_real_of_real_raises_like_torch():
    with pytest.raises(RuntimeError, match="^view_as_real is only supported for complex tensors$"):
        tp.view_as_real(tp.ones(2))


# ---- constructors and angle ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_and_polar_match_torch(dtype):
    re = np.array([[1.0, -2.0, 0.5]], dtype=dtype)
    im = np.array([[3.0], [-0.25]], dtype=dtype)
    _same(tp.complex(tp.tensor(re), tp.tensor(im)), torch.complex(torch.tensor(re), torch.tensor(im)))
    r = np.abs(re)
    _same(tp.polar(tp.tensor(r), tp.tensor(im)), torch.polar(torch.tensor(r), torch.tensor(im)), rtol=1e-6)


@pytest.mark.parametrize("args", [("float32", "float64"), ("int32", "int32")])
def test_complex_polar_errors_match_torch(args):
    for name in ("complex", "polar"):
        with pytest.raises(RuntimeError) as expected:
            getattr(torch, name)(torch.ones(2, dtype=getattr(torch, args[0])),
                                 torch.ones(2, dtype=getattr(torch, args[1])))
        with pytest.raises(RuntimeError) as got:
            getattr(tp, name)(tp.ones(2, dtype=getattr(tp, args[0])), tp.ones(2, dtype=getattr(tp, args[1])))
        assert str(got.value) == str(expected.value)


def test_angle_matches_torch():
    a, b = _pair(Z + [0j, -1 + 0j, complex(-0.0, -0.0)])
    _same(tp.angle(a), torch.angle(b))
    _same(a.angle(), b.angle())
    for values, dtype in (([-1.0, 0.0, 2.0, math.nan, -math.inf, math.inf], "float64"), ([-3, 0, 4], "int64")):
        _same(tp.angle(tp.tensor(np.array(values, dtype=dtype))), torch.angle(torch.tensor(np.array(values, dtype=dtype))))


def test_complex_abs_sgn_dot_vdot_and_linalg():
    a, b = _pair(Z)
    _same(a.abs(), b.abs())
    _same(tp.sgn(a), torch.sgn(b))
    _same(tp.dot(a, a.conj()), torch.dot(b, b.conj()), rtol=1e-5)
    _same(tp.vdot(a, a * 2j), torch.vdot(b, b * 2j), rtol=1e-5)
    m = np.array([[2 + 1j, 1 - 1j], [0.5j, 3 + 0j]], dtype="complex128")
    _same(tp.linalg.inv(tp.tensor(m)), torch.linalg.inv(torch.tensor(m)), rtol=1e-10)
    _same(tp.tensor(m).mH @ tp.tensor(m), torch.tensor(m).mH @ torch.tensor(m), rtol=1e-10)
    assert tp.is_complex(a) and a.is_complex() and not tp.is_complex(a.real)


# ---- autograd ------------------------------------------------------------------------------------------
def _rand(shape, seed, dtype="complex128"):
    rng = np.random.default_rng(seed)
    arr = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if "complex" in dtype else 0)
    return np.asarray(arr, dtype=dtype)  # a 0-d array, not a NumPy scalar, for shape ()


def _leaves(arrays):
    return ([tp.tensor(a.copy(), requires_grad=True) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


# (name, function of the inputs (any module: torchplug or torch), input dtypes and shapes)
GRAD_CASES = [
    ("mul", lambda m, a, b: a * b, [("complex128", (3,)), ("complex128", (3,))]),
    ("mul_real_by_complex", lambda m, a, b: a * b, [("float64", (3,)), ("complex128", (3,))]),
    ("div", lambda m, a, b: a / b, [("complex128", (3,)), ("complex128", (3,))]),
    ("exp_log_sqrt", lambda m, a: a.exp() + a.log() + a.sqrt(), [("complex128", (4,))]),
    ("trig", lambda m, a: a.sin() * a.cos() + a.tanh() + a.sigmoid(), [("complex128", (4,))]),
    ("pow", lambda m, a, b: a.pow(b) + a.pow(2) + a.reciprocal(), [("complex128", (3,)), ("complex128", (3,))]),
    ("abs", lambda m, a: a.abs(), [("complex128", (4,))]),
    ("angle", lambda m, a: a.angle(), [("complex128", (4,))]),
    ("sgn", lambda m, a: m.sgn(a), [("complex128", (4,))]),
    ("real_imag", lambda m, a: a.real * 2 + a.imag * 3, [("complex128", (4,))]),
    ("conj", lambda m, a, b: a.conj() * b, [("complex128", (3,)), ("complex128", (3,))]),
    ("conj_physical", lambda m, a: m.conj_physical(a) * a, [("complex128", (3,))]),
    ("view_as_real", lambda m, a: m.view_as_real(a) * m.tensor([1.0, -2.0], dtype=m.float64), [("complex128", (3,))]),
    ("view_as_complex", lambda m, a: m.view_as_complex(a) ** 2, [("float64", (3, 2))]),
    ("complex", lambda m, a, b: m.complex(a, b) ** 2, [("float64", (3,)), ("float64", (3,))]),
    ("polar", lambda m, a, b: m.polar(a.abs(), b) ** 2, [("float64", (3,)), ("float64", (3,))]),
    ("mm_mH", lambda m, a, b: a @ b.mH, [("complex128", (2, 3)), ("complex128", (2, 3))]),
    ("mv_dot_vdot", lambda m, a, b, c: m.dot(a.mv(b), c) + m.vdot(b, c), [("complex128", (3, 3)), ("complex128", (3,)), ("complex128", (3,))]),
    ("bmm", lambda m, a, b: a.bmm(b), [("complex128", (2, 2, 3)), ("complex128", (2, 3, 2))]),
    ("add_sub_alpha", lambda m, a, b: m.add(a, b, alpha=1 + 2j) - m.sub(a, b, alpha=0.5j), [("complex128", (3,)), ("complex128", (3,))]),
    ("sum_mean_prod", lambda m, a: a.sum() + a.mean() * a.prod(), [("complex128", (3,))]),
    ("inv", lambda m, a: m.linalg.inv(a), [("complex128", (3, 3))]),
    ("det", lambda m, a: m.linalg.det(a), [("complex128", (3, 3))]),
    ("slogdet", lambda m, a: (lambda s, l: s * l)(*m.linalg.slogdet(a)), [("complex128", (3, 3))]),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), [("complex128", (3, 3)), ("complex128", (3, 2))]),
    ("cholesky", lambda m, a: m.linalg.cholesky(a @ a.mH + 3 * m.eye(3)), [("complex128", (3, 3))]),
    ("svd", lambda m, a: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh + u.abs())(*m.linalg.svd(a)), [("complex128", (3, 3))]),
    ("eigh", lambda m, a: (lambda w, v: (v * w.unsqueeze(-2)) @ v.mH)(*m.linalg.eigh(a @ a.mH)), [("complex128", (3, 3))]),
    ("qr", lambda m, a: (lambda q, r: q.sum(-1) * 2 + r.sum(0).mean())(*m.linalg.qr(a)), [("complex128", (4, 3))]),
    ("pinv", lambda m, a: m.linalg.pinv(a), [("complex128", (3, 2))]),
]


@pytest.mark.parametrize("name, fn, specs", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch(name, fn, specs):
    arrays = [_rand(shape, seed, dtype) for seed, (dtype, shape) in enumerate(specs)]
    ours, theirs = _leaves(arrays)
    out_a, out_b = fn(tp, *ours), fn(torch, *theirs)
    _same(out_a, out_b, rtol=1e-10, atol=1e-10)
    go = _rand(tuple(out_b.shape), 99, "complex128" if out_b.is_complex() else "float64")
    out_a.backward(tp.tensor(go))
    out_b.backward(torch.tensor(go))
    for a, b in zip(ours, theirs):
        assert a.grad.dtype.is_complex == b.grad.is_complex()
        _same(a.grad, b.grad, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name, fn, specs", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck_on_complex_inputs(name, fn, specs):
    ours, _ = _leaves([_rand(shape, seed, dtype) for seed, (dtype, shape) in enumerate(specs)])
    assert tp.autograd.gradcheck(lambda *xs: fn(tp, *xs), tuple(ours))


def _exp_function(conjugate):
    class Exp(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (y.conj() if conjugate else y)

    return Exp


def test_gradcheck_sees_a_wrong_complex_gradient():
    # The realified Jacobian tells PyTorch's grad * conj(f') from grad * f': a backward missing its conj fails.
    x = tp.tensor(_rand((2,), 5), requires_grad=True)
    assert tp.autograd.gradcheck(_exp_function(True).apply, (x,))
    assert tp.autograd.gradcheck(_exp_function(False).apply, (x,), raise_exception=False) is False


INPLACE_VIEW_CASES = [
    ("real_mul_", lambda t: (t.real.mul_(2), t)[1]),
    ("imag_setitem", lambda t: (t.imag.__setitem__(0, 0.5), t * t)[1]),
    ("view_as_real_setitem", lambda t: (torch_or_tp(t).view_as_real(t).__setitem__((slice(None), 1), 0.5), t)[1]),
    ("conj_view_mul_", lambda t: (t.conj().mul_(2 + 1j), t)[1]),
    ("conj_view_returned", lambda t: (lambda y: (y.mul_(2 + 1j), y)[1])(t.conj())),
    ("conj_view_after_base_write", lambda t: (lambda y: (t.mul_(2), y)[1])(t.conj())),
    ("neg_view_mul_", lambda t: (t.conj().imag.mul_(3), t)[1]),
    ("neg_view_after_base_write", lambda t: (lambda y: (t.mul_(2j), y * 1)[1])(t.conj().imag)),
]


def torch_or_tp(t):
    return tp if isinstance(t, tp.Tensor) else torch


@pytest.mark.parametrize("name, fn", INPLACE_VIEW_CASES, ids=[c[0] for c in INPLACE_VIEW_CASES])
def test_gradients_through_inplace_writes_to_complex_views(name, fn):
    arr = _rand((3,), 7)
    (a,), (b,) = _leaves([arr])
    out_a, out_b = fn(a.clone()), fn(b.clone())
    _same(out_a, out_b, rtol=1e-12)
    go = _rand((3,), 8, "complex128" if out_b.is_complex() else "float64")
    out_a.backward(tp.tensor(go))
    out_b.backward(torch.tensor(go))
    _same(a.grad, b.grad, rtol=1e-12)
    assert tp.autograd.gradcheck(lambda t: fn(t.clone()), (tp.tensor(arr, requires_grad=True),))


def test_grad_fn_names_of_complex_ops():
    x = tp.tensor([1 + 1j], requires_grad=True)
    y = torch.tensor([1 + 1j], requires_grad=True)
    for fa, fb in [(lambda t: t.conj(), lambda t: t.conj()), (lambda t: t.abs(), lambda t: t.abs()),
                   (lambda t: t.angle(), lambda t: t.angle()), (lambda t: t.real, lambda t: t.real),
                   (lambda t: tp.view_as_real(t), lambda t: torch.view_as_real(t))]:
        assert fa(x).grad_fn.name() == fb(y).grad_fn.name()


# ---- random draws --------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_randn_complex_parts_have_half_variance(dtype):
    tp.manual_seed(1)
    x = tp.randn(40000, dtype=getattr(tp, dtype))
    assert x.dtype is getattr(tp, dtype)
    values = np.asarray(x.tolist())
    # torch's convention: E|z|^2 = 1, so the real and imaginary parts each have variance 1/2
    assert abs(values.real.var() - 0.5) < 0.02 and abs(values.imag.var() - 0.5) < 0.02
    assert abs(values.real.mean()) < 0.02 and abs(values.imag.mean()) < 0.02
    assert abs(np.corrcoef(values.real, values.imag)[0, 1]) < 0.03


def test_complex_normal_rand_and_errors():
    tp.manual_seed(2)
    z = tp.empty(40000, dtype=tp.complex64).normal_(2.0, 3.0)
    values = np.asarray(z.tolist())
    for part in (values.real, values.imag):
        assert abs(part.mean() - 2.0) < 0.05 and abs(part.var() - 4.5) < 0.2
    u = np.asarray(tp.rand(40000, dtype=tp.complex128).tolist())
    for part in (u.real, u.imag):
        assert part.min() >= 0.0 and part.max() < 1.0 and abs(part.mean() - 0.5) < 0.01
    strided = tp.zeros(8, dtype=tp.complex64)[::2]
    strided.normal_()
    assert strided._version == 1 and bool((strided != 0).all())
    with pytest.raises(RuntimeError) as expected:
        torch.empty(3, dtype=torch.complex64).normal_(0.0, -1.0)
    with pytest.raises(RuntimeError) as got:
        tp.empty(3, dtype=tp.complex64).normal_(0.0, -1.0)
    assert str(got.value) == str(expected.value)
    assert tp.randn(2, 3, dtype=tp.complex64, device="meta").shape == (2, 3)


# ---- optimizers on complex parameters -------------------------------------------------------------------
OPTIMIZERS = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.05)), ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)), ("AdamW", dict(lr=0.05)),
    ("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)), ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict(lr=1.0)), ("Adamax", dict(lr=0.05)), ("ASGD", dict(lr=0.05, t0=2)), ("NAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05)), ("Rprop", dict(lr=0.05)), ("LBFGS", dict(lr=0.5, max_iter=3)),
]


def _trajectory(m, name, kwargs, steps=6):
    w0 = _rand((3, 2), 11)
    x = m.tensor(_rand((2, 4), 12))
    y = m.tensor(_rand((3, 4), 13))
    b = m.tensor(_rand((3,), 14, "float64"), requires_grad=True)  # a real parameter beside the complex one
    w = m.tensor(w0.copy(), requires_grad=True)
    opt = getattr(m.optim, name)([w, b], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((w @ x - y).abs() ** 2).sum() + (b ** 2).sum() + (w.real * b[:, None]).sum()
        loss.backward()
        return loss

    values = []
    for _ in range(steps):
        opt.step(closure) if name == "LBFGS" else (closure(), opt.step())
        values.append(np.asarray(w.detach().tolist()))
    states = {k: str(v.dtype).split(".")[-1] for k, v in opt.state[w].items() if hasattr(v, "dtype") and v.dim()}
    return np.array(values), np.asarray(b.detach().tolist()), states


@pytest.mark.parametrize("name, kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_trajectories_on_complex_params_match_torch(name, kwargs):
    ours, b_ours, states_ours = _trajectory(tp, name, kwargs)
    theirs, b_theirs, states_theirs = _trajectory(torch, name, kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(b_ours, b_theirs, rtol=1e-9, atol=1e-10)
    assert states_ours == states_theirs  # per-element state stays complex, as torch keeps it


@pytest.mark.parametrize("name", ["Adafactor", "SparseAdam"])
def test_optimizers_without_complex_support_refuse_like_torch(name):
    kwargs = {"lr": 0.01}

    def run(m):
        w = m.zeros(2, 2, dtype=m.complex64, requires_grad=True)
        opt = getattr(m.optim, name)([w], **kwargs)
        (w.abs() ** 2).sum().backward()
        opt.step()

    with pytest.raises(Exception) as expected:
        run(torch)
    with pytest.raises(type(expected.value)) as got:
        run(tp)
    assert str(got.value).split(":")[0] == str(expected.value).split(":")[0]


# ---- printing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("values, dtype", [
    ([1 + 2j, 3 - 4j], "complex64"), ([[1 + 2j, 3.5 - 4j], [0j, 1e-5j]], "complex64"), ([1e10 + 1j], "complex128"),
    (1 + 1j, "complex128"), ([math.nan + 1j, math.inf - 1j, complex(-0.0, -0.0)], "complex64"),
    ([1 - 0j, 3 - 4j], "complex64"), ([], "complex64"), ([[1e-20 + 1e20j] * 2] * 2, "complex128"),
])
def test_complex_printing_matches_torch(values, dtype):
    arr = np.array(values, dtype=dtype)
    for make in (lambda m: m.tensor(arr), lambda m: m.tensor(arr).conj(), lambda m: m.tensor(arr, requires_grad=True) * 1):
        assert repr(make(tp)).replace("torchplug", "torch") == repr(make(torch))


# ---- serialization -------------------------------------------------------------------------------------
def test_conjugate_and_negative_views_round_trip_through_save_like_torch():
    import io

    x = tp.tensor([1 + 2j, 3 - 4j])
    ours, theirs = {}, {}
    # (x and its float imaginary view in one archive: torch refuses two dtypes over one storage, so do we)
    for group in ({"x": x, "c": x.conj()}, {"n": x.conj().imag}):
        buf = io.BytesIO()
        tp.save(group, buf)
        ours.update(tp.load(io.BytesIO(buf.getvalue())))
        theirs.update(torch.load(io.BytesIO(buf.getvalue())))
    assert ours["c"].is_conj() and theirs["c"].is_conj() and ours["n"].is_neg() and theirs["n"].is_neg()
    expected = {"x": [1 + 2j, 3 - 4j], "c": [1 - 2j, 3 + 4j], "n": [-2.0, 4.0]}
    for key, values in expected.items():
        assert ours[key].tolist() == theirs[key].tolist() == values
    assert ours["c"].data_ptr() == ours["x"].data_ptr()  # still one storage
    t = torch.tensor([1 + 2j, 3 - 4j])
    loaded = {}
    for key, value in (("c", t.conj()), ("n", t.conj().imag)):
        buf = io.BytesIO()
        torch.save({key: value}, buf)
        loaded.update(tp.load(io.BytesIO(buf.getvalue()), weights_only=True))
    assert loaded["c"].is_conj() and loaded["c"].tolist() == t.conj().tolist()
    assert loaded["n"].is_neg() and loaded["n"].tolist() == t.conj().imag.tolist()


# ---- writes and reads through lazy views, against torch -------------------------------------------------
def _semantics(m):
    """What a script sees: errors of in-place writes to views of a leaf, and values after writes and reads."""
    out = []
    a = m.tensor([1 + 1j, 2j], requires_grad=True)
    for write in (lambda: a.conj().mul_(2), lambda: a.real.mul_(2), lambda: a.conj().imag.mul_(2),
                  lambda: m.view_as_real(a).zero_()):
        try:
            write()
            out.append("ok")
        except RuntimeError as exc:
            out.append(str(exc))
    with m.no_grad():
        v = a.conj()
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        v.mul_(2)
    b = m.tensor([1 + 1j, 2j])
    b.conj().add_(1j)
    z = m.zeros(2, dtype=m.complex64)
    m.add(m.tensor([1j, 2j]), 1, out=z.conj())
    c = m.tensor([1 + 1j, 2j])
    c.conj().copy_(m.tensor([5j, 1 + 0j]))
    d = m.tensor([[1 + 1j, 2j], [3, 4j]])
    d.mH[0, 1] = 9j
    e = m.tensor([1 + 1j, 2j])
    e.conj().fill_(3j)
    f = m.tensor([1 + 1j, 2j])
    f.conj()[f.real > 0] = 7j
    out += [t.tolist() for t in (b, z, c, d, e, f)]
    g = m.tensor([1 + 1j, 2j])
    h = m.tensor([[1 + 1j, 2j]])
    out += [m.stack([g.conj(), g]).tolist(), m.cat([g.conj(), g]).is_conj(), [t.is_conj() for t in h.conj().unbind(1)],
            [t.tolist() for t in h.conj().split(1, 1)], g.conj().sum().tolist(), g.conj().abs().tolist(),
            m.where(m.tensor([True, False]), g.conj(), g).tolist(), g.conj().to(m.complex128).tolist(),
            g.conj().contiguous().is_conj(), g.conj().expand(2, 2).is_conj(), g.conj().detach().is_conj()]
    return out


def test_writes_and_reads_through_lazy_views_match_torch():
    assert _semantics(tp) == _semantics(torch)


def test_complex_module_warns_and_trains_like_torch():
    def run(m):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        with pytest.warns(UserWarning) as record:
            lin.to(m.complex128)
        with m.no_grad():
            lin.weight.copy_(m.tensor(_rand((2, 3), 21)))
            lin.bias.copy_(m.tensor(_rand((2,), 22)))
        y = lin(m.tensor(_rand((4, 3), 23)))
        y.abs().sum().backward()
        return [str(r.message) for r in record], y.tolist(), lin.weight.grad.tolist(), lin.bias.grad.tolist()

    ours, theirs = run(tp), run(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_python_number_conversions_and_inplace_abs_like_torch():
    def run(m):
        out = []
        for f in (lambda: float(m.tensor(1 + 0j)), lambda: int(m.tensor(2 + 0j)), lambda: float(m.tensor(1.5 + 1j)),
                  lambda: int(m.tensor(2 + 1j)), lambda: complex(m.tensor(1 + 2j)), lambda: bool(m.tensor(1j)),
                  lambda: m.tensor([1 + 0j]).abs_(), lambda: m.abs_(m.tensor([1j])), lambda: m.tensor([-1.5]).abs_().tolist()):
            try:
                out.append(f())
            except RuntimeError as exc:
                out.append(str(exc))
        return out

    assert run(tp) == run(torch)


def test_assert_close_reads_lazy_views():
    x = tp.tensor([1 + 2j, 3 - 4j])
    tp.testing.assert_close(x.conj(), tp.tensor([1 - 2j, 3 + 4j]))
    tp.testing.assert_close(x.conj().imag, tp.tensor([-2.0, 4.0]))
    with pytest.raises(AssertionError):
        tp.testing.assert_close(x.conj(), x)


def test_dtype_views_and_dlpack_of_lazy_views_refuse_like_torch():
    def run(m):
        x = m.tensor([1 + 2j, 3 - 4j])
        out = []
        for f in (lambda: x.conj().view(m.float32), lambda: x.conj().view(m.complex64), lambda: x.conj().imag.view(m.int32),
                  lambda: x.conj().__dlpack__(), lambda: m.as_tensor(x.conj()).tolist(), lambda: x.conj().cdouble().tolist(),
                  lambda: x.conj().imag.to(m.float64).tolist()):
            try:
                out.append(f())
            except (RuntimeError, BufferError) as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        return out

    assert run(tp) == run(torch)


SECOND_ORDER = ["mul", "div", "exp_log_sqrt", "trig", "abs", "angle", "sgn", "real_imag", "conj", "mm_mH"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradgradcheck_on_complex_inputs(name):
    _, fn, specs = next(c for c in GRAD_CASES if c[0] == name)
    ours, _ = _leaves([_rand(shape, seed, dtype) for seed, (dtype, shape) in enumerate(specs)])
    assert tp.autograd.gradgradcheck(lambda *xs: fn(tp, *xs), tuple(ours))


@pytest.mark.parametrize("name", ["conj", "is_conj", "resolve_conj", "conj_physical", "real", "imag", "view_as_real",
                                  "view_as_complex", "adjoint", "is_neg", "resolve_neg"])
def test_functions_refuse_non_tensors_like_torch(name):
    with pytest.raises(TypeError) as expected:
        getattr(torch, name)(5)
    with pytest.raises(TypeError) as got:
        getattr(tp, name)(5)
    assert str(got.value) == str(expected.value)


REAL_BASE_CASES = [
    ("view_as_complex_mul_", lambda m, b: (m.view_as_complex(b).mul_(2 + 1j), b)[1]),
    ("view_as_complex_after_base_write", lambda m, b: (lambda c: (b.mul_(3), c * 1)[1])(m.view_as_complex(b))),
    ("view_as_complex_setitem", lambda m, b: (m.view_as_complex(b).__setitem__(0, 5j), b.sum(1))[1]),
]


@pytest.mark.parametrize("name, fn", REAL_BASE_CASES, ids=[c[0] for c in REAL_BASE_CASES])
def test_gradients_through_complex_views_of_real_bases(name, fn):
    arr = _rand((3, 2), 31, "float64")
    (a,), (b,) = _leaves([arr])
    out_a, out_b = fn(tp, a.clone()), fn(torch, b.clone())
    _same(out_a, out_b, rtol=1e-12)
    go = _rand(tuple(out_b.shape), 32, "complex128" if out_b.is_complex() else "float64")
    out_a.backward(tp.tensor(go))
    out_b.backward(torch.tensor(go))
    _same(a.grad, b.grad, rtol=1e-12)
    assert tp.autograd.gradcheck(lambda t: fn(tp, t.clone()), (tp.tensor(arr, requires_grad=True),))
