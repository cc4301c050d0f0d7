"""``torchplug.utils.swap_tensors`` and ``set_module``."""

from __future__ import annotations

import copyreg
import weakref
from typing import Any

__all__ = ["swap_tensors", "set_module"]

_POISONED = (
    "Trying to execute AccumulateGrad node that was poisoned by swap_tensors this can happen when you try to run "
    "backward on a tensor that was swapped. For a module m with `torch.__future__.set_swap_module_params_on_conversion"
    "(True)` you should not change the device or dtype of the module (e.g. `m.cpu()` or `m.half()`) between running "
    "forward and backward. To resolve this, please only change the device/dtype before running forward (or after both "
    "forward and backward)."
)


def _poison_accumulator(t: Any) -> None:
    # A graph recorded before the swap accumulates into the object it saw: refuse to run it, as PyTorch does.
    ref = t._autograd_meta if t._grad_fn is None else None
    acc = ref() if isinstance(ref, weakref.ref) else None
    if acc is not None:
        def refuse(grad_outputs: Any) -> None:
            raise RuntimeError(_POISONED)

        acc._register_tensor_hook(0, refuse)  # (the engine runs these before accumulating)


def swap_tensors(t1: Any, t2: Any) -> None:
    """Swap the contents of two tensors (class, attributes, data, autograd state) in place: ``t1`` gets ``t2``'s
    content and keeps its identity (what ``nn.Module`` uses to replace parameters without new objects)."""
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    t1_slots = set(copyreg._slotnames(t1.__class__))  # type: ignore[attr-defined]
    t2_slots = set(copyreg._slotnames(t2.__class__))  # type: ignore[attr-defined]
    if t1_slots != t2_slots:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    from torchplug._tensor.tensor import Tensor

    _poison_accumulator(t1)
    _poison_accumulator(t2)
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    d1, d2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(d2)
    t2.__dict__.clear()
    t2.__dict__.update(d1)
    slots = [s for s in Tensor.__slots__ if s not in ("__dict__", "__weakref__")] + sorted(t1_slots)
    for slot in dict.fromkeys(slots):
        has1, has2 = hasattr(t1, slot), hasattr(t2, slot)
        v1, v2 = getattr(t1, slot, None), getattr(t2, slot, None)
        if has2:
            setattr(t1, slot, v2)
        elif has1:
            delattr(t1, slot)
        if has1:
            setattr(t2, slot, v1)
        elif has2:
            delattr(t2, slot)


def set_module(obj: Any, mod: str) -> None:
    """Set ``obj.__module__`` (for nicer printing)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod
