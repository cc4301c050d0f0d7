"""Thread-local autocast state: enabled bits (the dispatch TLS), dtypes, nesting and the cast cache."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import torchplug
from torchplug._runtime.backends import backend_for, registered_backends
from torchplug._dispatch import keys as K
from torchplug._dispatch.tls import tls

__all__ = [
    "autocast_key",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "cached_cast",
    "STATE",
]

# PyTorch's default lower-precision dtype for a device type with no policy (privateuse1, xpu...).
_FALLBACK_DTYPE = torchplug.float16


class _AmpState(threading.local):
    """Per-thread state; a new thread starts with autocast disabled and policy-default dtypes."""

    def __init__(self) -> None:
        self.dtypes: dict[str, Any] = {}  # device type -> dtype set by set_autocast_dtype
        self.cache_enabled = True
        self.nesting = 0
        # (id(source), dtype) -> (weakref to source, cast tensor): casts of fp32 leaf weights
        self.cache: dict[tuple[int, Any], tuple[weakref.ref[Any], Any]] = {}
        self.saved: list[tuple[Any, tuple[Any, ...]]] = []  # autocast instances' saved states


STATE = _AmpState()

# Filled by the registry: device type -> policy default dtype.
DEFAULT_DTYPES: dict[str, Any] = {}


def autocast_key(device_type: str) -> K.DispatchKey:
    """The ``Autocast<Backend>`` runtime key of a device type (RuntimeError if there is no such device)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    backend = registered_backends().get(device_type) or backend_for(device_type)
    return K.KEYS["Autocast" + backend.key_name]


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` on this thread (``None``: 'cuda', as in PyTorch)."""
    if device_type is None:
        device_type = "cuda"
        if device_type not in registered_backends():
            return False
    return bool(tls.mask & autocast_key(device_type).mask)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    """Turn autocast on or off for ``device_type`` on this thread: un-excludes or excludes its
    ``Autocast<Backend>`` key in the dispatch TLS."""
    bit = autocast_key(device_type).mask
    tls.mask = (tls.mask | bit) if enabled else (tls.mask & ~bit)


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype autocast uses for ``device_type`` on this thread."""
    found = STATE.dtypes.get(device_type)
    if found is not None:
        return found
    default = DEFAULT_DTYPES.get(device_type)
    if default is not None:
        return default
    autocast_key(device_type)  # unknown device types raise
    return _FALLBACK_DTYPE


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    """Set the lower-precision dtype autocast uses for ``device_type`` on this thread."""
    autocast_key(device_type)
    if not isinstance(dtype, torchplug.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' must be torchplug.dtype, not {type(dtype).__name__}")
    STATE.dtypes[device_type] = dtype


def is_autocast_cache_enabled() -> bool:
    return STATE.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    STATE.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drop this thread's cached weight casts."""
    STATE.cache.clear()


def autocast_increment_nesting() -> int:
    STATE.nesting += 1
    return STATE.nesting


def autocast_decrement_nesting() -> int:
    STATE.nesting -= 1
    return STATE.nesting


def cached_cast(t: Any, dtype: Any, lower: Any) -> Any:
    """``t.to(dtype)``, reusing this thread's cast of ``t`` for fp32 leaf weights (PyTorch's rule:
    lower-precision casts of float32 leaves that require grad and are not views)."""
    if (
        dtype is lower
        and t._dtype is torchplug.float32
        and t.requires_grad
        and t.is_leaf
        and t._base is None
        and STATE.cache_enabled
    ):
        key = (id(t), dtype)
        hit = STATE.cache.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        result = t.to(dtype)
        STATE.cache[key] = (weakref.ref(t), result)
        return result
    return t.to(dtype)
