"""``torchplug.accelerator``: the current accelerator, its devices, streams and memory, device-generically.

Which device types are accelerators comes from registration alone: backends mark themselves
``is_accelerator`` with an ``accelerator_priority`` (and the ``platforms`` they can exist on).
cpu and meta are not accelerators.

Preference order of the registered accelerators (:func:`accelerators`):

1. the list given to :func:`set_accelerator_priority` (device types, most preferred first);
2. the ``TORCHPLUG_ACCELERATOR`` environment variable (a comma-separated list of the same);
3. each backend's ``accelerator_priority`` (higher first), then the device type's name.

The current accelerator (:func:`current_accelerator`):

- when 1 or 2 names registered accelerators, the first of those that is available, else the
  first of those (the user's choice stands even when it is unusable, so errors explain it);
- otherwise the most preferred accelerator that is available;
- when none is, the most preferred one that could be available on this system
  (``Backend.could_be_available()``: a macOS-only backend on Linux cannot); else None.

Asking availability calls the runtimes' ``is_available()`` (as ``torch.cuda.is_available()``
does), most preferred first, stopping at the first available one; nothing else of a device is
touched.  With no accelerator, the device and stream functions raise ``RuntimeError``;
:func:`is_available` is False and :func:`device_count` is 0.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = [
    "is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
    "device_index", "synchronize", "current_stream", "set_stream", "memory", "accelerators",
    "set_accelerator_priority", "get_accelerator_priority", "current_device_idx", "set_device_idx",
    "empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats",
]

ENV_VAR = "TORCHPLUG_ACCELERATOR"
_user_priority: list[str] | None = None


def _registered() -> dict[str, Any]:
    from ._backends import registered_backends
    from ._plugins import ensure_loaded

    ensure_loaded()  # imports and registers plugins; initialises no device
    return registered_backends()


def set_accelerator_priority(device_types: Sequence[str] | None) -> None:
    """Prefer these accelerator device types, in order, over the backends' own priorities
    (``None`` restores the default, including ``TORCHPLUG_ACCELERATOR``)."""
    global _user_priority
    if device_types is None:
        _user_priority = None
        return
    if isinstance(device_types, str):
        device_types = [device_types]
    types = [str(t) for t in device_types]
    if any(not t for t in types):
        raise ValueError("set_accelerator_priority expects device type names, e.g. ['mps']")
    _user_priority = types


def get_accelerator_priority() -> list[str] | None:
    """The list set by :func:`set_accelerator_priority` (None when unset)."""
    return None if _user_priority is None else list(_user_priority)


def _preferred() -> list[str]:
    """The device types named by set_accelerator_priority, else by TORCHPLUG_ACCELERATOR."""
    if _user_priority is not None:
        return _user_priority
    env = os.environ.get(ENV_VAR, "")
    return [t.strip() for t in env.split(",") if t.strip()]


def _ordered() -> tuple[list[Any], int]:
    """Registered accelerator backends, most preferred first, and how many of them the user named."""
    backends = _registered()
    found = sorted((b for b in backends.values() if b.is_accelerator), key=lambda b: (-b.accelerator_priority, b.device_type))
    by_type = {b.device_type: b for b in found}
    head = [by_type[t] for t in dict.fromkeys(_preferred()) if t in by_type]
    return head + [b for b in found if b not in head], len(head)


def accelerators() -> list[str]:
    """Every registered accelerator device type, most preferred first (see the module docstring)."""
    return [b.device_type for b in _ordered()[0]]


def _available(backend: Any) -> bool:
    try:
        return bool(backend.runtime.is_available())
    except Exception:  # noqa: BLE001 - a broken driver means "not available"
        return False


def current_accelerator_choice() -> tuple[str | None, str]:
    """The current accelerator's device type (or None) and why it was chosen, in words."""
    order, named = _ordered()
    how = "set_accelerator_priority" if _user_priority is not None else ENV_VAR
    if named:
        chosen = next((b for b in order[:named] if _available(b)), None)
        if chosen is not None:
            return chosen.device_type, f"named by {how} and available"
        return order[0].device_type, f"named by {how} (not available)"
    for b in order:
        if _available(b):
            return b.device_type, "the most preferred available accelerator"
    for b in order:
        if b.could_be_available():
            return b.device_type, "none is available; the most preferred one that could be available on this system"
    if order:
        return None, f"none is available, and none could be on this system ({sys.platform})"
    return None, "no accelerator backend is registered"


def current_accelerator_type() -> str | None:
    """The current accelerator's device type, or None (the rule of the module docstring)."""
    return current_accelerator_choice()[0]


def current_accelerator(check_available: bool = False) -> Any:
    """The current accelerator as a ``torchplug.device`` (no index), or None.

    The most preferred available accelerator; when none is available, the most preferred one
    that could be available on this system (see the module docstring).  With
    ``check_available=True`` it returns None unless that accelerator is available.
    """
    from ._device import device

    t = current_accelerator_type()
    if t is None:
        return None
    if check_available and not _module(t).is_available():
        return None
    return device(t)


def _module(device_type: str) -> Any:
    from ._backends import backend_for

    return backend_for(device_type).device_module


def _require_accelerator() -> Any:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError(no_accelerator_message())
    return acc


def no_accelerator_message() -> str:
    """Why there is no current accelerator: what is installed, and each registered accelerator's reason."""
    backends = _registered()
    installed = ", ".join(sorted(backends)) or "none"
    parts = [f"No accelerator is available (installed device types: {installed}; cpu and meta are not accelerators)."]
    for b in _ordered()[0]:
        reason = getattr(b.runtime, "unavailable_reason", None)
        why = reason() if reason is not None else ""
        if not why and not b.could_be_available():
            why = f"it exists only on {', '.join(b.platforms)}, and this system is {sys.platform}"
        parts.append(f"The {b.device_type!r} accelerator ({b.distribution or b.plugin or 'no distribution'}) is "
                     f"registered but not usable" + (f": {why}." if why else "."))
    from ._backends import WELL_KNOWN_DEVICE_TYPES
    from ._device_placeholder import missing_backend_message

    for t, known in WELL_KNOWN_DEVICE_TYPES.items():  # accelerator backends torchplug ships but that are missing
        if known.accelerator and known.distribution and t not in backends:
            parts.append(f"For {known.label or t}: {missing_backend_message(t)}")
    parts.append("See `python -m torchplug`.")
    return " ".join(parts)


def _acc_module() -> Any:
    return _module(_require_accelerator().type)


def _index(device: Any) -> int | None:
    """A device index of the current accelerator from an int, string, device or None."""
    if device is None:
        return None
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    from ._device import device as _device

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


memory = ModuleType(f"{__name__}.memory", "``torchplug.accelerator.memory``: memory of the current accelerator.")
for _name in ("empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
              "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats"):
    setattr(memory, _name, globals()[_name])
memory.__all__ = ["empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                  "max_memory_reserved", "reset_peak_memory_stats", "reset_accumulated_memory_stats"]
sys.modules[memory.__name__] = memory
del _name


from ._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# a name PyTorch has and torchplug lacks raises "not supported yet" (see docs/compat.md)
__getattr__ = _fallback_getattr("torch.accelerator", __name__)
