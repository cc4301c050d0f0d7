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


def test_op_without_forward_formula_fails_loudly():
    with fwAD.dual_level():
        d = fwAD.make_dual(torchplug.ones(3, dtype=torchplug.float64), torchplug.ones(3, dtype=torchplug.float64))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with aten::floor_divide that does "
                                                      "not support it"):
            d.floor_divide(2)


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
