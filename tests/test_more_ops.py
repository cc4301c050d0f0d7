"""The ops real scripts hit beyond the foundation, compared with the installed torch: values, dtypes,
gradients and errors (the conformance opinfos in ``testing/opinfos/more.py`` cover the layouts and dtypes)."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as tnn
import torchplug.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(0)

# both libraries warn once that index_reduce is in beta
pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")


def _pair(array: np.ndarray, requires_grad: bool = False):
    ours = tp.tensor(array, requires_grad=requires_grad)
    theirs = torch.tensor(array, requires_grad=requires_grad)
    return ours, theirs


def _same(ours, theirs, rtol=1e-6, atol=1e-7):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def _same_error(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


# ---- pointwise ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_nan_rule_and_gradient(name):
    a = np.array([1.0, np.nan, 3.0, np.nan, 2.0])
    b = np.array([2.0, 1.0, np.nan, np.nan, 2.0])
    (x, tx), (y, ty) = _pair(a, True), _pair(b, True)
    r, tr = getattr(tp, name)(x, y), getattr(torch, name)(tx, ty)
    _same(r, tr)
    g = np.arange(5.0)
    r.backward(tp.tensor(g))
    tr.backward(torch.tensor(g))
    _same(x.grad, tx.grad)
    _same(y.grad, ty.grad)


def test_fmax_promotes_and_refuses_complex_and_numbers():
    _same(tp.fmax(tp.tensor([1, 5]), tp.tensor([1.5, float("nan")])),
          torch.fmax(torch.tensor([1, 5]), torch.tensor([1.5, float("nan")])))
    _same(tp.fmin(tp.tensor([True, False]), tp.tensor([False, False])),
          torch.fmin(torch.tensor([True, False]), torch.tensor([False, False])))
    _same_error(lambda: tp.fmax(tp.tensor([1j]), tp.tensor([1j])), lambda: torch.fmax(torch.tensor([1j]), torch.tensor([1j])))
    with pytest.raises(TypeError):
        tp.fmax(tp.tensor([1.0]), 2.0)


def test_nextafter_steps_one_ulp_in_every_float_dtype():
    for dt in ("float16", "bfloat16", "float32", "float64"):
        a = tp.tensor([1.0, 0.0, -1.0, 2.0], dtype=getattr(tp, dt))
        b = tp.tensor([3.0, -1.0, -2.0, 2.0], dtype=getattr(tp, dt))
        ta = torch.tensor([1.0, 0.0, -1.0, 2.0], dtype=getattr(torch, dt))
        tb = torch.tensor([3.0, -1.0, -2.0, 2.0], dtype=getattr(torch, dt))
        r, tr = tp.nextafter(a, b), torch.nextafter(ta, tb)
        assert r.float().numpy().tobytes() == tr.float().numpy().tobytes()
    _same_error(lambda: tp.nextafter(tp.tensor([1, 2]), tp.tensor([3, 4])),
                lambda: torch.nextafter(torch.tensor([1, 2]), torch.tensor([3, 4])))


def test_nextafter_gradient_passes_to_self_only():
    (x, tx), (y, ty) = _pair(np.array([3.0, 0.5]), True), _pair(np.array([1.0, 2.0]), True)
    tp.nextafter(x, y).sum().backward()
    torch.nextafter(tx, ty).sum().backward()
    _same(x.grad, tx.grad)
    _same(y.grad, ty.grad)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_values_dtypes_and_gradient(name):
    a, x = RNG.uniform(0.2, 5, (3, 4)), RNG.uniform(0.1, 6, (3, 4))
    (ta, tta), (tx, ttx) = _pair(a), _pair(x, True)
    r, tr = getattr(tp, name)(ta, tx), getattr(torch, name)(tta, ttx)
    _same(r, tr, rtol=1e-10)
    r.sum().backward()
    tr.sum().backward()
    _same(tx.grad, ttx.grad, rtol=1e-9)
    half = getattr(tp, name)(tp.tensor([1.0, 2.0], dtype=tp.float16), tp.tensor([3.0, 0.5], dtype=tp.float16))
    assert half.dtype == tp.float16
    _same_error(lambda: getattr(tp, name)(tp.tensor([1, 2]), tp.tensor([3, 4])),
                lambda: getattr(torch, name)(torch.tensor([1, 2]), torch.tensor([3, 4])))


def test_igamma_input_gradient_is_not_implemented():
    a = tp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="igamma: input"):
        tp.igamma(a, tp.tensor([1.0, 2.0])).sum().backward()


def test_ldexp_dtypes():
    cases = [(np.array([1.0, 2, 3], np.float16), np.array([3, 4, 5])),
             (np.array([1, 2, 3]), np.array([3, 4, 5], np.int8)),
             (np.array([1, 2, 3]), np.array([3.0, 4, 5])),
             (np.array([1.0, 2, 3], np.float32), np.array([200, 4, -5]))]
    for a, b in cases:
        _same(tp.ldexp(tp.tensor(a), tp.tensor(b)), torch.ldexp(torch.tensor(a), torch.tensor(b)))
    t = tp.tensor([1.0, 2.0])
    assert t.ldexp_(tp.tensor([1, 2])) is t and t.tolist() == [2.0, 8.0]


def test_gcd_lcm():
    a, b = np.array([4, -6, 0, 9, -12]), np.array([6, 0, 0, -3, 18], np.int32)
    _same(tp.gcd(tp.tensor(a), tp.tensor(b)), torch.gcd(torch.tensor(a), torch.tensor(b)))
    _same(tp.lcm(tp.tensor(a), tp.tensor(b)), torch.lcm(torch.tensor(a), torch.tensor(b)))
    _same_error(lambda: tp.gcd(tp.tensor([1.0]), tp.tensor([2.0])), lambda: torch.gcd(torch.tensor([1.0]), torch.tensor([2.0])))
    _same_error(lambda: tp.lcm(tp.tensor([True]), tp.tensor([True])), lambda: torch.lcm(torch.tensor([True]), torch.tensor([True])))


# ---- reductions and scans -----------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 1, 0, 3.5, float("inf"), -1])
def test_dist(p):
    (x, tx), (y, ty) = _pair(RNG.standard_normal((3, 4)), True), _pair(RNG.standard_normal(4))
    r, tr = tp.dist(x, y, p), torch.dist(tx, ty, p)
    _same(r, tr, rtol=1e-10)
    if p != 0:
        r.backward()
        tr.backward()
        _same(x.grad, tx.grad, rtol=1e-9)


def test_dist_refuses_integers():
    _same_error(lambda: tp.dist(tp.tensor([1, 2]), tp.tensor([3, 4])), lambda: torch.dist(torch.tensor([1, 2]), torch.tensor([3, 4])))


def test_logcumsumexp_is_exact_where_naive_underflows_and_differentiates():
    a = np.array([[-1000.0, 0.0, 1.0, 2.0, 3.0, -50.0, 700.0]])
    (x, tx) = _pair(a, True)
    r, tr = tp.logcumsumexp(x, 1), torch.logcumsumexp(tx, 1)
    _same(r, tr, rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-9, atol=1e-12)
    _same_error(lambda: tp.logcumsumexp(tp.tensor([1, 2]), 0), lambda: torch.logcumsumexp(torch.tensor([1, 2]), 0))
    _same_error(lambda: tp.logcumsumexp(tp.ones(2, 3), 2), lambda: torch.logcumsumexp(torch.ones(2, 3), 2))


def test_diff():
    a = RNG.standard_normal((3, 5))
    (x, tx) = _pair(a, True)
    for kw in ({}, {"n": 2, "dim": 0}, {"n": 0}, {"n": 9}):
        _same(tp.diff(x, **kw), torch.diff(tx, **kw))
    pre, app = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 1))
    r = tp.diff(x, n=3, prepend=tp.tensor(pre), append=tp.tensor(app))
    tr = torch.diff(tx, n=3, prepend=torch.tensor(pre), append=torch.tensor(app))
    _same(r, tr, rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad)
    b = np.array([True, False, False, True])
    _same(tp.diff(tp.tensor(b)), torch.diff(torch.tensor(b)))
    for bad in ({"n": -1}, {"prepend": np.zeros(3)}, {"dim": 3}):
        kw_ours = {k: tp.tensor(v) if isinstance(v, np.ndarray) else v for k, v in bad.items()}
        kw_theirs = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in bad.items()}
        _same_error(lambda: tp.diff(x, **kw_ours), lambda: torch.diff(tx, **kw_theirs))
    _same_error(lambda: tp.diff(tp.tensor(1.0)), lambda: torch.diff(torch.tensor(1.0)))


def test_diff_out():
    out = tp.empty(0)
    tp.diff(tp.tensor([1.0, 4.0, 9.0]), out=out)
    assert out.tolist() == [3.0, 5.0]


def test_renorm_values_gradient_and_errors():
    a = RNG.standard_normal((3, 4)) * 2
    (x, tx) = _pair(a, True)
    r, tr = tp.renorm(x, 2, 0, 1.0), torch.renorm(tx, 2, 0, 1.0)
    _same(r, tr, rtol=1e-10)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-6, atol=1e-9)
    t = tp.tensor(a)
    assert t.renorm_(1, 1, 0.5) is t
    _same(t, torch.tensor(a).renorm_(1, 1, 0.5))
    for args in ((-1, 0, 1.0), (2, 0, -1.0)):
        _same_error(lambda: tp.renorm(x, *args), lambda: torch.renorm(tx, *args))
    _same_error(lambda: tp.renorm(tp.ones(3), 2, 0, 1.0), lambda: torch.renorm(torch.ones(3), 2, 0, 1.0))
    _same_error(lambda: tp.renorm(tp.ones(3, 3, dtype=tp.int64), 2, 0, 1.0),
                lambda: torch.renorm(torch.ones(3, 3, dtype=torch.int64), 2, 0, 1.0))


def test_cov_weights_and_errors():
    a = RNG.standard_normal((3, 6))
    fw, aw = np.array([1, 2, 0, 3, 1, 1]), RNG.uniform(0.1, 2, 6)
    (x, tx) = _pair(a, True)
    for kw in ({}, {"correction": 0}, {"correction": 2}):
        _same(tp.cov(x, **kw), torch.cov(tx, **kw), rtol=1e-10)
    r = tp.cov(x, fweights=tp.tensor(fw), aweights=tp.tensor(aw))
    tr = torch.cov(tx, fweights=torch.tensor(fw), aweights=torch.tensor(aw))
    _same(r, tr, rtol=1e-10)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-9)
    _same(tp.cov(tp.arange(5)), torch.cov(torch.arange(5)))
    bad = [({"fweights": np.ones(6)}, {}), ({"fweights": np.ones(3, np.int64)}, {}),
           ({"fweights": -np.ones(6, np.int64)}, {}), ({"aweights": np.ones(6, np.int64)}, {}),
           ({"aweights": -np.ones(6)}, {}), ({"aweights": np.ones((2, 6))}, {})]
    for kw, _ in bad:
        _same_error(lambda: tp.cov(x, **{k: tp.tensor(v) for k, v in kw.items()}),
                    lambda: torch.cov(tx, **{k: torch.tensor(v) for k, v in kw.items()}))
    _same_error(lambda: tp.cov(tp.ones(2, 3, 4)), lambda: torch.cov(torch.ones(2, 3, 4)))
    _same_error(lambda: tp.cov(tp.ones(3, dtype=tp.bool)), lambda: torch.cov(torch.ones(3, dtype=torch.bool)))


def test_cov_warns_without_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = tp.cov(tp.tensor([[1.0, 2.0]]), correction=2)
    assert np.isinf(r.item()) or np.isnan(r.item())


def test_corrcoef():
    a = RNG.standard_normal((4, 7))
    (x, tx) = _pair(a, True)
    r, tr = tp.corrcoef(x), torch.corrcoef(tx)
    _same(r, tr, rtol=1e-10)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-7, atol=1e-10)
    _same_error(lambda: tp.corrcoef(tp.ones(2, 3, 4)), lambda: torch.corrcoef(torch.ones(2, 3, 4)))


# ---- indexing ----------------------------------------------------------------------------------------------------
def test_put_and_put_():
    a = RNG.standard_normal((3, 4))
    idx, src = np.array([[0, 5], [-1, 11]]), RNG.standard_normal((2, 2))
    for acc in (False, True):
        _same(tp.put(tp.tensor(a), tp.tensor(idx), tp.tensor(src), acc),
              torch.put(torch.tensor(a), torch.tensor(idx), torch.tensor(src), acc))
    t = tp.tensor(a).t()
    assert t.put_(tp.tensor(idx), tp.tensor(src)) is t
    _same(t, torch.tensor(a).t().put_(torch.tensor(idx), torch.tensor(src)))
    (x, tx), (s, ts) = _pair(a, True), _pair(src, True)
    r, tr = tp.put(x, tp.tensor(idx), s), torch.put(tx, torch.tensor(idx), ts)
    (r * tp.tensor(a)).sum().backward()
    (tr * torch.tensor(a)).sum().backward()
    _same(x.grad, tx.grad)
    _same(s.grad, ts.grad)


def test_put_errors():
    x, tx = tp.zeros(2, 3), torch.zeros(2, 3)
    _same_error(lambda: x.put_(tp.tensor([6]), tp.tensor([1.0])), lambda: tx.put_(torch.tensor([6]), torch.tensor([1.0])))
    _same_error(lambda: x.put_(tp.tensor([1], dtype=tp.int32), tp.tensor([1.0])),
                lambda: tx.put_(torch.tensor([1], dtype=torch.int32), torch.tensor([1.0])))
    _same_error(lambda: x.put_(tp.tensor([1]), tp.tensor([1.0], dtype=tp.float64)),
                lambda: tx.put_(torch.tensor([1]), torch.tensor([1.0], dtype=torch.float64)))
    _same_error(lambda: x.put_(tp.tensor([1, 2]), tp.tensor([1.0])), lambda: tx.put_(torch.tensor([1, 2]), torch.tensor([1.0])))


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    a, src = RNG.uniform(0.5, 2, (4, 3)), RNG.uniform(0.5, 2, (5, 3))
    idx = np.array([0, 2, 0, 3, 2])
    (x, tx), (s, ts) = _pair(a, True), _pair(src, True)
    r = tp.index_reduce(x, 0, tp.tensor(idx), s, reduce, include_self=include_self)
    tr = torch.index_reduce(tx, 0, torch.tensor(idx), ts, reduce, include_self=include_self)
    _same(r, tr, rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-10)
    _same(s.grad, ts.grad, rtol=1e-10)
    ints = np.array([[3, 1], [4, 1]])
    _same(tp.tensor(ints).index_reduce_(1, tp.tensor([1, 1]), tp.tensor(ints * 2), reduce, include_self=include_self),
          torch.tensor(ints).index_reduce_(1, torch.tensor([1, 1]), torch.tensor(ints * 2), reduce,
                                           include_self=include_self))


def test_index_reduce_errors():
    x, tx = tp.ones(3, 2), torch.ones(3, 2)
    _same_error(lambda: x.index_reduce(0, tp.tensor([0]), tp.ones(1, 2), "sum"),
                lambda: tx.index_reduce(0, torch.tensor([0]), torch.ones(1, 2), "sum"))
    _same_error(lambda: x.index_reduce(0, tp.tensor([0, 1]), tp.ones(1, 2), "prod"),
                lambda: tx.index_reduce(0, torch.tensor([0, 1]), torch.ones(1, 2), "prod"))
    _same_error(lambda: x.index_reduce(0, tp.tensor([0]), tp.ones(1, 2, dtype=tp.float64), "prod"),
                lambda: tx.index_reduce(0, torch.tensor([0]), torch.ones(1, 2, dtype=torch.float64), "prod"))


@pytest.mark.parametrize("shape,wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)])
def test_fill_diagonal_(shape, wrap):
    a = RNG.standard_normal(shape)
    t, tt = tp.tensor(a), torch.tensor(a)
    assert t.fill_diagonal_(5.0, wrap) is t
    _same(t, tt.fill_diagonal_(5.0, wrap))
    assert not hasattr(tp, "fill_diagonal_")


def test_fill_diagonal_gradient_and_errors():
    (x, tx) = _pair(RNG.standard_normal((4, 3)), True)
    y, ty = x * 2, tx * 2
    y.fill_diagonal_(1.0)
    ty.fill_diagonal_(1.0)
    y.sum().backward()
    ty.sum().backward()
    _same(x.grad, tx.grad)
    _same_error(lambda: tp.ones(3).fill_diagonal_(1), lambda: torch.ones(3).fill_diagonal_(1))
    _same_error(lambda: tp.ones(2, 3, 3).fill_diagonal_(1), lambda: torch.ones(2, 3, 3).fill_diagonal_(1))


# ---- in-place metadata: t_, unsqueeze_, squeeze_, transpose_, resize_, set_ --------------------------------------
def test_inplace_view_methods_change_self():
    for name, args in (("t_", ()), ("unsqueeze_", (1,)), ("transpose_", (0, 1)), ("swapdims_", (1, 0)),
                       ("swapaxes_", (0, 1))):
        a = RNG.standard_normal((2, 3))
        t, tt = tp.tensor(a), torch.tensor(a)
        assert getattr(t, name)(*args) is t
        getattr(tt, name)(*args)
        _same(t, tt)
        assert t.stride() == tt.stride()
    t = tp.ones(2, 1, 1)
    assert t.squeeze_((1, 2)) is t and tuple(t.shape) == (2,)
    _same_error(lambda: tp.ones(2, 3, 4).t_(), lambda: torch.ones(2, 3, 4).t_())


def test_inplace_view_methods_and_autograd():
    (x, tx) = _pair(RNG.standard_normal((2, 3)), True)
    _same_error(lambda: x.t_(), lambda: tx.t_())
    y, ty = x * 1, tx * 1
    y.t_()
    ty.t_()
    (y * tp.arange(6.0).reshape(3, 2)).sum().backward()
    (ty * torch.arange(6.0).reshape(3, 2)).sum().backward()
    _same(x.grad, tx.grad)


def test_resize_keeps_or_grows_storage():
    t, tt = tp.arange(6.0)[::2], torch.arange(6.0)[::2]
    t.resize_(2, 2)
    tt.resize_(2, 2)
    _same(t, tt)
    assert t.stride() == tt.stride()
    g = tp.arange(4.0)
    g.resize_(3, 3)
    assert tuple(g.shape) == (3, 3) and g.flatten()[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    r = tp.zeros(1)
    assert r.resize_as_(tp.ones(2, 5)) is r and tuple(r.shape) == (2, 5)
    _same_error(lambda: tp.ones(2, requires_grad=True).resize_(4), lambda: torch.ones(2, requires_grad=True).resize_(4))


def test_set_shares_storage():
    a = tp.arange(6.0)
    b = tp.empty(0)
    assert b.set_(a) is b and b.untyped_storage() is a.untyped_storage()
    a[0] = 7.0
    assert b[0].item() == 7.0
    b.set_(a.untyped_storage(), 2, (2,), (2,))
    assert b.tolist() == [2.0, 4.0]
    b.set_(a, 1, (2, 2), (1, 2))
    assert b.tolist() == torch.arange(6.0).index_put_((torch.tensor([0]),), torch.tensor(7.0)).set_(
        torch.arange(6.0).index_put_((torch.tensor([0]),), torch.tensor(7.0)), 1, (2, 2), (1, 2)).tolist()
    b.set_()
    assert tuple(b.shape) == (0,)
    _same_error(lambda: tp.ones(2).set_(tp.ones(2, dtype=tp.float64)), lambda: torch.ones(2).set_(torch.ones(2, dtype=torch.float64)))


# ---- nn ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [2, 1, 0, 3.0, float("inf")])
def test_pdist(p):
    (x, tx) = _pair(RNG.standard_normal((5, 3)), True)
    r, tr = F.pdist(x, p), TF.pdist(tx, p)
    _same(r, tr, rtol=1e-10)
    _same(tp.pdist(x, p), torch.pdist(tx, p), rtol=1e-10)
    if p != 0:
        r.sum().backward()
        tr.sum().backward()
        _same(x.grad, tx.grad, rtol=1e-8)
    _same_error(lambda: F.pdist(tp.ones(2, 3, 4)), lambda: TF.pdist(torch.ones(2, 3, 4)))
    _same_error(lambda: F.pdist(tp.ones(2, 3, dtype=tp.int64)), lambda: TF.pdist(torch.ones(2, 3, dtype=torch.int64)))
    _same_error(lambda: F.pdist(tp.ones(2, 3), -1), lambda: TF.pdist(torch.ones(2, 3), -1))


def test_lp_pool_and_modules():
    (x, tx) = _pair(RNG.uniform(0.1, 2, (2, 3, 9)), True)
    r, tr = F.lp_pool1d(x, 2, 3, 2, True), TF.lp_pool1d(tx, 2, 3, 2, True)
    _same(r, tr, rtol=1e-10)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-9)
    (y, ty) = _pair(RNG.uniform(0.1, 2, (2, 3, 6, 5)))
    _same(tnn.LPPool2d(3, (2, 2))(y), torch.nn.LPPool2d(3, (2, 2))(ty), rtol=1e-10)
    (z, tz) = _pair(RNG.uniform(0.1, 2, (1, 2, 4, 4, 4)))
    _same(tnn.LPPool3d(2, 2)(z), torch.nn.LPPool3d(2, 2)(tz), rtol=1e-10)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_inverts_max_pool(nd):
    shape = (2, 3) + (6,) * nd
    a = RNG.standard_normal(shape)
    tx = torch.tensor(a)
    pool = getattr(TF, f"max_pool{nd}d")
    out, idx = pool(tx, 2, return_indices=True)
    (o, to) = _pair(out.numpy(), True)
    i = tp.tensor(idx.numpy())
    r = getattr(F, f"max_unpool{nd}d")(o, i, 2)
    tr = getattr(TF, f"max_unpool{nd}d")(to, idx, 2)
    _same(r, tr)
    r2 = getattr(tnn, f"MaxUnpool{nd}d")(2)(o, i, output_size=(7,) * nd)
    tr2 = getattr(torch.nn, f"MaxUnpool{nd}d")(2)(to, idx, output_size=(7,) * nd)
    _same(r2, tr2)
    (r2 * tp.tensor(np.arange(r2.numel(), dtype=float).reshape(r2.shape))).sum().backward()
    (tr2 * torch.tensor(np.arange(tr2.numel(), dtype=float).reshape(tr2.shape))).sum().backward()
    _same(o.grad, to.grad)
    with pytest.raises(ValueError, match="invalid output_size"):
        getattr(F, f"max_unpool{nd}d")(o, i, 2, output_size=(20,) * nd)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    w = RNG.standard_normal((7, 3))
    (weight, tweight) = _pair(w, True)
    idx, off = np.array([1, 2, 4, 5, 4, 3, 0]), np.array([0, 2, 2, 5])
    for kw in ({}, {"padding_idx": 4}, {"include_last_offset": True}):
        r = F.embedding_bag(tp.tensor(idx), weight, tp.tensor(off), mode=mode, **kw)
        tr = TF.embedding_bag(torch.tensor(idx), tweight, torch.tensor(off), mode=mode, **kw)
        _same(r, tr, rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    _same(weight.grad, tweight.grad)
    two_d = np.array([[1, 0, 4], [6, 2, 0]])
    _same(F.embedding_bag(tp.tensor(two_d), weight, mode=mode, padding_idx=0),
          TF.embedding_bag(torch.tensor(two_d), tweight, mode=mode, padding_idx=0))


def test_embedding_bag_per_sample_weights_module_and_errors():
    w = RNG.standard_normal((7, 3))
    idx, off, psw = np.array([1, 2, 4, 5]), np.array([0, 3]), RNG.standard_normal(4)
    bag = tnn.EmbeddingBag.from_pretrained(tp.tensor(w), mode="sum")
    tbag = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), mode="sum")
    _same(bag(tp.tensor(idx), tp.tensor(off), tp.tensor(psw)),
          tbag(torch.tensor(idx), torch.tensor(off), torch.tensor(psw)), rtol=1e-12)
    assert repr(bag) == repr(tbag)
    _same_error(lambda: F.embedding_bag(tp.tensor(idx), tp.tensor(w), tp.tensor(off), per_sample_weights=tp.tensor(psw)),
                lambda: TF.embedding_bag(torch.tensor(idx), torch.tensor(w), torch.tensor(off),
                                         per_sample_weights=torch.tensor(psw)))
    _same_error(lambda: F.embedding_bag(tp.tensor(idx), tp.tensor(w)), lambda: TF.embedding_bag(torch.tensor(idx), torch.tensor(w)))
    _same_error(lambda: F.embedding_bag(tp.tensor(idx), tp.tensor(w), tp.tensor(off), mode="median"),
                lambda: TF.embedding_bag(torch.tensor(idx), torch.tensor(w), torch.tensor(off), mode="median"))


def test_meta_shapes_of_the_new_ops():
    m = tp.empty(3, 4, device="meta")
    assert tuple(tp.fmax(m, m).shape) == (3, 4)
    assert tuple(tp.nextafter(m, tp.empty(4, device="meta")).shape) == (3, 4)
    assert tuple(tp.logcumsumexp(m, 1).shape) == (3, 4)
    assert tuple(tp.diff(m, 2).shape) == (3, 2)
    assert tuple(tp.renorm(m, 2, 0, 1.0).shape) == (3, 4)
    assert tuple(F.pdist(m).shape) == (3,)
    assert tp.gcd(tp.empty(2, dtype=tp.int32, device="meta"), tp.empty(2, dtype=tp.int64, device="meta")).dtype == tp.int64


# ---- creation defects ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: np.zeros(3), lambda: np.float64(3), lambda: np.float32(3), lambda: np.int32(3), lambda: np.bool_(True),
    lambda: [np.float64(3)], lambda: [np.float64(3), 1.0], lambda: [np.float32(1), 2], lambda: [np.int32(1), 2],
    lambda: [np.int8(1), np.uint8(2)], lambda: [np.float16(1), True], lambda: [1.0, 2], lambda: [[1, 2], [3, 4]],
], ids=lambda f: repr(f()).replace(" ", ""))
@pytest.mark.parametrize("fn", ["tensor", "as_tensor"])
def test_numpy_values_keep_their_dtype(make, fn):
    ours, theirs = getattr(tp, fn)(make()), getattr(torch, fn)(make())
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_as_tensor_of_a_foreign_float64_tensor_stays_float64():
    assert tp.as_tensor(torch.zeros(3, dtype=torch.float64)).dtype == tp.float64


@pytest.mark.parametrize("make", [lambda: np.arange(12.0)[::3], lambda: np.arange(12.0).reshape(3, 4)[:, 1:3],
                                  lambda: np.arange(12.0).reshape(3, 4).T, lambda: np.arange(6.0)])
def test_from_numpy_storage_spans_the_strided_buffer(make):
    arr = make()
    ours, theirs = tp.from_numpy(arr), torch.from_numpy(arr)
    assert ours.untyped_storage().nbytes == theirs.untyped_storage().nbytes()
    assert ours.storage_offset() == theirs.storage_offset() and ours.stride() == theirs.stride()
    arr[(0,) * arr.ndim] = 42.0  # still shared both ways
    assert ours.flatten()[0].item() == 42.0


# ---- the public surface: out= where torch has it, no names torch lacks -------------------------------------------
_X = np.arange(9.0).reshape(3, 3)
# torch functions whose docstring does not say whether they take out=: the verdict comes from calling them
_OUT_CALLS = {
    "absolute": lambda m, x, o: m.absolute(x, out=o), "arccos": lambda m, x, o: m.arccos(x, out=o),
    "arccosh": lambda m, x, o: m.arccosh(x, out=o), "arcsin": lambda m, x, o: m.arcsin(x, out=o),
    "arcsinh": lambda m, x, o: m.arcsinh(x, out=o), "arctan": lambda m, x, o: m.arctan(x, out=o),
    "arctan2": lambda m, x, o: m.arctan2(x, x, out=o), "arctanh": lambda m, x, o: m.arctanh(x, out=o),
    "argmax": lambda m, x, o: m.argmax(x, out=o.long()), "argmin": lambda m, x, o: m.argmin(x, out=o.long()),
    "clamp_max": lambda m, x, o: m.clamp_max(x, 0.5, out=o), "clamp_min": lambda m, x, o: m.clamp_min(x, 0.5, out=o),
    "detach_copy": lambda m, x, o: m.detach_copy(x, out=o),
    "diag_embed": lambda m, x, o: m.diag_embed(x, out=o), "diagflat": lambda m, x, o: m.diagflat(x, out=o),
    "diagonal_scatter": lambda m, x, o: m.diagonal_scatter(x, x[0], out=o),
    "dist": lambda m, x, o: m.dist(x, x, out=o), "flip": lambda m, x, o: m.flip(x, [0], out=o),
    "index_add": lambda m, x, o: m.index_add(x, 0, m.tensor([0]), x[:1], out=o),
    "index_copy": lambda m, x, o: m.index_copy(x, 0, m.tensor([0]), x[:1], out=o),
    "index_reduce": lambda m, x, o: m.index_reduce(x, 0, m.tensor([0]), x[:1], "prod", out=o),
    "nansum": lambda m, x, o: m.nansum(x, out=o), "prod": lambda m, x, o: m.prod(x, 0, out=o),
    "put": lambda m, x, o: m.put(x, m.tensor([0]), x[0, :1], out=o), "rot90": lambda m, x, o: m.rot90(x, out=o),
    "scatter": lambda m, x, o: m.scatter(x, 0, m.tensor([[0]]), x[:1, :1], out=o),
    "scatter_add": lambda m, x, o: m.scatter_add(x, 0, m.tensor([[0]]), x[:1, :1], out=o),
    "scatter_reduce": lambda m, x, o: m.scatter_reduce(x, 0, m.tensor([[0]]), x[:1, :1], "sum", out=o),
    "select_scatter": lambda m, x, o: m.select_scatter(x, x[0], 0, 0, out=o),
    "slice_scatter": lambda m, x, o: m.slice_scatter(x, x, out=o), "sum": lambda m, x, o: m.sum(x, 0, out=o),
    "take": lambda m, x, o: m.take(x, m.tensor([0]), out=o), "tensordot": lambda m, x, o: m.tensordot(x, x, out=o),
    "true_divide": lambda m, x, o: m.true_divide(x, x, out=o),
    "nuclear_norm": lambda m, x, o: m.nuclear_norm(x, out=o),
    "frobenius_norm": lambda m, x, o: m.frobenius_norm(x, (0, 1), out=o),
    "orgqr": lambda m, x, o: m.orgqr(*m.geqrf(x), out=o),
    # the view ops' *_copy variants
    "alias_copy": lambda m, x, o: m.alias_copy(x, out=o), "t_copy": lambda m, x, o: m.t_copy(x, out=o),
    "as_strided_copy": lambda m, x, o: m.as_strided_copy(x, (2, 2), (1, 2), out=o),
    "expand_copy": lambda m, x, o: m.expand_copy(x[:1], (2, 3), out=o),
    "permute_copy": lambda m, x, o: m.permute_copy(x, (1, 0), out=o),
    "select_copy": lambda m, x, o: m.select_copy(x, 0, 1, out=o),
    "slice_copy": lambda m, x, o: m.slice_copy(x, 1, 0, 2, out=o),
    "squeeze_copy": lambda m, x, o: m.squeeze_copy(x, out=o),
    "transpose_copy": lambda m, x, o: m.transpose_copy(x, 0, 1, out=o),
    "unfold_copy": lambda m, x, o: m.unfold_copy(x, 1, 2, 1, out=o),
    "unsqueeze_copy": lambda m, x, o: m.unsqueeze_copy(x, 0, out=o),
    "view_copy": lambda m, x, o: m.view_copy(x, (9,), out=o),
    "view_as_real_copy": lambda m, x, o: m.view_as_real_copy(m.complex(x, x), out=o),
    "view_as_complex_copy": lambda m, x, o: m.view_as_complex_copy(x[:, :2].contiguous(), out=o),
    "split_copy": lambda m, x, o: m.split_copy(x, 2, out=[o, o.clone()]),
    "split_with_sizes_copy": lambda m, x, o: m.split_with_sizes_copy(x, [1, 2], out=[o, o.clone()]),
    "unbind_copy": lambda m, x, o: m.unbind_copy(x, out=[o, o.clone(), o.clone()]),
}


def _accepts_out(module, name):
    try:
        _OUT_CALLS[name](module, module.tensor(_X), module.empty(0, dtype=module.float64))
    except TypeError as e:
        assert "out" in str(e), e
        return False
    except RuntimeError:  # the keyword was taken; the call failed later (an out dtype check)
        return True
    return True


def _public_out_functions():
    import inspect

    names = []
    for name in sorted(dir(tp)):
        fn = getattr(tp, name)
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        try:
            if "out" in inspect.signature(fn).parameters:
                names.append(name)
        except (TypeError, ValueError):
            continue
    return names


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_out_keyword_exactly_where_torch_has_it():
    unverified, extra = [], []
    for name in _public_out_functions():
        doc = getattr(torch, name).__doc__ or ""
        if "out=" in doc or "out (Tensor" in doc or "out (tuple" in doc:
            continue  # torch documents out=
        if name not in _OUT_CALLS:
            unverified.append(name)
        elif not _accepts_out(torch, name):
            extra.append(name)
    assert not unverified, f"add a call to _OUT_CALLS to check torch's out= for: {unverified}"
    assert not extra, f"torchplug takes out= where torch does not: {extra}"
    for name in _OUT_CALLS:  # and the other way: torchplug rejects it with torch's TypeError
        if not _accepts_out(torch, name):
            with pytest.raises(TypeError, match=f"{name}\\(\\) got an unexpected keyword argument 'out'"):
                _OUT_CALLS[name](tp, tp.tensor(_X), tp.empty(0))


# torchplug's own API (plugins, introspection) and per-backend device-copy methods (t.meta(), t.mps(), as torch
# generates t.<backend>() for a renamed privateuse1 backend)
# (nn_functional_impl: the core module behind torchplug.nn.functional, which the nn plugin imports by name;
# meta: the meta backend's device module, attached on first use like torchplug.cpu/cuda/mps, DESIGN.md section 4)
_OWN_NAMES = {"Backend", "explain", "get_printoptions", "hookspecs", "list_ops", "plugins", "nn_functional_impl",
              "meta", "examples"}
_OWN_METHODS = {"meta", "mps"}


def test_no_public_names_torch_lacks():
    extra = sorted(n for n in dir(tp) if not n.startswith("_") and not hasattr(torch, n) and n not in _OWN_NAMES)
    assert not extra, f"public torchplug names torch does not have: {extra}"
    methods = sorted(n for n in dir(tp.Tensor)
                     if not n.startswith("_") and not hasattr(torch.Tensor, n) and n not in _OWN_METHODS)
    assert not methods, f"public Tensor methods torch does not have: {methods}"
    assert tp.ops.aten.slice.Tensor(tp.arange(6), 0, 1, 4).tolist() == [1, 2, 3]  # still reachable as an aten op


# ---- the meta backend raises what torch's cpu kernels raise ----------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L, mk: L.argmax(mk(2, 3, dtype="bool")), lambda L, mk: L.argmin(mk(2, 3, dtype="bool"), 1, True),
    lambda L, mk: L.amin(mk(0, 3)), lambda L, mk: L.amax(mk(0, 3), []), lambda L, mk: L.amax(mk(0, 3), 0),
    lambda L, mk: L.argmax(mk(0, 3), 0),
])
def test_meta_reduction_errors_match_torch_cpu(call):
    def maker(L, device):
        return lambda *shape, dtype="float32": L.empty(*shape, dtype=getattr(L, dtype), device=device)

    _same_error(lambda: call(tp, maker(tp, "meta")), lambda: call(torch, maker(torch, "cpu")))


def test_meta_any_all_shapes_match_torch():
    for fn in (lambda L, m: L.any(m, 1), lambda L, m: L.any(m, (0, 2), True), lambda L, m: L.all(m.to(L.uint8), 0)):
        ours = fn(tp, tp.empty(2, 3, 4, device="meta"))
        theirs = fn(torch, torch.empty(2, 3, 4, device="meta"))
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype)[-5:] == str(theirs.dtype)[-5:]


# ---- float8: casts and the few kernels torch has work; arithmetic raises torch's error --------------------------
_FLOAT8_OPS = {
    "add": lambda L, x, y: x + y, "add_scalar": lambda L, x, y: x + 1, "sub": lambda L, x, y: x - y,
    "div": lambda L, x, y: x / y, "neg": lambda L, x, y: -x, "exp": lambda L, x, y: x.exp(),
    "sqrt": lambda L, x, y: x.sqrt(), "sigmoid": lambda L, x, y: x.sigmoid(), "sum": lambda L, x, y: x.sum(),
    "mean": lambda L, x, y: x.mean(), "prod": lambda L, x, y: x.prod(), "amax": lambda L, x, y: x.amax(),
    "max": lambda L, x, y: x.max(), "argmax": lambda L, x, y: x.argmax(), "lt": lambda L, x, y: x < y,
    "pow": lambda L, x, y: x ** 2, "relu": lambda L, x, y: x.relu(), "mul_scalar": lambda L, x, y: x * 2,
    "add_": lambda L, x, y: x.clone().add_(y),
    # what torch does support
    "mul": lambda L, x, y: x * y, "mul_": lambda L, x, y: x.clone().mul_(y), "abs": lambda L, x, y: x.abs(),
    "eq": lambda L, x, y: x == y, "ne": lambda L, x, y: x != y, "to_float": lambda L, x, y: x.float(),
    "from_float": lambda L, x, y: L.tensor([1.5, -2.0, 300.0]).to(L.float8_e5m2), "cat": lambda L, x, y: L.cat([x, y]),
    "clone": lambda L, x, y: x.clone(), "fill_": lambda L, x, y: x.clone().fill_(2), "flip": lambda L, x, y: x.flip(0),
    "mm": lambda L, x, y: x @ y, "addmm": lambda L, x, y: L.addmm(x, x, y), "bmm": lambda L, x, y: L.bmm(x[None], y[None]),
}


@pytest.mark.parametrize("name", sorted(_FLOAT8_OPS))
@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_arithmetic_raises_and_casts_work_as_in_torch(name, dtype):
    def run(L):
        x = L.tensor([[1.0, -2.0], [0.5, 3.0]]).to(getattr(L, dtype))
        y = L.tensor([[2.0, 0.25], [-1.0, 1.5]]).to(getattr(L, dtype))
        return _FLOAT8_OPS[name](L, x, y)

    try:
        theirs = run(torch)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as ours:
            run(tp)
        assert str(ours.value) == str(e)
        return
    ours = run(tp)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


# ---- deterministic algorithms fill uninitialized memory ----------------------------------------------------
@pytest.fixture
def deterministic():
    tp.use_deterministic_algorithms(True)
    torch.use_deterministic_algorithms(True)
    yield
    tp.use_deterministic_algorithms(False)
    torch.use_deterministic_algorithms(False)
    tp.utils.deterministic.fill_uninitialized_memory = True
    torch.utils.deterministic.fill_uninitialized_memory = True


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "complex64", "int8", "uint8",
                                   "int32", "int64", "bool", "float8_e5m2"])
def test_empty_is_filled_under_deterministic_algorithms(deterministic, dtype):
    for make in (lambda L: L.empty(2, 3, dtype=getattr(L, dtype)),
                 lambda L: L.empty_like(L.ones(3, dtype=getattr(L, dtype))),
                 lambda L: L.empty_strided((2, 2), (1, 2), dtype=getattr(L, dtype)),
                 lambda L: L.ones(1, dtype=getattr(L, dtype)).new_empty(4)):
        ours, theirs = make(tp), make(torch)
        if dtype.startswith(("float8", "bfloat16")):
            ours, theirs = ours.float(), theirs.float()
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_resize_fills_the_added_part_under_deterministic_algorithms(deterministic):
    ours, theirs = tp.ones(2), torch.ones(2)
    ours.resize_(5)
    theirs.resize_(5)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_fill_uninitialized_memory_off_leaves_memory_alone(deterministic):
    from torchplug.utils.deterministic import fill_if_deterministic

    tp.utils.deterministic.fill_uninitialized_memory = False
    t = tp.ones(3)
    assert fill_if_deterministic(t).tolist() == [1.0, 1.0, 1.0]
    tp.utils.deterministic.fill_uninitialized_memory = True
    assert np.isnan(fill_if_deterministic(t).numpy()).all()
    tp.use_deterministic_algorithms(False)
    assert fill_if_deterministic(tp.ones(2)).tolist() == [1.0, 1.0]


def test_embedding_bag_scale_grad_by_freq_divides_by_the_batch_frequency():
    # torch's F.embedding applies the documented rule (gradient / frequency of the index in the batch);
    # torch's embedding_bag backward does not (e.g. index 5 of [3, 3, 5, 0] gets 0.5): torchplug follows
    # the documented rule in both, so it is compared with F.embedding's gradient here
    w = RNG.standard_normal((7, 3))
    idx = np.array([3, 3, 5, 0, 1, 3])
    weight, tweight = tp.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    F.embedding_bag(tp.tensor(idx), weight, tp.tensor([0, 1, 3]), mode="sum", scale_grad_by_freq=True).sum().backward()
    TF.embedding(torch.tensor(idx), tweight, scale_grad_by_freq=True).sum().backward()
    _same(weight.grad, tweight.grad)


def test_nn_functional_names_exist_in_torch():
    extra = sorted(n for n in dir(F) if not n.startswith("_") and not hasattr(TF, n))
    assert not extra, f"torchplug.nn.functional names torch.nn.functional does not have: {extra}"


def test_cov_and_corrcoef_of_complex_inputs():
    a = RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))
    (x, tx) = _pair(a, True)
    r, tr = tp.cov(x), torch.cov(tx)
    _same(r, tr, rtol=1e-12)
    r.abs().sum().backward()
    tr.abs().sum().backward()
    _same(x.grad, tx.grad, rtol=1e-10)
    _same(tp.corrcoef(tp.tensor(a)), torch.corrcoef(torch.tensor(a)), rtol=1e-12)


def test_ldexp_gradients():
    (x, tx), (e, te) = _pair(RNG.standard_normal((3, 4)), True), _pair(RNG.integers(-3, 4, (4,)).astype(float), True)
    r, tr = tp.ldexp(x, e), torch.ldexp(tx, te)
    _same(r, tr, rtol=1e-12)
    r.sum().backward()
    tr.sum().backward()
    _same(x.grad, tx.grad, rtol=1e-12)
    _same(e.grad, te.grad, rtol=1e-12)


def test_logcumsumexp_half_rounds_once_and_complex_agrees_up_to_2_pi_i():
    a = np.array([1.0, 2.0, 3.0, -0.5, 4.25])
    _same(tp.logcumsumexp(tp.tensor(a).half(), 0), torch.logcumsumexp(torch.tensor(a).half(), 0), rtol=0, atol=0)
    _same(tp.logcumsumexp(tp.tensor(a).bfloat16(), 0).float(), torch.logcumsumexp(torch.tensor(a).bfloat16(), 0).float(),
          rtol=0, atol=0)
    # the scan groups the terms as a tree, not left to right: each partial sum is a logarithm of the
    # same value, but its imaginary part may differ from torch's by a multiple of 2*pi
    z = RNG.standard_normal(7) + 1j * RNG.standard_normal(7) * 3
    ours, theirs = tp.logcumsumexp(tp.tensor(z), 0).numpy(), torch.logcumsumexp(torch.tensor(z), 0).numpy()
    np.testing.assert_allclose(np.exp(ours), np.exp(theirs), rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("idx", [[1, 7], [1, -1]])
def test_embedding_bag_out_of_range_index_errors(dtype, mode, idx):
    _same_error(lambda: F.embedding_bag(tp.tensor(idx), tp.ones(4, 3, dtype=getattr(tp, dtype)), tp.tensor([0]), mode=mode),
                lambda: TF.embedding_bag(torch.tensor(idx), torch.ones(4, 3, dtype=getattr(torch, dtype)),
                                         torch.tensor([0]), mode=mode))


def test_max_unpool_invalid_index_error():
    for nd in (2, 3):
        shape = (1, 1) + (2,) * nd
        _same_error(lambda: getattr(F, f"max_unpool{nd}d")(tp.ones(*shape), tp.full(shape, 99), 2),
                    lambda: getattr(TF, f"max_unpool{nd}d")(torch.ones(*shape), torch.full(shape, 99), 2))


@pytest.mark.parametrize("call", [
    lambda L: L.ones(3, 2).index_reduce(0, L.tensor([5]), L.ones(1, 2), "prod"),
    lambda L: L.ones(3, 2).index_reduce(0, L.tensor([-1]), L.ones(1, 2), "prod"),
    lambda L: L.ones(3, 2).index_reduce(0, L.tensor([[0]]), L.ones(1, 2), "prod"),
    lambda L: L.tensor(2.0).index_reduce(0, L.tensor([0]), L.tensor([3.0]), "prod"),
    lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0]), L.ones(1, 3), "prod"),
    lambda L: L.diff(L.ones(2, 3), dim=0, prepend=L.ones(1, 2)),
    lambda L: L.logcumsumexp(L.tensor([1.0, 2.0]), 0, out=L.empty(2, dtype=L.float64)),
    lambda L: L.dist(L.ones(2), L.zeros(2), 1 + 1j),
])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_more_errors_match_torch(call):
    _same_error(lambda: call(tp), lambda: call(torch))
