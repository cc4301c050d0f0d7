"""``torchplug.utils.memory_estimate``: the peak memory of a step, computed on the meta device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["memory_estimate"]


def _to_meta(value: Any, memo: dict[int, Any]) -> Any:
    from torchplug._tensor.tensor import Tensor

    if isinstance(value, Tensor):
        if value._device.type == "meta":
            return value
        found = memo.get(id(value))
        if found is None:
            from torchplug._tensor.creation import empty_strided

            found = empty_strided(tuple(value.shape), value.stride(), dtype=value.dtype, device="meta")
            if value.requires_grad:
                found.requires_grad_(True)
            memo[id(value)] = found
        return found
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_to_meta(v, memo) for v in value)
    if isinstance(value, dict):
        return {k: _to_meta(v, memo) for k, v in value.items()}
    return value


def memory_estimate(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> int:
    """Peak bytes of device memory that ``fn(*args, **kwargs)`` needs, without running it on data.

    The call runs on the ``meta`` device, whose allocator counts the bytes every tensor would
    occupy.  Tensor arguments (also inside lists, tuples and dicts) on other devices are replaced
    by meta tensors of the same shape, strides, dtype and ``requires_grad``; factories inside
    ``fn`` default to meta.  Tensors ``fn`` reaches by other routes (a model's parameters) count
    when they live on meta: build the model under ``with torch.device('meta'):``.

    The answer is the meta allocator's peak during the call, which (like
    ``max_memory_allocated``) includes every meta tensor alive at the time: the converted
    arguments, parameters, activations, gradients.  Compare it with ``max_memory_allocated()``
    of a real device measured around the same step.
    """
    from torchplug._runtime.backends import backend_for
    from torchplug._runtime.device import device

    meta = backend_for("meta").device_module
    meta.reset_peak_memory_stats()
    memo: dict[int, Any] = {}
    margs = _to_meta(list(args), memo)
    mkwargs = _to_meta(kwargs, memo)
    with device("meta"):
        result = fn(*margs, **mkwargs)
    peak = meta.max_memory_allocated()
    del result, margs, mkwargs, memo
    return peak
