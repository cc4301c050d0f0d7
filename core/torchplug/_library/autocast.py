"""The autocast kernel of ``register_autocast``: cast floating inputs, run the op without autocast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.tls import tls

__all__ = ["make_autocast_kernel"]

_NO_AUTOCAST = ~K.AUTOCAST_BAND


def make_autocast_kernel(entry: Any, device_type: str, cast_inputs: Any) -> Callable[..., Any]:
    """A keyset-taking kernel for ``Autocast<device>``: like PyTorch's, every floating-point
    tensor on ``device_type`` (float64 included) is cast to ``cast_inputs``; the op and all it
    calls then run with every autocast key excluded."""
    from torchplug._tensor.tensor import Tensor

    tensor_pos = tuple(i for i, a in enumerate(entry.schema.arguments) if a.type.base == "Tensor")
    cache_get = entry.cache.get

    def cast(value: Any) -> Any:
        if isinstance(value, Tensor) and value._dtype.is_floating_point and value._device.type == device_type \
                and value._dtype is not cast_inputs:
            return value.to(cast_inputs)
        return value

    def autocast_kernel(ks: int, *args: Any) -> Any:
        args_l = list(args)
        for i in tensor_pos:
            v = args_l[i]
            args_l[i] = type(v)(cast(t) for t in v) if isinstance(v, (list, tuple)) else cast(v)
        below = ks & _NO_AUTOCAST
        old = tls.mask
        tls.mask = old & _NO_AUTOCAST
        try:
            kernel = cache_get(below) or DISPATCHER.lookup(entry, below)
            return kernel(*args_l)
        finally:
            tls.mask = old

    autocast_kernel.__qualname__ = f"autocast[{entry.name}, {device_type} -> {cast_inputs}]"
    return autocast_kernel
