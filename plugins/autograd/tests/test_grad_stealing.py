"""Gradient accumulation steals fresh gradients (no copy) only when nobody else can see them,
and product gradients come back laid out like their inputs (PyTorch's mm_mat*_backward)."""

from __future__ import annotations

import numpy as np

import torchplug as tp


def _linear_grads():
    tp.manual_seed(0)
    lin = tp.nn.Linear(7, 5)
    x = tp.randn(3, 7)
    lin(x).sum().backward()
    return lin, x


def test_linear_weight_grad_is_contiguous_and_owned():
    lin, x = _linear_grads()
    g = lin.weight.grad
    assert g.is_contiguous() and g._base is None
    np.testing.assert_allclose(g.numpy(), np.ones((3, 5), np.float32).T @ x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(5, 3.0))


def test_second_backward_accumulates_in_place():
    lin, x = _linear_grads()
    g = lin.weight.grad
    ptr = g.data_ptr()
    lin(x).sum().backward()
    assert lin.weight.grad is g and g.data_ptr() == ptr
    np.testing.assert_allclose(g.numpy(), 2 * (np.ones((3, 5), np.float32).T @ x.numpy()), rtol=1e-6)


def test_gradient_still_held_elsewhere_is_copied():
    seen = []
    w = tp.randn(4, requires_grad=True)
    w.register_hook(lambda g: seen.append(g))  # the hook keeps a reference to the incoming gradient
    (w * 2).sum().backward()
    assert w.grad is not seen[0]
    w.grad.add_(1)  # must not change what the hook saw
    np.testing.assert_allclose(seen[0].numpy(), np.full(4, 2.0))


def test_view_gradient_whose_base_is_visible_is_copied():
    w = tp.randn(3, 3, requires_grad=True)
    keep = []

    class Expose(tp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            base = g.t().contiguous()
            keep.append(base)
            return base.t()  # a view of a tensor the test still holds

    Expose.apply(w).sum().backward()
    assert not np.shares_memory(w.grad.numpy(), keep[0].numpy())


def test_transposed_operand_gradients_match_torch_layout():
    a = tp.randn(6, 4, requires_grad=True)
    b = tp.randn(5, 4, requires_grad=True)
    (a.t().t() @ b.t()).sum().backward()  # mat2 is b.t(): its gradient is computed as (g^T @ a)^T
    assert b.grad.is_contiguous() and a.grad.is_contiguous()
    np.testing.assert_allclose(b.grad.numpy(), np.ones((6, 5)).T @ a.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(a.grad.numpy(), np.ones((6, 5)) @ b.detach().numpy(), rtol=1e-5)


def test_fresh_gradient_becomes_grad_without_a_copy():
    # The engine must hold a leaf's incoming gradient only once when it accumulates, or the
    # steal silently turns into a copy (a refcount check, see _engine._stealable).
    x = tp.randn(4, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.data_ptr()))
    (x * 3).sum().backward()
    assert x.grad.data_ptr() == seen[0]
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 3.0, np.float32))
