"""PyTorch's same-device check for calls whose tensors come from several backends.

Only calls whose key set holds more than one backend bit pay for it: the dispatcher wraps
the kernel it caches for such a key set (``Dispatcher.lookup``), so single-device calls run
exactly as before.  The rule is PyTorch's (``torch._prims_common.check_same_device`` with
``allow_cpu_scalar_tensors``, which its meta kernels apply): the first tensor argument that
is not a 0-dim cpu tensor fixes the expected device, and any other tensor on another device
raises ``RuntimeError: Tensor on device meta is not on the expected device cpu!``.  0-dim cpu
tensors act as scalars on any device.

The check applies where PyTorch makes it: functional pointwise ops (tag ``pointwise``) and
``cat``, ``stack``, ``dot``, ``mv``.  Other ops (matmuls, indexing, copies...) keep dispatching to
the highest-priority backend as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["wrap_mixed_device_kernel", "check_same_device", "CHECKED_OPS"]

CHECKED_OPS = frozenset({"aten::cat", "aten::stack", "aten::dot", "aten::mv", "aten::addmv"})
# Argument order in which PyTorch's reference implementation meets the tensors (masked_fill
# checks the mask first).
_ORDER = {"aten::masked_fill.Scalar": (1, 0), "aten::masked_fill.Tensor": (1, 0)}


def _is_cpu_scalar(t: Any) -> bool:
    return t._device.type == "cpu" and len(t._data.shape) == 0


def check_same_device(args: tuple[Any, ...], order: tuple[int, ...] | None = None) -> None:
    """Raise PyTorch's error if the tensors in ``args`` (lists included) are on different devices."""
    expected = None
    for i in order if order is not None else range(len(args)):
        arg = args[i]
        items = arg if isinstance(arg, (list, tuple)) else (arg,)
        for t in items:
            if not hasattr(t, "_device") or not hasattr(t, "_data"):
                continue
            if _is_cpu_scalar(t):
                continue
            if expected is None:
                expected = t._device
            elif t._device != expected:
                raise RuntimeError(f"Tensor on device {t._device} is not on the expected device {expected}!")


def _div_check(args: tuple[Any, ...]) -> None:
    # div with a rounding mode is checked by its own reference, with its own words
    a, b, mode = args[0], args[1], args[2]
    if mode is not None and hasattr(a, "_device") and hasattr(b, "_device") and a._device != b._device:
        if not _is_cpu_scalar(b):
            raise RuntimeError(
                f"Expected divisor (b) to be on the same device ({a._device}) as dividend (a), but it is found on "
                f"{b._device}!"
            )
    check_same_device(args)


def wrap_mixed_device_kernel(entry: Any, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` behind the same-device check if ``entry`` is an op PyTorch checks; else ``kernel``."""
    tags = entry.tags
    name = entry.name
    if name not in CHECKED_OPS and ("pointwise" not in tags or "inplace" in tags or "out" in tags):
        return kernel
    if name == "aten::div.Tensor":
        def checked_div(*args: Any) -> Any:
            _div_check(args)
            return kernel(*args)

        return checked_div
    order = _ORDER.get(name)

    def checked(*args: Any) -> Any:
        check_same_device(args, order)
        return kernel(*args)

    checked.__qualname__ = f"same_device_check[{name}]"
    return checked
