"""Grad modes, autograd.Function, functional API, gradcheck helpers, and the plugin wiring."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import torchplug as tp
from autograd_helpers import to_np

torch = pytest.importorskip("torch")
autograd = tp.autograd


# ---- grad modes ---------------------------------------------------------------------------------
def test_no_grad_context_and_decorator():
    x = tp.ones(2, requires_grad=True)
    with tp.no_grad():
        assert not tp.is_grad_enabled()
        y = x * 2
        with tp.enable_grad():
            z = x * 2
    assert tp.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @tp.no_grad()
    def f(a):
        return a * 2

    @tp.no_grad
    def g(a):
        return a * 2

    assert not f(x).requires_grad and not g(x).requires_grad

    @tp.enable_grad()
    def h(a):
        return a * 2

    with tp.no_grad():
        assert h(x).requires_grad


def test_set_grad_enabled_function_and_context():
    x = tp.ones(2, requires_grad=True)
    tp.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        tp.set_grad_enabled(True)
    with tp.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_inference_mode():
    x = tp.ones(2, requires_grad=True)
    with tp.inference_mode():
        assert tp.is_inference_mode_enabled() and not tp.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert not tp.is_inference_mode_enabled()

    @tp.inference_mode()
    def f(a):
        return a * 2

    assert not f(x).requires_grad
    with tp.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = {}
    with tp.no_grad():
        t = threading.Thread(target=lambda: seen.setdefault("enabled", tp.is_grad_enabled()))
        t.start()
        t.join()
    assert seen["enabled"] is True


def test_generator_decorator():
    @tp.no_grad()
    def gen():
        yield tp.is_grad_enabled()
        yield tp.is_grad_enabled()

    assert list(gen()) == [False, False]
    assert tp.is_grad_enabled()


# ---- autograd.Function -------------------------------------------------------------------------
class Exp(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        assert not tp.is_grad_enabled()
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulConst(autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, g):
        assert ctx.needs_input_grad == (True, False)
        return g * ctx.k, None


def test_function_basic_and_setup_context():
    x = tp.tensor([0.5, 1.0], dtype=tp.float64, requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.exp([0.5, 1.0]))
    x.grad = None
    MulConst.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [3.0, 3.0])
    assert autograd.gradcheck(Exp.apply, (x,))
    assert autograd.gradgradcheck(Exp.apply, (x,))


def test_function_saved_output_double_backward():
    x = tp.tensor([0.3, -0.2], dtype=tp.float64, requires_grad=True)
    (g,) = autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_np(gg), np.exp([0.3, -0.2]))


def test_function_mark_dirty_non_differentiable_materialize():
    class AddOne_(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class SortLike(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = tp.arange(x.shape[0])
            ctx.mark_non_differentiable(idx)
            ctx.set_materialize_grads(True)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, gidx):
            return g * 2

    x = tp.ones(2, requires_grad=True)
    y = x * 1
    z = AddOne_.apply(y)
    assert z is y and y.grad_fn.name() == "AddOne_Backward"
    (z * 3).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [3, 3])
    x.grad = None
    v, i = SortLike.apply(x)
    assert not i.requires_grad
    v.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2, 2])


def test_once_differentiable_and_errors():
    class Sq(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g, g  # one gradient too many (trailing Nones would be accepted, as in torch)

    x = tp.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Sq.apply(x).sum().backward()

    class Sq2(Sq):
        @staticmethod
        @autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    y = Sq2.apply(x)
    (g,) = autograd.grad(y.sum(), x, create_graph=True)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
        y.sum().backward()


# ---- functional ----------------------------------------------------------------------------------
def _fn(T):
    def f(x, y):
        return (x.sin() * y).sum() + (x * x * y).sum()
    return f


def test_functional_against_torch():
    xa, ya, va = np.array([0.3, -1.2, 0.8]), np.array([1.5, 0.5, -0.7]), np.array([1.0, -2.0, 0.5])
    res = {}
    for T in (tp, torch):
        F = T.autograd.functional
        x, y, v = (T.tensor(a, dtype=T.float64) for a in (xa, ya, va))
        f = _fn(T)
        out = {}
        out["jac"] = [to_np(j) for j in F.jacobian(f, (x, y))]
        out["hess"] = [[to_np(h) for h in row] for row in F.hessian(f, (x, y))]
        out["vjp"] = to_np(F.vjp(lambda a: a.exp() * 2, x, v)[1])
        out["jvp"] = to_np(F.jvp(lambda a: a.exp() * a, x, v)[1])
        out["hvp"] = to_np(F.hvp(lambda a: (a.sin() * a).sum(), x, v)[1])
        out["vhp"] = to_np(F.vhp(lambda a: (a.sin() * a).sum(), x, v)[1])
        out["jac1"] = to_np(F.jacobian(lambda a: a.exp() * a.sum(), x))
        out["hess1"] = to_np(F.hessian(lambda a: (a.exp() * a).sum(), x))
        res[T.__name__] = out
    a, b = res["torchplug"], res["torch"]
    for k in a:
        np.testing.assert_allclose(np.array(a[k], dtype=object).tolist() if False else a[k], b[k], rtol=1e-10, err_msg=k)


def test_gradcheck_detects_wrong_gradient():
    class Wrong(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = tp.tensor([1.0, 2.0], dtype=tp.float64, requires_grad=True)
    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        autograd.gradcheck(Wrong.apply, (x,))
    assert autograd.gradcheck(Wrong.apply, (x,), raise_exception=False) is False


# ---- plugin wiring -------------------------------------------------------------------------------
def test_exposed_names():
    import torchplug.autograd as ag
    from torchplug.autograd.graph import saved_tensors_hooks  # noqa: F401

    assert ag is tp.autograd
    assert tp.plugins.get_plugin("autograd").status == "loaded"
    assert callable(tp.autograd.grad) and isinstance(tp.ones(1), tp.autograd.Variable)


def _run(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_blocked_plugin_explains_itself():
    code = (
        "import torchplug as tp\n"
        "x = tp.ones(3) * 2\n"
        "assert x.sum().item() == 6.0\n"
        "try:\n"
        "    tp.ones(3, requires_grad=True)\n"
        "except RuntimeError as e:\n"
        "    print('ERR', e)\n"
        "try:\n"
        "    tp.no_grad\n"
        "except AttributeError as e:\n"
        "    print('ATTR', e)\n"
    )
    out = _run(code, TORCHPLUG_BLOCK_PLUGINS="autograd")
    assert out.returncode == 0, out.stderr
    assert "ERR requires_grad=True needs the autograd plugin, which is blocked by TORCHPLUG_BLOCK_PLUGINS" in out.stdout
    assert "TORCHPLUG_BLOCK_PLUGINS" in out.stdout and "ATTR" in out.stdout


def test_plain_ops_skip_autograd():
    x = tp.ones(3)
    from torchplug._dispatch.keys import AUTOGRAD_BAND

    assert not x._keyset & AUTOGRAD_BAND
    y = tp.ones(3, requires_grad=True)
    assert y._keyset & AUTOGRAD_BAND
    with tp.no_grad():
        assert not (y * 2)._keyset & AUTOGRAD_BAND
