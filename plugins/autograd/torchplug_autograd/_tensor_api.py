"""The Tensor-side autograd API the core delegates to (``requires_grad_``, ``backward``, hooks...)."""

from __future__ import annotations

import weakref
from typing import Any

from torchplug._tensor.tensor import Tensor

from . import _graph as G
from . import _views as V
from ._engine import backward as _backward
from ._engine import run_backward as _run_backward
from ._inference import INFERENCE_MASK, REQUIRES_GRAD_OUTSIDE
from ._kernels import DIFF_DTYPES
from ._node_names import node_name
from ._state import STATE

__all__ = ["set_requires_grad", "backward", "register_hook", "register_post_accumulate_grad_hook", "retain_grad",
           "retains_grad", "detach_", "is_view", "rename_node"]


def set_requires_grad(t: Tensor, flag: bool) -> None:
    if t._grad_fn is not None:
        if not flag:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
                "subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        return
    if flag:
        if t._dtype not in DIFF_DTYPES:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if t._keyset & INFERENCE_MASK and not STATE.inference:
            raise RuntimeError(REQUIRES_GRAD_OUTSIDE)
        t._requires_grad = True
        t._keyset |= G.autograd_bit(t._keyset)
        if t._base is not None and t._autograd_meta is None:
            G.grad_accumulator(t)  # a view made a leaf: its own accumulator, not a no_grad view's undefined edge
    else:
        t._requires_grad = False
        if not t.__dict__.get("_fw"):  # a dual tensor keeps reaching the autograd kernels
            t._keyset &= ~G.autograd_bit(t._keyset)
        t._autograd_meta = None


_ONES: dict[Any, Tensor] = {}  # (shape, dtype, device) -> the implicit gradient of a one-element output


def _ones(t: Tensor) -> Tensor:
    key = (t._data.shape, t._dtype, t._device)
    one = _ONES.get(key)
    if one is None:
        import torchplug

        one = _ONES[key] = torchplug.ones(list(key[0]), dtype=t._dtype, device=t._device)
    return one


def backward(t: Tensor, gradient: Any = None, retain_graph: Any = None, create_graph: bool = False,
             inputs: Any = None) -> None:
    if (gradient is None and inputs is None and not create_graph and t._requires_grad and t._grad_fn is not None
            and t._base is None and t._dtype in DIFF_DTYPES and t._data.size == 1):
        # The common ``loss.backward()``: a scalar output and the implicit gradient of ones.
        _run_backward([(t._grad_fn, t._autograd_meta)], [_ones(t)], bool(retain_graph), False)
        return
    _backward(t, gradient, retain_graph, create_graph, inputs=inputs)


def _check_requires_grad(t: Tensor) -> None:
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")


def register_hook(t: Tensor, hook: Any) -> G.RemovableHandle:
    _check_requires_grad(t)
    if t._grad_fn is None:
        table = t.__dict__.get("_hooks")
        if table is None:
            table = t.__dict__["_hooks"] = G._HookDict()
        handle = G.RemovableHandle(table)
        table[handle.id] = hook
        return handle
    node, nr = V.gradient_edge(t)
    return node._register_tensor_hook(nr, hook)


def register_post_accumulate_grad_hook(t: Tensor, hook: Any) -> G.RemovableHandle:
    _check_requires_grad(t)
    if t._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    table = t.__dict__.get("_post_acc_hooks")
    if table is None:
        table = t.__dict__["_post_acc_hooks"] = G._HookDict()
    handle = G.RemovableHandle(table)
    table[handle.id] = hook
    return handle


def retain_grad(t: Tensor) -> None:
    if not t._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None:
        return
    node, nr = V.gradient_edge(t)
    node._get_hooks().retain[nr] = weakref.ref(t)
    t.__dict__["_retains_grad"] = True


def retains_grad(t: Tensor) -> bool:
    return bool(t.__dict__.get("_retains_grad")) and t._grad_fn is not None


def detach_(t: Tensor) -> Tensor:
    if t._base is not None and t._grad_fn is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
            "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
            "detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution.")
    t._grad_fn = None
    t._requires_grad = False
    t._autograd_meta = None
    t._keyset &= ~G.autograd_bit(t._keyset)
    return t


def is_view(t: Tensor) -> bool:
    return t._base is not None


_RENAMED: dict[tuple[type, str], type] = {}  # (node class, in-place op) -> the renamed class


def rename_node(node: G.Node, op: str) -> None:
    """Give ``node`` (recorded by a functional view) the type PyTorch names the in-place view op ``op``
    (``aten::squeeze_.dim``: SqueezeBackward4); the formula and edges stay the view's."""
    key = (type(node), op)
    cls = _RENAMED.get(key)
    if cls is None:
        name = node_name(op)
        cls = _RENAMED[key] = type(name, (type(node),), {"__slots__": (), "_name": name})
    node.__class__ = cls


from ._views import refresh_view  # noqa: E402  (Tensor.grad_fn refreshes stale views through this)
