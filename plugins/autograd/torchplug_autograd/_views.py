"""Views and in-place ops (PyTorch's ADInplaceOrView/CopySlices): rebasing the history of a base.

Writing in place to a view of ``base`` makes ``base``'s history a ``CopySlices`` node: the
gradient for ``base`` is the incoming gradient with the view's region replaced by what the
in-place op's formula returns for its old value.  Every view of ``base`` whose recorded version
is stale then regenerates its ``grad_fn`` as a strided view of ``base``'s new history.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._dispatch.keys import CONJUGATE_BIT, NEGATIVE_BIT
from torchplug._tensor.tensor import Tensor

from . import _graph as G

__all__ = ["gradient_edge", "rebase_history", "refresh_view", "CopySlices", "AsStridedView", "as_strided_backward", "storage_indices",
           "check_view_write", "NoGradViewEdge", "short_node_name"]


_CONJ_MASK = 1 << CONJUGATE_BIT
_NEG_MASK = 1 << NEGATIVE_BIT


def _T() -> Any:
    import torchplug

    return torchplug


def storage_indices(size: Any, stride: Any, offset: int, like: Tensor) -> Tensor:
    """An int64 tensor of ``size`` holding each element's position in the storage."""
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for d, (s, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = s
        idx = idx + (np.arange(s, dtype=np.int64) * st).reshape(shape)
    return _T().tensor(idx, device=like.device)


def _extent(size: Any, stride: Any, offset: int) -> int:
    if any(s == 0 for s in size):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1


def as_strided_backward(g: Tensor, in_geom: Any, out_geom: Any) -> Tensor:
    """Gradient of ``as_strided`` for any geometry: scatter-add into storage, gather the input's elements."""
    T = _T()
    in_size, in_stride, in_off = in_geom
    out_size, out_stride, out_off = out_geom
    extent = max(_extent(in_size, in_stride, in_off), _extent(out_size, out_stride, out_off), 1)
    flat = T.zeros(extent, dtype=g.dtype, device=g.device)
    if g.numel():
        idx_out = storage_indices(out_size, out_stride, out_off, g).reshape(-1)
        flat = flat.index_put((idx_out,), g.reshape(-1), accumulate=True)
    return flat[storage_indices(in_size, in_stride, in_off, g)]


def _real_geom(geom: Any) -> tuple[Any, ...]:
    """The geometry of a complex layout in real elements (``view_as_real``'s: a trailing (re, im) pair)."""
    size, stride, off = geom
    return (tuple(size) + (2,), tuple(s * 2 for s in stride) + (1,), off * 2)


def _dtype_mode(view: Tensor, base: Tensor) -> int:
    """0: same dtype; 1: a real view of a complex base (``.real``/``view_as_real``); 2: the reverse."""
    if view._dtype is base._dtype:
        return 0
    return 1 if base._dtype.is_complex and not view._dtype.is_complex else 2 if view._dtype.is_complex else 0


class AsStridedView(G.Node):
    """The history of a view whose base was modified in place: a strided view of the base's history.

    ``mode`` handles views of another dtype (the real parts of a complex base and the reverse), and
    ``conj``/``neg`` conjugate and negated views (``x.conj()``, ``x.conj().imag``), whose gradient is
    conjugated / negated on its way to the base.
    """

    __slots__ = ("base_geom", "view_geom", "mode", "conj", "neg")
    _name = "AsStridedBackward0"
    _view_op = True

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        g = grads[0]
        if self.conj:
            g = g.conj_physical()
        if self.neg:
            g = g.neg()
        if self.mode == 1:
            return (_T().view_as_complex(as_strided_backward(g, _real_geom(self.base_geom), self.view_geom)),)
        if self.mode == 2:
            return (as_strided_backward(_T().view_as_real(g), self.base_geom, _real_geom(self.view_geom)),)
        return (as_strided_backward(g, self.base_geom, self.view_geom),)


# the type name PyTorch's regenerated views show (graphs are compared by ``type(grad_fn).__name__``)
AsStridedView.__name__ = AsStridedView.__qualname__ = "AsStridedBackward0"


class CopySlices(G.Node):
    """The history of a base after an in-place op on one of its views."""

    __slots__ = ("fn", "base_geom", "view_geom", "mode")
    _name = "torch::autograd::CopySlices"  # PyTorch's name(); the type name stays CopySlices

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        T = _T()
        g = grads[0]
        size, stride, off = self.base_geom
        result = T.empty_strided(list(size), list(stride), dtype=self._dtype, device=g.device)
        result.copy_(g)
        vsize, vstride, voff = self.view_geom
        if self.mode == 1:  # a real view of the complex base: slice the base's (re, im) pairs
            grad_slice = T.view_as_real(result).as_strided(list(vsize), list(vstride), voff - 2 * off)
        elif self.mode == 2:  # a complex view of a real base
            rsize, rstride, roff = _real_geom(self.view_geom)
            grad_slice = T.view_as_complex(result.as_strided(list(rsize), list(rstride), roff - off))
        else:
            grad_slice = result.as_strided(list(vsize), list(vstride), voff - off)
        fn = self.fn
        res = list(fn._apply([grad_slice.clone()], (True,) + tuple(needs[1:]), create_graph))
        first = res[0]
        if first is None or first is False:
            grad_slice.zero_()
        else:
            if tuple(first.shape) != tuple(vsize):
                first = first.expand(list(vsize))
            grad_slice.copy_(first)
        return [result] + res[1:]

    def _release(self) -> None:
        self.fn._release()

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return tuple(e if e is not None else (None, 0) for e in self._next)


def _geometry(t: Tensor) -> tuple[Any, ...]:
    return (tuple(t._data.shape), tuple(t.stride()), t.storage_offset())


def _view_node(view: Tensor, base: Tensor, geoms: tuple[Any, Any] | None = None) -> AsStridedView:
    node = AsStridedView()
    node._next = (gradient_edge(base),)
    node.base_geom, node.view_geom = geoms or (_geometry(base), _geometry(view))
    node.mode = _dtype_mode(view, base)
    node.conj = bool(view._keyset & _CONJ_MASK)
    node.neg = bool(view._keyset & _NEG_MASK)
    node._shape = view._data.shape
    node._dtype = view._dtype
    return node


def rebase_history(t: Tensor, node: G.Node) -> None:
    """After an in-place op recorded as ``node``, make it ``t``'s history (through its base if a view)."""
    base = t._base
    if base is None:
        G.set_history(t, node, 0)
        return
    if base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    cs = CopySlices()
    base_edge = gradient_edge(base) if base._requires_grad else None
    cs._next = (base_edge,) + tuple(node._next[1:])
    cs.fn = node
    cs.base_geom = _geometry(base)
    cs.view_geom = _geometry(t)  # (the view's node below has the same two geometries: computed once)
    cs.mode = _dtype_mode(t, base)
    cs._shape = base._data.shape
    cs._dtype = base._dtype
    G.set_history(base, cs, 0)
    base.__dict__["_vv"] = base._storage.version
    vnode = _view_node(t, base, (cs.base_geom, cs.view_geom))
    G.set_history(t, vnode, 0)
    t.__dict__["_vv"] = t._storage.version


class NoGradViewEdge(G.Node):
    """Where the gradient of a view made under no_grad goes: nowhere (PyTorch's undefined edge).

    Such a view requires grad (its base does) but has no history, so ops on it record nodes whose edge
    to it is this one; ``next_functions`` shows it as ``(None, 0)``, as PyTorch does."""

    __slots__ = ("inference",)
    _name = "NoGradViewEdge"
    _undefined = True

    def __init__(self, view: Tensor) -> None:
        super().__init__()
        self._shape = view._data.shape
        self._dtype = view._dtype
        self.inference = _made_in_inference_mode(view)  # which mode PyTorch's refusals name

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        return ()


def gradient_edge(t: Tensor) -> tuple[G.Node, int]:
    """Where the gradient of ``t`` flows: its grad_fn and output number, or its accumulator.  A view whose
    base's history changed since the view was recorded gets its grad_fn regenerated first."""
    if t._base is not None:
        if t._grad_fn is not None:
            refresh_view(t)
        elif t._autograd_meta is None:  # made under no_grad (requires_grad_() gives a view an accumulator)
            refresh_view(t)  # raises if its base was modified in place since
            return (NoGradViewEdge(t), 0)
    fn = t._grad_fn
    if fn is None:
        return (G.grad_accumulator(t), 0)
    return (fn, t._autograd_meta)


def refresh_view(t: Tensor) -> None:
    """Regenerate a view's grad_fn if its base's history changed since it was recorded.  A view made under
    no_grad cannot be regenerated: PyTorch refuses to use it once its base was modified in place."""
    vv = t.__dict__.get("_vv")
    if vv is None or vv == t._storage.version:
        return
    base = t._base
    if base is None or not base._requires_grad:
        return
    if t._grad_fn is None:
        if t._requires_grad:
            raise RuntimeError(_no_grad_view_message(None, True, _made_in_inference_mode(t)))
        return
    G.set_history(t, _view_node(t, base), 0)
    t.__dict__["_vv"] = t._storage.version


def _made_in_inference_mode(view: Tensor) -> bool:
    return view.__dict__.get("_view_mode") == "inference"


def _no_grad_view_message(prefix: str | None, indirect: bool, inference: bool = False) -> str:
    """PyTorch's refusal of an in-place write involving a view made under no_grad or in inference mode
    (``prefix``: the "Output k of Op is a view of a view which was created in" of a view made from such a view)."""
    what = "its base or another view of its base has been" if indirect else "is being"
    mode, now, block = (("inference mode", "in normal mode", "inference_mode") if inference else
                        ("no_grad mode", "with grad mode enabled", "no_grad"))
    return (
        f"{prefix or 'A view was created in'} {mode} and {what} modified inplace {now}. Given "
        "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
        f"the view and the inplace either both inside the {block} block (if you don't want the inplace to be tracked) "
        "or both outside (if you want the inplace to be tracked)."
    )


def short_node_name(name: str) -> str:
    """A node's name as PyTorch's view errors print it: ``SliceBackward0`` -> ``Slice``,
    ``SqueezeBackward1`` -> ``Squeeze1``."""
    return name[:-len("Backward0")] if name.endswith("Backward0") else name.replace("Backward", "")


def check_view_write(view: Tensor) -> None:
    """PyTorch's refusals before an in-place write to a view (the core calls this for every view
    written in place): with grad mode on, a view of a base that requires grad must have been
    made with grad mode on (as must the views it was made from), and must not be one of several
    views one function returned."""
    from ._state import STATE

    if not STATE.grad_enabled or not view._requires_grad:
        return
    fn = view._grad_fn
    if fn is None:
        if view._base._requires_grad and view._autograd_meta is None:
            raise RuntimeError(_no_grad_view_message(None, False, _made_in_inference_mode(view)))
        return
    marked = view.__dict__.get("_multi_view") if view.__dict__ else None
    if marked is not None:
        name, nr = marked
        raise RuntimeError(
            f"Output {nr} of {name} is a view and is being modified inplace. This view is the output of a function "
            "that returns multiple views. Such functions do not allow the output views to be modified inplace. You "
            "should replace the inplace operation by an out-of-place one."
        )
    # a view of a view made under no_grad: the chain of view nodes ends at that view's edge
    node = fn
    while node._view_op and node._next:
        e = node._next[0]
        if e is None:
            return
        node = e[0]
        if node.__class__ is NoGradViewEdge:
            prefix = (f"Output {view._autograd_meta} of {short_node_name(fn._name)} is a view of a view which was "
                      "created in")
            raise RuntimeError(_no_grad_view_message(prefix, False, node.inference))
