"""The generic autocast kernel: cast eligible inputs per cast policy, then run the op below autocast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torchplug
from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.tls import tls

from .state import STATE, DEFAULT_DTYPES, cached_cast

__all__ = ["make_autocast_kernel"]

_NO_AUTOCAST = ~K.AUTOCAST_BAND
_FLOAT32 = torchplug.float32
_FLOAT64 = torchplug.float64
_Tensor = torchplug.Tensor


def make_autocast_kernel(entry: OperatorEntry, device_type: str, policy: str, message: str | None = None) -> Callable[..., Any]:
    """A keyset-taking kernel for ``entry`` at ``Autocast<device_type>`` applying ``policy``.

    Like PyTorch's ``WrapFunction_``: only floating tensors of this device that are not float64
    are cast; a call with an explicit ``dtype=`` runs unchanged; the op (and everything it calls)
    runs with every autocast key excluded.
    """
    args_spec = entry.schema.arguments
    tensor_pos = tuple(i for i, a in enumerate(args_spec) if a.type.base == "Tensor")
    dtype_pos = next((i for i, a in enumerate(args_spec) if a.name == "dtype" and a.type.base == "ScalarType"), None)
    cache_get = entry.cache.get
    lookup = DISPATCHER.lookup
    op_name = entry.name

    def eligible(t: Any) -> bool:
        # Python numbers (wrapped-number arguments) and None are never cast.
        if t.__class__ is not _Tensor and not isinstance(t, _Tensor):
            return False
        d = t._dtype
        return d.is_floating_point and d is not _FLOAT64 and t._device.type == device_type

    def cast_all(args: tuple[Any, ...], target: Any, lower: Any) -> tuple[Any, ...]:
        out = list(args)
        for i in tensor_pos:
            value = out[i]
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                out[i] = type(value)(
                    cached_cast(t, target, lower) if eligible(t) and t._dtype is not target else t for t in value
                )
            elif eligible(value) and value._dtype is not target:
                out[i] = cached_cast(value, target, lower)
        return tuple(out)

    def lower_dtype() -> Any:
        return STATE.dtypes.get(device_type) or DEFAULT_DTYPES.get(device_type) or torchplug.float16

    def promote_type(args: tuple[Any, ...], lower: Any) -> Any:
        current = lower
        for i in tensor_pos:
            value = args[i]
            values = value if isinstance(value, (list, tuple)) else (value,)
            for t in values:
                if not eligible(t):
                    continue
                nxt = t._dtype
                if current is _FLOAT32 or nxt is _FLOAT32:
                    current = _FLOAT32
                elif current is lower and nxt is lower:
                    current = lower
                else:
                    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
        return current

    def first_eligible(args: tuple[Any, ...]) -> bool:
        if not tensor_pos:
            return False
        return eligible(args[tensor_pos[0]])

    def kernel(ks: int, *args: Any) -> Any:
        old = tls.mask
        tls.mask = old & _NO_AUTOCAST
        try:
            if policy == "banned":
                raise RuntimeError(message or f"{op_name} is unsafe to autocast on {device_type}.")
            if dtype_pos is None or args[dtype_pos] is None:
                if policy == "lower_precision_fp":
                    lower = lower_dtype()
                    args = cast_all(args, lower, lower)
                elif policy == "fp32" or (policy == "fp32_set_opt_dtype" and dtype_pos is None):
                    args = cast_all(args, _FLOAT32, lower_dtype())
                elif policy == "fp32_set_opt_dtype":
                    if first_eligible(args):
                        args = args[:dtype_pos] + (_FLOAT32,) + args[dtype_pos + 1 :]
                elif policy == "promote":
                    lower = lower_dtype()
                    args = cast_all(args, promote_type(args, lower), lower)
            below = ks & _NO_AUTOCAST
            fn = cache_get(below) or lookup(entry, below)
            return fn(*args)
        finally:
            tls.mask = old

    kernel.__qualname__ = f"autocast[{device_type}:{policy}]"
    kernel.__module__ = __name__
    return kernel
