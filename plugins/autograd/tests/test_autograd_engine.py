"""The engine: retain_graph, create_graph, inputs=, autograd.grad, deep graphs, freeing, hooks order."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import torchplug as tp
from autograd_helpers import to_np

torch = pytest.importorskip("torch")
autograd = tp.autograd


def test_second_backward_raises():
    x = tp.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), 2 * (np.e + np.e))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    z = (x + 1).sum()  # nothing saved: a second backward is allowed, as in torch
    z.backward()
    z.backward()


def test_create_graph_hvp_matches_torch():
    def run(T):
        x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
        v = T.tensor([1.0, 0.5, -2.0], dtype=T.float64)
        y = (x.sin() * x * x).sum() + (x.exp() * x[0]).sum()
        (g,) = T.autograd.grad(y, x, create_graph=True)
        (hv,) = T.autograd.grad((g * v).sum(), x, retain_graph=True)
        gg = T.autograd.grad(g.sum(), x, create_graph=True)[0]
        third = T.autograd.grad(gg.sum(), x)[0]
        return to_np(g), to_np(hv), to_np(third)
    for a, b in zip(run(tp), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_backward_create_graph_accumulates_graph():
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [6.0, 12.0])


def test_grad_options():
    x = tp.ones(2, requires_grad=True)
    y = tp.ones(2, requires_grad=True)
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(out, [x, y], retain_graph=True)
    gx, gy = autograd.grad(out, [x, y], allow_unused=True, retain_graph=True)
    assert gy is None and x.grad is None
    gx, gy = autograd.grad(out, [x, y], materialize_grads=True, retain_graph=True)
    np.testing.assert_allclose(to_np(gy), [0, 0])
    (g,) = autograd.grad([out, (x * x).sum()], x, grad_outputs=[tp.tensor(2.0), None])
    np.testing.assert_allclose(to_np(g), [6, 6])


def test_grad_wrt_intermediate_does_not_run_the_rest():
    x = tp.ones(2, requires_grad=True)
    h = x * 3
    ran = []
    h.grad_fn.register_prehook(lambda g: ran.append("mul"))
    (g,) = autograd.grad((h * h).sum(), h)
    np.testing.assert_allclose(to_np(g), [6, 6])
    assert ran == [] and x.grad is None


def test_backward_inputs():
    x = tp.ones(2, requires_grad=True)
    y = tp.ones(2, requires_grad=True)
    (x * y * 3).sum().backward(inputs=[y])
    assert x.grad is None
    np.testing.assert_allclose(to_np(y.grad), [3, 3])


def test_deep_chain_no_recursion():
    x = tp.tensor([1.0], dtype=tp.float64, requires_grad=True)
    y = x
    for _ in range(10000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [1.0001 ** 10000], rtol=1e-4)
    del y
    gc.collect()


def _live():
    gc.collect()
    objs = gc.get_objects()
    tensors = sum(1 for o in objs if issubclass(type(o), tp.Tensor))
    from torchplug_autograd._graph import Node

    nodes = sum(1 for o in objs if issubclass(type(o), Node))
    return tensors, nodes


def test_memory_flat_over_training_steps():
    rng = np.random.default_rng(0)
    w1 = tp.tensor(rng.standard_normal((4, 8)), requires_grad=True)
    w2 = tp.tensor(rng.standard_normal((8, 1)), requires_grad=True)
    xb = tp.tensor(rng.standard_normal((16, 4)))

    def step():
        h = (xb @ w1).relu()
        loss = ((h @ w2) ** 2).mean()
        loss.backward()
        with autograd.no_grad():
            w1.sub_(w1.grad * 0.01)
            w2.sub_(w2.grad * 0.01)
        w1.grad = None
        w2.grad = None

    for _ in range(3):
        step()
    before = _live()
    gc.disable()
    try:
        for _ in range(20):
            step()
        # no reference cycles: everything was freed by reference counting alone
        import sys
        objs = [o for o in gc.get_objects() if issubclass(type(o), tp.Tensor)]
        assert len(objs) <= before[0] + 2
    finally:
        gc.enable()
    after = _live()
    assert after == before


def test_graph_freed_without_gc():
    import weakref

    gc.disable()
    try:
        x = tp.ones(3, requires_grad=True)
        y = (x.exp() * x).sum()
        ref = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert ref() is None
    finally:
        gc.enable()


def test_hook_order_matches_torch():
    def run(T):
        log = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append(("leaf_hook", g.tolist())))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", t.grad.tolist())))
        a = x * 2
        a.register_hook(lambda g: log.append(("a_hook1", g.tolist())))
        a.register_hook(lambda g: g * 10)
        a.retain_grad()
        a.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
        a.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist(), go[0].tolist())))
        b = a * a
        b.sum().backward()
        log.append(("a.grad", a.grad.tolist()))
        log.append(("x.grad", x.grad.tolist()))
        return log
    assert run(tp) == run(torch)


def test_hook_handle_remove():
    x = tp.ones(2, requires_grad=True)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 1).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [1, 1])


def test_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(t.shape)
        return t.detach().clone()

    def unpack(t):
        return t

    x = tp.tensor([1.0, 2.0], requires_grad=True)
    with autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * x
    assert len(packed) == 2
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2, 4])


def test_anomaly_reports_forward_op():
    x = tp.tensor([0.0, 1.0], requires_grad=True)
    with autograd.detect_anomaly():
        y = x.sqrt()
        z = (y * 0).sum()
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned nan values in its 0th output"):
            z.backward()
    assert not autograd.is_anomaly_enabled()


def test_set_detect_anomaly_function_form():
    autograd.set_detect_anomaly(True)
    try:
        assert autograd.is_anomaly_enabled()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


def test_backward_in_thread():
    result = {}

    def work():
        x = tp.ones(2, requires_grad=True)
        (x * 3).sum().backward()
        result["g"] = to_np(x.grad)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    np.testing.assert_allclose(result["g"], [3, 3])
