"""Forward-mode AD (torchplug.autograd.forward_ad) compared with torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug
import torchplug.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
with warnings.catch_warnings():  # torch's first make_dual scripts its jvp decompositions (a jit DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch.autograd.forward_ad  # noqa: E402
    import torch._decomp.decompositions_for_jvp  # noqa: E402,F401


def _pair(shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    return torchplug.tensor(a), torch.tensor(a)


def _jvp_both(fn, primals, tangents):
    """fn's output tangent under torchplug and torch (fn receives the module and the dual tensors)."""
    outs = []
    for mod, fw, idx in ((torchplug, fwAD, 0), (torch, torch.autograd.forward_ad, 1)):
        with fw.dual_level():
            duals = [fw.make_dual(p[idx], t[idx]) for p, t in zip(primals, tangents)]
            out = fn(mod, *duals)
            outs.append(fw.unpack_dual(out))
    return outs


def _close(a, b, atol=1e-10):
    assert a is not None and b is not None
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=1e-9, atol=atol)


def test_basic_arithmetic_matches_torch():
    x, t = _pair((3, 4), 0), _pair((3, 4), 1)
    y, s = _pair((3, 4), 2), _pair((3, 4), 3)
    mine, ref = _jvp_both(lambda T, a, b: ((a * b + a / (b * b + 1)) - 2 * a).exp().sum(1), [x, y], [t, s])
    _close(mine.primal, ref.primal)
    _close(mine.tangent, ref.tangent)


def test_dual_level_errors_match_torch():
    x = torchplug.ones(3, dtype=torchplug.float64)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match="different size than that of the original"):
            fwAD.make_dual(x, torchplug.ones(2, dtype=torchplug.float64))
        with pytest.raises(ValueError, match="Expected primal to be floating point"):
            fwAD.make_dual(torchplug.arange(3), torchplug.arange(3))
        with pytest.raises(ValueError, match="Expected tangent to be floating point"):
            fwAD.make_dual(x, torchplug.arange(3))
        with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
            fwAD.make_dual(x, x, level=3)
        with pytest.raises(RuntimeError, match="not the last one"):
            fwAD.exit_dual_level(level=1)
        with pytest.raises(RuntimeError, match="already has a forward gradient at the same level 0"):
            fwAD.make_dual(fwAD.make_dual(x, x), x)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


def test_unpack_and_level_exit():
    x = torchplug.randn(3, dtype=torchplug.float64)
    t = torchplug.ones(3, dtype=torchplug.float64)
    assert fwAD.unpack_dual(x).primal is x and fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, t)
        p, tan = fwAD.unpack_dual(d)
        assert tan is t and p._base is x
        assert fwAD.unpack_dual(p).tangent is None  # the primal view shares no tangent
        assert fwAD.unpack_dual(d, level=0).tangent is t
        assert not d.requires_grad and d.grad_fn is None
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(d).__class__._fields == ("primal", "tangent")
    assert fwAD.unpack_dual(d).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(d).tangent is None  # tangents do not survive their level


def test_no_grad_keeps_forward_ad_and_inference_mode_drops_it():
    x = torchplug.randn(3, dtype=torchplug.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torchplug.ones(3, dtype=torchplug.float64))
        with torchplug.no_grad():
            y = d.sin()
        _close(fwAD.unpack_dual(y).tangent, torch.tensor(x.numpy()).cos())
        w = torchplug.ones(3, dtype=torchplug.float64, requires_grad=True)
        with torchplug.no_grad():
            w.add_(1)  # a leaf written under no_grad: allowed, and no history
            z = d * w
        assert z.grad_fn is None and w.grad_fn is None
        with torchplug.set_grad_enabled(False):
            assert fwAD.unpack_dual(d.exp()).tangent is not None
        with torchplug.inference_mode():
            assert fwAD.unpack_dual(d.sin()).tangent is None  # torch: inference mode stops forward AD
        # under no_grad an input that requires grad is no refused one (nll_loss's weight), and the
        # tangents computed through backward formulas carry no history
        target = torchplug.tensor([0, 2, 1])
        weight = torchplug.tensor([1.0, 2.0, 0.5], dtype=torchplug.float64, requires_grad=True)
        with torchplug.no_grad():
            logits = d.unsqueeze(0).expand(3, 3) * torchplug.arange(1.0, 4.0, dtype=torchplug.float64).unsqueeze(1)
            loss = torchplug.nn.functional.cross_entropy(logits, target, weight=weight)
            mse = torchplug.nn.functional.mse_loss(d, weight)
        for out in (loss, mse):
            assert not out.requires_grad and not fwAD.unpack_dual(out).tangent.requires_grad
    a = torchplug.ones(2, requires_grad=True)
    with torchplug.no_grad():
        assert (a * 2).grad_fn is None  # no level: grad mode masks autograd as before


