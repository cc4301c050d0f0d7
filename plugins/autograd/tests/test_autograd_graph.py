"""The graph: requires_grad, grad_fn, leaves, detach, saved-tensor versions, views and in-place ops."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp
from autograd_helpers import compare_grads, to_np

torch = pytest.importorskip("torch")


def test_leaf_and_grad_fn():
    x = tp.ones(2, 3, requires_grad=True)
    y = (x * 2).sum()
    assert x.is_leaf and not y.is_leaf and y.requires_grad
    assert x.grad_fn is None and x.grad is None
    assert y.grad_fn.name() == "SumBackward0"
    (mul, nr), = y.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and nr == 0
    acc, _ = mul.next_functions[0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
    assert mul.next_functions[1] == (None, 0)
    y.backward()
    np.testing.assert_allclose(to_np(x.grad), np.full((2, 3), 2.0))


def test_names_match_torch():
    for T in (tp, torch):
        x = T.ones(3, requires_grad=True)
        names = [(x + 1).grad_fn.name(), (x * x).grad_fn.name(), x.exp().grad_fn.name(), x.view(3).grad_fn.name(),
                 x[0].grad_fn.name(), x.t().grad_fn.name(), x.relu().grad_fn.name()]
        if T is tp:
            ours = names
        else:
            assert ours == names


def test_requires_grad_errors():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        tp.tensor([1, 2]).requires_grad_()
    y = tp.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tp.ones(2).sum().backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_non_leaf_grad_warns_and_retain_grad():
    x = tp.ones(3, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert y.grad is None
    z = x * 3
    z.retain_grad()
    assert z.retains_grad
    (z * z).sum().backward()
    np.testing.assert_allclose(to_np(z.grad), np.full(3, 6.0))
    np.testing.assert_allclose(to_np(x.grad), np.full(3, 18.0))


def test_detach_and_detach_():
    x = tp.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d._base is None
    assert d.data_ptr() == y.data_ptr()
    y.detach_()
    assert not y.requires_grad and y.is_leaf


def test_saved_tensor_modified_inplace():
    x = tp.ones(3, requires_grad=True)
    y = x * 1
    z = y.exp()
    y.add_(1)  # exp saved its result, not y: fine
    w = y * y
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()
    e = x.exp()
    e.add_(1)
    with pytest.raises(RuntimeError, match=r"output 0 of ExpBackward0, is at version 1; expected version 0"):
        e.sum().backward()
    z.sum().backward()


def test_leaf_inplace_errors():
    x = tp.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    with tp.autograd.no_grad():
        x.add_(1)  # allowed without grad mode
    assert x._version == 1


def test_out_argument_refuses_grad():
    x = tp.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tp.add(x, 1, out=tp.empty(3))


@pytest.mark.parametrize("case", ["inplace_on_nonleaf", "view_slice", "view_select", "view_transpose", "view_chain",
                                  "base_then_view", "view_inplace_src_grad"])
def test_inplace_and_views_match_torch(case):
    def fn(T, a, b):
        if case == "inplace_on_nonleaf":
            y = a * 1
            y.mul_(b)
            y.exp_()
            return y
        if case == "view_slice":
            y = a * 2
            y[1:3].mul_(b[1:3])
            return y
        if case == "view_select":
            y = a.clone()
            y[0].add_(b[0] * 3)
            return y * y
        if case == "view_transpose":
            y = (a * 1).view(2, 2)
            y.t()[0].copy_(b[:2])
            return y
        if case == "view_chain":
            y = a * 1
            v = y[1:]
            w = v[:2]
            w.mul_(b[:2])
            return y + v.sum()
        if case == "base_then_view":
            y = a * 1
            v = y[:2]
            y.mul_(b)
            return v * 3
        if case == "view_inplace_src_grad":
            y = T.zeros(4, dtype=a.dtype)
            y[1:3] = a[:2] * b[:2]
            return y
    compare_grads(fn, np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, -1.0, 2.0, 1.5]))


def test_inplace_on_view_makes_base_require_grad():
    x = tp.ones(3, requires_grad=True)
    base = tp.zeros(3)
    base[1:].copy_(x[:2] * 2)
    assert base.requires_grad and base.grad_fn.name() == "torch::autograd::CopySlices"  # as torch's name()
    base.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2.0, 2.0, 0.0])


def test_version_counter_shared_with_views():
    x = tp.ones(4)
    v = x[:2]
    v.add_(1)
    assert x._version == v._version == 1


def test_dtype_cast_and_broadcast_in_engine():
    a = tp.ones(3, dtype=tp.float32, requires_grad=True)
    b = tp.ones(2, 1, dtype=tp.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == tp.float32 and tuple(a.grad.shape) == (3,)
    assert b.grad.dtype == tp.float64 and tuple(b.grad.shape) == (2, 1)
    np.testing.assert_allclose(to_np(a.grad), [2, 2, 2])
    np.testing.assert_allclose(to_np(b.grad), [[3], [3]])


def test_grad_is_not_aliased():
    x = tp.ones(3, requires_grad=True)
    g = tp.ones(3)
    y = x * 1
    y.backward(g)
    assert x.grad is not g
    g.add_(5)
    np.testing.assert_allclose(to_np(x.grad), [1, 1, 1])
    (x * 1).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), [2, 2, 2])
    s = tp.ones(2, requires_grad=True)
    s.sum().backward()
    assert s.grad.stride() == (1,)  # the expanded gradient is materialized
