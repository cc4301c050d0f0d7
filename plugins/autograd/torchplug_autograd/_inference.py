"""Inference tensors (PyTorch's InferenceMode): the ``Inference`` dispatch key's fallback.

Inside ``inference_mode`` the key is in the TLS include set, so every op passes here once (the key is
excluded below it): its results become inference tensors (the key's bit in their key set), except those
sharing storage with a normal input (a view of a normal tensor, an in-place result), as in PyTorch.
Outside the mode only calls with an inference tensor among their arguments reach the fallback, which
refuses what PyTorch refuses: writing to an inference tensor in place, and an autograd-recorded op that
would save one for backward; views of an inference tensor stay inference tensors.  Neither the key nor
the bit is set otherwise, so ordinary calls pay nothing.
"""

from __future__ import annotations

from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.tls import tls
from torchplug._tensor.tensor import Tensor

from ._state import STATE

__all__ = ["INFERENCE_MASK", "inference_fallback", "INPLACE_OUTSIDE", "SAVED_FOR_BACKWARD", "REQUIRES_GRAD_OUTSIDE"]

INFERENCE_MASK = 1 << K.INFERENCE_BIT
_NOT_INFERENCE = ~INFERENCE_MASK

INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)
SAVED_FOR_BACKWARD = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`."
)
REQUIRES_GRAD_OUTSIDE = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."


def _tensors(args: tuple[Any, ...]) -> list[Tensor]:
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(t for t in a if isinstance(t, Tensor))
    return out


def _outputs(result: Any) -> Any:
    if isinstance(result, Tensor):
        return (result,)
    if isinstance(result, (list, tuple)):
        return [r for r in result if isinstance(r, Tensor)]
    return ()


def _shares_normal_storage(st: Any, args: tuple[Any, ...]) -> bool:
    """Whether a normal (non-inference) tensor among ``args`` has storage ``st``."""
    for a in args:
        if isinstance(a, Tensor):
            if a._storage is st and not a._keyset & INFERENCE_MASK:
                return True
        elif a.__class__ is list or a.__class__ is tuple:
            for t in a:
                if isinstance(t, Tensor) and t._storage is st and not t._keyset & INFERENCE_MASK:
                    return True
    return False


def inference_fallback(ks: int, op: Any, *args: Any) -> Any:
    """The boxed kernel of the ``Inference`` key (see the module docstring)."""
    if STATE.inference:  # (the hot case: every op inside the mode; kept short)
        entry = op._entry
        below = ks & _NOT_INFERENCE
        kernel = entry.cache.get(below) or DISPATCHER.lookup(entry, below)
        old = tls.mask
        tls.mask = old & _NOT_INFERENCE  # the ops this one calls are not marked again one by one
        try:
            result = kernel(*args)
        finally:
            tls.mask = old
        if isinstance(result, Tensor):
            if not _shares_normal_storage(result._storage, args):
                result._keyset |= INFERENCE_MASK
        elif result.__class__ is tuple or result.__class__ is list:
            for o in result:
                if isinstance(o, Tensor) and not _shares_normal_storage(o._storage, args):
                    o._keyset |= INFERENCE_MASK
        return result
    entry = op._entry
    for i in entry.schema.mutated_argument_indices:
        a = args[i]
        targets = a if isinstance(a, (list, tuple)) else (a,)
        if any(isinstance(t, Tensor) and t._keyset & INFERENCE_MASK for t in targets):
            raise RuntimeError(INPLACE_OUTSIDE)
    result = op.redispatch(ks & _NOT_INFERENCE, *args)
    outs = _outputs(result)
    if outs:
        if STATE.grad_enabled:
            _check_saved(outs)
        inference = [a._storage for a in _tensors(args) if a._keyset & INFERENCE_MASK]
        for o in outs:  # a view of an inference tensor is one too
            st = o._storage
            if any(st is s for s in inference):
                o._keyset |= INFERENCE_MASK
    return result


def _check_saved(outs: Any) -> None:
    """PyTorch's refusal when autograd saved an inference tensor for the node it just recorded (ops that
    decompose record inner nodes, whose calls check for themselves).  Checked on the recorded node, so only
    what the formula really saves counts, and normal calls never pay for it."""
    for o in outs:
        fn = o._grad_fn
        if fn is None:
            continue
        for node in (fn, getattr(fn, "fn", None)):  # (a CopySlices holds the in-place op's node)
            saved = getattr(node, "_saved", None)
            if not saved:
                continue
            for v in saved:
                if isinstance(v, tuple) and v:  # packed by saved_tensors_hooks: (packed, unpack)
                    v = v[0]
                if isinstance(v, Tensor) and v._keyset & INFERENCE_MASK:
                    raise RuntimeError(SAVED_FOR_BACKWARD)