def test_views_share_the_tangent():
    x, t = _pair((4, 3), 0), _pair((4, 3), 1)
    mine, ref = _jvp_both(lambda T, a: a.t()[1:, ::2].reshape(-1), [x], [t])
    _close(mine.tangent, ref.tangent)
    with fwAD.dual_level():
        d = fwAD.make_dual(x[0], t[0])
        v = d[1:]
        assert fwAD.unpack_dual(v).tangent._base is t[0]


def test_inplace_updates_tangent_of_base_and_views():
    def fn(T, a, b):
        base = T.zeros(5, 3, dtype=T.float64)
        view = base[1:]
        view.copy_(a)  # base had no tangent: it gets one, zero outside the view
        base.mul_(b.sum())
        row = base[2]
        row.add_(b[0] * 3)
        return base

    mine, ref = _jvp_both(fn, [_pair((4, 3), 0), _pair((4, 3), 2)], [_pair((4, 3), 1), _pair((4, 3), 3)])
    _close(mine.primal, ref.primal)
    _close(mine.tangent, ref.tangent)


@pytest.mark.parametrize("op", ["floor_divide", "heaviside"])
def test_op_without_forward_formula_fails_loudly(op):
    # the ops the backward coverage test exempts (torch has no formula either): torch's error, for both
    for T in (torchplug, torch):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.ones(3, dtype=T.float64), T.ones(3, dtype=T.float64))
            with pytest.raises(NotImplementedError, match=f"Trying to use forward AD with aten::{op} that does not "
                                                          "support it"):
                getattr(T, op)(d, d)


def test_backward_through_tangent():
    # reverse over forward: the tangent is an ordinary differentiable function of the primal
    xs, ts = _pair((3,), 0), _pair((3,), 1)
    grads = []
    for mod, fw, idx in ((torchplug, fwAD, 0), (torch, torch.autograd.forward_ad, 1)):
        x = xs[idx].clone().requires_grad_(True)
        with fw.dual_level():
            d = fw.make_dual(x, ts[idx])
            tan = fw.unpack_dual((d.sin() * d).sum()).tangent
        tan.backward()
        grads.append(x.grad)
    _close(grads[0], grads[1])


def _both(build):
    """``build(T)`` under torchplug and torch; results as nested lists of numpy arrays / strings."""

    def conv(x):
        if isinstance(x, (list, tuple)):
            return [conv(v) for v in x]
        if hasattr(x, "detach"):
            return np.asarray(x.detach().numpy())
        return x

    return conv(build(torchplug)), conv(build(torch))


