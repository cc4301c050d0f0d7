"""The current accelerator's devices, streams and memory, device-generically (public as ``torchplug.accelerator``).

Which registered backend is the current accelerator, and why, is :mod:`torchplug._runtime.accelerator_choice`.
With no accelerator, the device and stream functions raise ``RuntimeError``; :func:`is_available` is
False and :func:`device_count` is 0.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType
from typing import Any

from torchplug._runtime.accelerator_choice import (
    accelerators, current_accelerator_choice, current_accelerator_type, get_accelerator_priority,
    no_accelerator_message, set_accelerator_priority,
)
from torchplug._runtime.backends import backend_for
from torchplug._runtime.device import device as _device

__all__ = [
    "is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
    "device_index", "synchronize", "current_stream", "set_stream", "memory", "accelerators",
    "set_accelerator_priority", "get_accelerator_priority", "current_device_idx", "set_device_idx",
    "empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
]

def current_accelerator(check_available: bool = False) -> Any:
    """The current accelerator as a ``torchplug.device`` (no index), or None.

    The most preferred available accelerator; when none is available, the most preferred one
    that could be available on this system (see the module docstring).  With
    ``check_available=True`` it returns None unless that accelerator is available.
    """
    t = current_accelerator_type()
    if t is None:
        return None
    if check_available and not _module(t).is_available():
        return None
    return _device(t)


def _module(device_type: str) -> Any:
    return backend_for(device_type).device_module


def _require_accelerator() -> Any:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError(no_accelerator_message())
    return acc


def _acc_module() -> Any:
    return _module(_require_accelerator().type)


def _index(device: Any) -> int | None:
    """A device index of the current accelerator from an int, string, device or None."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    dev = _device(device)
    acc = _require_accelerator()
    if dev.type != acc.type:
        raise ValueError(f"{dev} is not a device of the current accelerator {acc.type!r}.")
    return dev.index


def is_available() -> bool:
    """True when there is a current accelerator and it can be used (may initialise it)."""
    acc = current_accelerator()
    return acc is not None and _module(acc.type).is_available()


def device_count() -> int:
    """Number of devices of the current accelerator (0 without one, or when it is unavailable)."""
    acc = current_accelerator()
    return 0 if acc is None else _module(acc.type).device_count()


def current_device_index() -> int:
    """Index of the current device of the current accelerator."""
    return _acc_module().current_device()


def set_device_index(device: Any) -> None:
    """Make ``device`` (index, string or device of the current accelerator) current."""
    idx = _index(device)
    mod = _acc_module()
    if idx is not None:
        mod.set_device(idx)


def current_device_idx() -> int:
    """Deprecated alias of :func:`current_device_index`."""
    warnings.warn("current_device_idx is deprecated, use current_device_index instead", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device: Any) -> None:
    """Deprecated alias of :func:`set_device_index`."""
    warnings.warn("set_device_idx is deprecated, use set_device_index instead", FutureWarning, stacklevel=2)
    set_device_index(device)


class device_index:  # noqa: N801 - torch's name
    """``with device_index(i):`` makes device ``i`` of the current accelerator current inside the
    block and restores the previous one after (``None``: no-op)."""

    def __init__(self, device: Any, /) -> None:
        self.idx = _index(device)
        self.prev: int | None = None

    def __enter__(self) -> device_index:
        if self.idx is not None:
            mod = _acc_module()
            self.prev = mod.current_device()
            mod.set_device(self.idx)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.idx is not None and self.prev is not None:
            _acc_module().set_device(self.prev)


def synchronize(device: Any = None) -> None:
    """Wait for all work on every stream of the device (default: the current device)."""
    _acc_module().synchronize(_index(device))


def current_stream(device: Any = None) -> Any:
    """The current ``torchplug.Stream`` of the device (default: the current device)."""
    return _acc_module().current_stream(_index(device))


def set_stream(stream: Any) -> None:
    """Make ``stream`` current for its device and make that device current.  The stream must
    belong to the current accelerator (ValueError otherwise)."""
    acc = _require_accelerator()
    if stream.device.type != acc.type:
        raise ValueError(f"{stream!r} is not a stream of the current accelerator {acc.type!r}.")
    _module(acc.type).set_stream(stream)


# ---- memory ------------------------------------------------------------------------------------------
def empty_cache() -> None:
    """Release the current accelerator's cached, unused memory."""
    _acc_module().empty_cache()


def memory_stats(device_index: Any = None, /) -> dict[str, int]:
    """PyTorch's ``memory_stats()`` dict for a device of the current accelerator."""
    return _acc_module().memory_stats(_index(device_index))


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes held by live tensors on a device of the current accelerator."""
    return _acc_module().memory_allocated(_index(device_index))


def max_memory_allocated(device_index: Any = None, /) -> int:
    return _acc_module().max_memory_allocated(_index(device_index))


def memory_reserved(device_index: Any = None, /) -> int:
    return _acc_module().memory_reserved(_index(device_index))


def max_memory_reserved(device_index: Any = None, /) -> int:
    return _acc_module().max_memory_reserved(_index(device_index))


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    _acc_module().reset_peak_memory_stats(_index(device_index))


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    _acc_module().reset_accumulated_memory_stats(_index(device_index))


memory = ModuleType("torchplug.accelerator.memory", "``torchplug.accelerator.memory``: memory of the current accelerator.")
for _name in ("empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
              "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats"):
    setattr(memory, _name, globals()[_name])
memory.__all__ = ["empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                  "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats"]
sys.modules[memory.__name__] = memory
del _name