def _assert_same(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    else:
        assert a == b


def _functions(T):
    class Mul(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.seen_tangent = T.autograd.forward_ad.unpack_dual(x).tangent is not None
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k, x + 1

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            ctx.got = (tx is not None, ty is not None and not bool(ty.any()), tk)
            return (tx * y + x * ty) * ctx.k, tx

    class Sin(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return tx * x.cos()

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not called")

    return Mul, Sin


def test_custom_function_jvp_matches_torch():
    def build(T):
        fw = T.autograd.forward_ad
        Mul, Sin = _functions(T)
        x = T.tensor([0.1, 0.5, -0.3], dtype=T.float64)
        y = T.tensor([1.0, 2.0, 3.0], dtype=T.float64)
        with fw.dual_level():
            d = fw.make_dual(x, T.tensor([1.0, -1.0, 0.5], dtype=T.float64))
            a, b = Mul.apply(d, y, 3.0)
            node_flags = []
            s = Sin.apply(d * 2)
            xr = x.clone().requires_grad_(True)
            sr = Sin.apply(fw.make_dual(xr, T.ones(3, dtype=T.float64)))
            return [fw.unpack_dual(a).tangent, fw.unpack_dual(b).tangent, fw.unpack_dual(s).tangent,
                    fw.unpack_dual(sr).tangent, sr.requires_grad, node_flags]

    _assert_same(*_both(build))


def test_saved_output_of_custom_function_carries_its_tangent_into_backward():
    # forward-over-reverse: the backward reads the saved output, whose tangent the jvp gave it
    def build(T):
        fw = T.autograd.forward_ad

        class Exp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.exp()
                ctx.save_for_backward(result)
                ctx.save_for_forward(result)
                return result

            @staticmethod
            def backward(ctx, g):
                return g * ctx.saved_tensors[0]

            @staticmethod
            def jvp(ctx, t):
                return t * ctx.saved_tensors[0]

        x = T.tensor([0.1, 0.5, -0.3], dtype=T.float64)
        with fw.dual_level():
            d = fw.make_dual(x.clone().requires_grad_(True), T.tensor([1.0, -1.0, 0.5], dtype=T.float64))
            y = Exp.apply(d)
            g, = T.autograd.grad(y.sum(), d, create_graph=True)
            return [fw.unpack_dual(y).tangent, g, fw.unpack_dual(g).tangent]

    _assert_same(*_both(build))


def test_custom_function_jvp_errors_match_torch():
    def build(T):
        fw = T.autograd.forward_ad
        messages = []

        class NoJvp(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class TooFew(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def jvp(ctx, t):
                return t * 2

        class WrongSize(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def jvp(ctx, t):
                return t[:1]

        with fw.dual_level():
            d = fw.make_dual(T.ones(3, dtype=T.float64), T.ones(3, dtype=T.float64))
            for fn in (NoJvp, TooFew, WrongSize):
                try:
                    fn.apply(d)
                    messages.append("no error")
                except (RuntimeError, NotImplementedError) as e:
                    messages.append(f"{type(e).__name__}: {str(e).split('.')[0]}")
        return messages

    _assert_same(*_both(build))


def _functional_calls(T):
    F = T.autograd.functional
    x = T.tensor([0.3, -0.7, 1.1], dtype=T.float64)
    y = T.tensor([[0.5, 1.5], [2.0, -1.0]], dtype=T.float64)
    v = T.tensor([1.0, 2.0, -0.5], dtype=T.float64)

    def f(a):
        return (a.sin() * a.exp()).cumsum(0)

    def g(a, b):
        return (a[:2] * b).sum(0).tanh() * a.pow(2).sum(), a.sum()

    def h(a):
        return (a ** 3).sum() * a.prod()

    return [
        F.jvp(f, x, v), F.jvp(g, (x, y), (v, y * 2)),
        F.hvp(h, x, v), F.hvp(lambda a, b: (a[:2] ** 2 * b).sum(), (x, y), (v, y)),
        F.jacobian(f, x, strategy="forward-mode", vectorize=True),
        F.jacobian(g, (x, y), strategy="forward-mode", vectorize=True),
        F.jacobian(lambda a, b: a * b.sum(), (x, y), strategy="forward-mode", vectorize=True),
        F.hessian(h, x, outer_jacobian_strategy="forward-mode", vectorize=True),
    ]


def test_functional_jvp_hvp_jacobian_match_torch():
    _assert_same(*_both(_functional_calls))


def test_functional_errors_match_torch():
    def build(T):
        F = T.autograd.functional
        x = T.tensor([0.3, -0.7, 1.1], dtype=T.float64)
        v = T.tensor([1.0, 2.0, -0.5], dtype=T.float64)

        def f(a):
            return a.sin()

        calls = (lambda: F.jvp(f, x, v[:2]), lambda: F.jvp(f, (x, x), (v,)), lambda: F.jvp(f, x),
                 lambda: F.jvp(lambda a: a * 0 + 1, x, v, strict=True),
                 lambda: F.jvp(lambda a: (a.sin(), T.ones(2)), x, v, strict=True),
                 lambda: F.jvp(lambda a: a.detach() * 2, x, v, strict=True),
                 lambda: F.jacobian(f, x, strategy="forward-mode"), lambda: F.jacobian(f, x, strategy="x"),
                 lambda: F.jacobian(f, x, strategy="forward-mode", vectorize=True, create_graph=True),
                 lambda: F.jacobian(f, x, strategy="forward-mode", vectorize=True, strict=True),
                 lambda: F.hvp(f, x, v), lambda: F.hvp(lambda a: a.sum(), x, v, strict=True),
                 lambda: F.hessian(f, x, outer_jacobian_strategy="y"))
        out = []
        for call in calls:
            try:
                call()
                out.append("no error")
            except Exception as e:  # noqa: BLE001 - the type and message beginning are compared
                out.append(f"{type(e).__name__}: {' '.join(str(e).split()[:6])}")
        return out

    _assert_same(*_both(build))


def test_functional_create_graph_differentiates_the_products():
    def build(T):
        F = T.autograd.functional
        v = T.tensor([1.0, 2.0, -0.5], dtype=T.float64)
        grads = []
        for fn in (lambda a: F.jvp(lambda z: z.sin() * z, a, v, create_graph=True)[1].sum(),
                   lambda a: F.hvp(lambda z: (z.sin() * z).sum(), a, v, create_graph=True)[1].sum()):
            xr = T.tensor([0.3, -0.7, 1.1], dtype=T.float64, requires_grad=True)
            fn(xr).backward()
            grads.append(xr.grad)
        return grads

    _assert_same(*_both(build))


def test_nested_levels_for_transforms():
    # functional.jvp inside a user's level runs in a level of its own
    x = torchplug.tensor([0.3, -0.7], dtype=torchplug.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torchplug.ones(2, dtype=torchplug.float64))
        _, jv = torchplug.autograd.functional.jvp(lambda a: a.exp() * d, x, torchplug.ones(2, dtype=torchplug.float64))
        np.testing.assert_allclose(jv.numpy(), (x.exp() * x).numpy())


def test_nested_levels_give_second_derivatives():
    # the level stack torch.func's nested jvp builds on: the inner tangent is differentiated by the outer level
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    x = torchplug.tensor([0.3, -0.7, 1.2], dtype=torchplug.float64)
    outer = enter_level()
    try:
        xo = x.view_as(x)
        set_tangent(xo, outer, torchplug.ones(3, dtype=torchplug.float64))
        inner = enter_level()
        try:
            xi = xo.view_as(xo)
            set_tangent(xi, inner, torchplug.ones(3, dtype=torchplug.float64))
            y = xi.sin() * xi
            first = tangent_of(y, inner)
            assert tangent_of(first, inner) is None  # no perturbation confusion
        finally:
            exit_level(inner)
        second = tangent_of(first, outer)
    finally:
        exit_level(outer)
    xt = torch.tensor(x.numpy())
    np.testing.assert_allclose(first.detach().numpy(), (xt.cos() * xt + xt.sin()).numpy(), rtol=1e-12)
    np.testing.assert_allclose(second.numpy(), (2 * xt.cos() - xt * xt.sin()).numpy(), rtol=1e-12)


def test_make_dual_and_unpack_keep_the_other_levels_tangents():
    from torchplug_autograd._forward import enter_level, exit_level

    x = torchplug.tensor([0.3, -0.7, 1.2], dtype=torchplug.float64)
    outer = enter_level()
    try:
        o = fwAD.make_dual(x, torchplug.ones(3, dtype=torchplug.float64), level=0)
        inner = enter_level()
        try:
            d = fwAD.make_dual(o[1:], torchplug.full((2,), 2.0, dtype=torchplug.float64), level=1)
            y = d * d
            primal, tangent = fwAD.unpack_dual(y, level=1)
            np.testing.assert_allclose(tangent.detach().numpy(), (4 * x[1:]).numpy())
            # the primal keeps the outer tangent (d(x^2) = 2x along ones), the inner tangent its own (8 along ones)
            np.testing.assert_allclose(fwAD.unpack_dual(primal, level=0).tangent.numpy(), (2 * x[1:]).numpy())
            assert fwAD.unpack_dual(primal, level=1).tangent is None
            np.testing.assert_allclose(fwAD.unpack_dual(tangent, level=0).tangent.numpy(), [4.0, 4.0])
        finally:
            exit_level(inner)
    finally:
        exit_level(outer)


def test_explain_and_doctor_show_the_forward_ad_layer():
    from torchplug.__main__ import doctor_report

    x = torchplug.ones(2, dtype=torchplug.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, x)
        why = str(torchplug.explain("mul", d, x))
        report = doctor_report()
    # a dual tensor reaches the autograd kernel, whose name says how it computes the tangent
    assert "arg 'self': ['AutocastCPU', 'AutogradCPU'" in why
    assert "chosen:    AutogradCPU -> torchplug_autograd:autograd[aten::mul] (forward AD: elementwise)" in why
    assert "registered by plugin 'autograd'" in why
    assert "Forward AD:\n  inside the autograd plugin's Autograd kernels" in report
    assert "1 level(s) active" in report
    kernels = torchplug.ops.aten.mm.default.kernels()["Autograd"][0]
    assert "(forward AD: rule)" in kernels


def _run(code, **env):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=120)


def test_blocked_autograd_plugin_makes_forward_ad_fail_clearly():
    code = (
        "import torchplug as tp\n"
        "assert (tp.ones(3) * 2).sum().item() == 6.0\n"
        "try:\n"
        "    tp.autograd.forward_ad.dual_level\n"
        "except AttributeError as e:\n"
        "    print('ATTR', e)\n"
        "from torchplug.__main__ import doctor_report\n"
        "print(doctor_report().split('Forward AD:')[1])\n"
    )
    out = _run(code, TORCHPLUG_BLOCK_PLUGINS="autograd")
    assert out.returncode == 0, out.stderr
    assert "ATTR torchplug.autograd is provided by the 'autograd' plugin, which is blocked by " \
           "TORCHPLUG_BLOCK_PLUGINS" in out.stdout
    assert "(part of the autograd plugin, which is blocked by TORCHPLUG_BLOCK_PLUGINS)" in out.stdout


EDGE = {
    # in-place view methods: the tangent takes the same view
    "t_": lambda T, d: d.t_(),
    "transpose_": lambda T, d: d.transpose_(0, 1) * 1,
    "unsqueeze_": lambda T, d: d.unsqueeze_(0),
    "squeeze_": lambda T, d: d[:1].squeeze_(0),
    "as_strided_": lambda T, d: d.as_strided_((3,), (2,)),
    # what drops or keeps the tangent
    "detach": lambda T, d: d.detach(),
    "data": lambda T, d: d.data,
    "requires_grad_false": lambda T, d: d.requires_grad_(False) * 2,
    "zero_": lambda T, d: d.zero_(),
    "fill_": lambda T, d: d.fill_(3.0),
    "uniform_": lambda T, d: d.uniform_() * 0,
    "index_put_": lambda T, d: d.index_put_((T.tensor([0]),), T.tensor([9.0, 9.0, 9.0], dtype=T.float64)),
    "masked_fill_": lambda T, d: d.masked_fill_(d > 0.3, 2.0),
    "setitem": lambda T, d: (d.__setitem__((0, 1), 5.0), d)[1],
    "setitem_dual_into_plain": lambda T, d: (lambda z: (z.__setitem__(slice(0, 1), d[1:]), z)[1])(
        T.zeros(2, 3, dtype=T.float64)),
    "write_through_view": lambda T, d: (lambda v: (v.mul_(2), d)[1])(d[0]),
    "to_float32": lambda T, d: d.float(),
    "contiguous": lambda T, d: d.t().contiguous(),
    "where_scalar": lambda T, d: T.where(d > 0.3, d, 0.0),
    "norm": lambda T, d: d.norm(),
    "einsum": lambda T, d: T.einsum("ij,kj->ik", d, d),
    "sort": lambda T, d: d.sort(dim=1, descending=True)[0],
    "linear": lambda T, d: T.nn.functional.linear(d, d, d[:, 0]),
    "conv1d": lambda T, d: T.nn.functional.conv1d(d.unsqueeze(0), d.t().unsqueeze(-1)),
    "max_pool1d": lambda T, d: T.nn.functional.max_pool1d(d.unsqueeze(0), 2),
    "broadcast_add_": lambda T, d: T.zeros(3, dtype=T.float64).add_(d[0]),
}


@pytest.mark.parametrize("name", sorted(EDGE))
def test_views_inplace_and_detach_edges_match_torch(name):
    def build(T):
        fw = T.autograd.forward_ad
        x = T.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], dtype=T.float64)
        t = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=T.float64)
        with fw.dual_level():
            p, tan = fw.unpack_dual(EDGE[name](T, fw.make_dual(x.clone(), t.clone())))
            return [p, "none" if tan is None else tan]

    mine, ref = _both(build)
    if name == "to_float32":
        np.testing.assert_allclose(mine[1], ref[1])
    else:
        _assert_same(mine, ref)


def test_out_variant_refuses_forward_ad_like_torch():
    def build(T):
        fw = T.autograd.forward_ad
        out = []
        with fw.dual_level():
            d = fw.make_dual(T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64))
            for call in (lambda: T.add(d, 1, out=T.empty(2, dtype=T.float64)),
                         lambda: T.sin(d, out=T.empty(2, dtype=T.float64))):
                try:
                    call()
                except NotImplementedError as e:
                    out.append(str(e))
        return out

    _assert_same(*_both(build))


def test_custom_op_with_backward_formula_gives_no_tangent_like_torch():
    def build(T):
        lib_name = "fwdtest_" + T.__name__

        @T.library.custom_op(f"{lib_name}::np_sin", mutates_args=(), schema="(Tensor x) -> Tensor")
        def np_sin(x):
            return T.from_numpy(np.sin(x.numpy()))

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            return g * ctx.saved_tensors[0].cos()

        np_sin.register_autograd(backward, setup_context=setup_context)
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(T.ones(2, dtype=T.float64), T.ones(2, dtype=T.float64))
            p, tan = fw.unpack_dual(np_sin(d))
        return [p, "none" if tan is None else tan]

    _assert_same(*_both(build))


def test_gradcheck_checks_forward_ad():
    from torchplug.autograd import GradcheckError, gradcheck, gradgradcheck

    x = torchplug.tensor([0.3, -0.7, 1.2], dtype=torchplug.float64, requires_grad=True)
    z = torchplug.tensor([0.5 + 0.2j, -0.1 + 1.0j], dtype=torchplug.complex128, requires_grad=True)
    assert gradcheck(lambda a: (a.sin() * a.exp()).cumsum(0), (x,), check_forward_ad=True)
    assert gradcheck(lambda a: (a * a.conj()).real + a.abs(), (z,), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(lambda a: a.tanh() * a, (x,), check_fwd_over_rev=True)

    class WrongJvp(torchplug.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3

    assert gradcheck(WrongJvp.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for output 0 with "
                                             "respect to input 0"):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert not gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, raise_exception=False)


def test_gradgradcheck_detects_a_wrong_double_backward():
    # (it used to evaluate the gradient function under no_grad, found no outputs and compared nothing)
    from torchplug.autograd import GradcheckError, gradcheck, gradgradcheck

    class Cube(torchplug.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 3 * (a * a).detach()  # right values, but its own derivative in a is lost

    x = torchplug.tensor([0.3, -0.7], dtype=torchplug.float64, requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradgradcheck(Cube.apply, (x,))


def test_no_grad_tangents_match_torch():
    def build(T):
        fw = T.autograd.forward_ad
        x = T.tensor([0.3, -0.7, 1.1], dtype=T.float64)
        target = T.tensor([0, 2, 1])
        weight = T.tensor([1.0, 2.0, 0.5], dtype=T.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, T.tensor([1.0, -2.0, 0.5], dtype=T.float64))
            with T.no_grad():
                logits = d.unsqueeze(0).expand(3, 3) * T.arange(1.0, 4.0, dtype=T.float64).unsqueeze(1)
                outs = [T.nn.functional.cross_entropy(logits, target, weight=weight),
                        T.nn.functional.mse_loss(d, weight), T.nn.functional.layer_norm(d, (3,)), d.prod()]
            return [fw.unpack_dual(o).tangent for o in outs]

    _assert_same(*_both(build))


NESTED = {
    "var": lambda T, a: a.var(),
    "prod": lambda T, a: a.prod(),
    "logsumexp": lambda T, a: a.logsumexp(0),
    "norm": lambda T, a: T.linalg.vector_norm(a),
    "cumprod": lambda T, a: a.cumprod(0).sum(),
    "sort": lambda T, a: (a.sort().values * T.arange(1.0, 5.0, dtype=T.float64)).sum(),
    "amax_softmax": lambda T, a: (a.softmax(0) * a).sum() + a.amax(),
    "layer_norm": lambda T, a: (T.nn.functional.layer_norm(a, (4,)) * a).sum(),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_levels_give_hessian_vector_products(name):
    # u^T H v by a jvp inside a jvp (how torch.func nests forward levels), on torchplug's level stack
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    fn = NESTED[name]
    x = np.array([0.3, -0.7, 1.1, 0.5])
    u, v = np.array([1.0, 0.5, -1.0, 2.0]), np.array([0.2, -1.0, 0.4, 1.5])
    X, U, V = (torchplug.tensor(a) for a in (x, u, v))
    outer = enter_level()
    try:
        xo = X.view_as(X)
        set_tangent(xo, outer, U)
        inner = enter_level()
        try:
            xi = xo.view_as(xo)
            set_tangent(xi, inner, V)
            first = tangent_of(fn(torchplug, xi), inner)
        finally:
            exit_level(inner)
        second = tangent_of(first, outer)
    finally:
        exit_level(outer)
    # reference: u^T H v by torch's double backward (torch.func's own jvp-of-jvp is wrong through
    # layer_norm: -3.72 for the sum of a layer norm, whose derivatives are all 0)
    tx = torch.tensor(x, requires_grad=True)
    (g,) = torch.autograd.grad(fn(torch, tx), tx, create_graph=True)
    gv = (g * torch.tensor(v)).sum()
    h = torch.autograd.grad(gv, tx, allow_unused=True)[0] if gv.requires_grad else None
    ref = 0.0 if h is None else float((h * torch.tensor(u)).sum())
    got = 0.0 if second is None else float(second)  # (no tangent: the first derivative is constant)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_nested_levels_under_no_grad_keep_second_derivatives():
    # under no_grad the double-vjp route drops the primals' reverse history, not their outer tangents
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    def second(x, grad_mode):
        outer = enter_level()
        try:
            xo = x.view_as(x)
            set_tangent(xo, outer, torchplug.tensor([1.0, 0.5, -1.0], dtype=torchplug.float64))
            inner = enter_level()
            try:
                xi = xo.view_as(xo)
                set_tangent(xi, inner, torchplug.tensor([0.2, -1.0, 0.4], dtype=torchplug.float64))
                with torchplug.set_grad_enabled(grad_mode):
                    first = tangent_of(xi.prod() + xi.logsumexp(0), inner)
            finally:
                exit_level(inner)
            return tangent_of(first, outer)
        finally:
            exit_level(outer)

    x = torchplug.tensor([0.3, -0.7, 1.1], dtype=torchplug.float64, requires_grad=True)
    with_grad, without = second(x, True), second(x, False)
    assert without is not None and not without.requires_grad
    np.testing.assert_allclose(without.numpy(), with_grad.detach().numpy(), rtol=1e-12)


_TANGENT_OWNERSHIP_OPS = {
    "sub_int": lambda t, m: m - m.long(), "add_int": lambda t, m: m + m.long(), "rsub_int": lambda t, m: m.long() - m,
    "add_scalar": lambda t, m: m + 0, "sub_scalar": lambda t, m: m - 0, "mul_one": lambda t, m: m * 1,
    "positive": lambda t, m: t.positive(m), "to_same": lambda t, m: m.to(m.dtype),
    "contiguous": lambda t, m: m.contiguous(), "real": lambda t, m: m.real,
    "where": lambda t, m: t.where(t.tensor([True, False]), m, m.long()), "cat1": lambda t, m: t.cat([m]),
}


def _tangent_after_input_write(lib, op):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        m = fw.make_dual(lib.tensor([1.5, 2.5]), lib.tensor([1.0, 1.0]))
        r = _TANGENT_OWNERSHIP_OPS[op](lib, m)
        m.mul_(3)  # scales m's tangent in place
        return r is m, fw.unpack_dual(r).tangent.tolist()


@pytest.mark.parametrize("op", sorted(_TANGENT_OWNERSHIP_OPS))
def test_an_output_owns_its_tangent_unless_it_is_the_input(op):
    # A rule that hands back an input's tangent (sub of a constant) must not let a later in-place op on the
    # input change the output's tangent; an op that returns its input itself keeps sharing it.
    torch = pytest.importorskip("torch")
    assert _tangent_after_input_write(torchplug, op) == _tangent_after_input_write(torch, op)
