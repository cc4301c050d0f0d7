"""The backend contract: typed protocols for what a backend provides, checked when it registers.

A :class:`torchplug.Backend` may carry four components; each one it leaves out gets the core's
default, and each one it gives is checked against its protocol at registration (a
``TypeError`` names the backend, the component and the missing members):

==============  ===========================  ==============================================
field           protocol                     default
==============  ===========================  ==============================================
``runtime``     :class:`DeviceRuntime`       :class:`SingleDeviceRuntime` (one device, sync)
``allocator``   :class:`Allocator`           :class:`torchplug._runtime.allocator.DeviceAllocator`
``streams``     :class:`StreamProvider`      :class:`torchplug._runtime.streams.SynchronousStreams`
``rng``         :class:`RNG`                 :class:`HostRNG` (a host ``Generator``)
==============  ===========================  ==============================================

Autocast policies are data a backend contributes through
``ctx.register_autocast_policy(device_type, policy)`` from its
``torchplug_register_autocast_policy`` hook; the amp plugin defines and validates their fields.

From these the core derives everything device-generic: the device module
(``torchplug.<type>``, :mod:`torchplug._runtime.device_module`), ``torchplug.accelerator``,
``torchplug.Stream``/``Event`` and the memory statistics.  The core names no device.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

__all__ = [
    "DeviceRuntime", "Allocator", "StreamProvider", "RNG", "ReplacementAllocator", "PROTOCOLS", "OPTIONAL",
    "SingleDeviceRuntime", "NoRNG", "check_members", "runtime_of", "streams_of",
    "allocator_of", "rng_of", "require_available", "unavailable_reason",
]


class DeviceRuntime(Protocol):
    """Devices of one type: availability, count, the current device, synchronisation.

    Optional members: ``unavailable_reason() -> str`` (why ``is_available()`` is False),
    ``is_initialized() -> bool``, ``init()``, ``get_device_name(index) -> str``,
    ``amp_supported_dtypes() -> list[dtype]``.
    ``is_available`` may initialise the device; nothing else of the contract is called before
    a user asks for the device, so plugin discovery never initialises one (fork safety).
    """

    def is_available(self) -> bool: ...
    def device_count(self) -> int: ...
    def current_device(self) -> int: ...
    def set_device(self, index: int) -> None: ...
    def synchronize(self, index: int) -> None: ...


class Allocator(Protocol):
    """Memory of one device type.  :class:`torchplug._runtime.allocator.DeviceAllocator` implements it;
    a backend with its own memory (a caching pool) subclasses it or provides the same members."""

    device_type: str

    def stats_for(self, index: int | None) -> Any: ...
    def allocate(self, nbytes: int, device: Any = None, stream: Any = None) -> Any: ...
    def free(self, handle: Any) -> None: ...
    def memory_stats(self, index: int | None = None) -> dict[str, int]: ...
    def reset_peak_memory_stats(self, index: int | None = None) -> None: ...
    def reset_accumulated_memory_stats(self, index: int | None = None) -> None: ...
    def empty_cache(self) -> None: ...
    def change_current_allocator(self, replacement: Any) -> Any: ...
    def get_current_allocator(self) -> Any: ...
    def subscribe(self, callback: Any) -> Any: ...
    def record_memory_history(self, enabled: str | None = "all", **kwargs: Any) -> None: ...
    def snapshot(self) -> dict[str, Any]: ...


class ReplacementAllocator(Protocol):
    """What ``change_current_allocator`` accepts (like PyTorch's pluggable allocator's alloc/free).
    Optional: ``empty_cache()``."""

    def allocate(self, nbytes: int, device_index: int, stream: Any) -> Any: ...
    def free(self, handle: Any, nbytes: int, device_index: int, stream: Any) -> None: ...


class StreamProvider(Protocol):
    """Native streams and events of one device type (see :mod:`torchplug._runtime.streams`)."""

    def new_stream(self, index: int, priority: int) -> Any: ...
    def default_stream(self, index: int) -> Any: ...
    def stream_query(self, native: Any) -> bool: ...
    def stream_synchronize(self, native: Any) -> None: ...
    def stream_wait_event(self, native_stream: Any, native_event: Any) -> None: ...
    def new_event(self, index: int, enable_timing: bool, blocking: bool, interprocess: bool) -> Any: ...
    def event_record(self, native_event: Any, native_stream: Any) -> None: ...
    def event_query(self, native_event: Any) -> bool: ...
    def event_synchronize(self, native_event: Any) -> None: ...
    def event_elapsed_time(self, start: Any, end: Any) -> float: ...


class RNG(Protocol):
    """The default random number generator(s) of one device type."""

    def manual_seed(self, seed: int) -> None: ...
    def seed(self) -> int: ...
    def initial_seed(self) -> int: ...
    def get_rng_state(self, index: int) -> Any: ...
    def set_rng_state(self, state: Any, index: int) -> None: ...


PROTOCOLS: dict[str, type] = {
    "runtime": DeviceRuntime, "allocator": Allocator, "streams": StreamProvider, "rng": RNG,
    "ReplacementAllocator": ReplacementAllocator,
}
OPTIONAL = {
    DeviceRuntime: ("unavailable_reason", "is_initialized", "init", "get_device_name", "amp_supported_dtypes"),
    ReplacementAllocator: ("empty_cache",),
}


def _required(proto: type) -> list[str]:
    names = [n for n in vars(proto) if not n.startswith("_")]
    names += [n for n in getattr(proto, "__annotations__", {}) if not n.startswith("_") and n not in names]
    return names


def check_members(obj: Any, protocol: str, what: str) -> None:
    """Raise TypeError naming ``what`` and every member of ``protocol`` that ``obj`` lacks."""
    proto = PROTOCOLS[protocol]
    missing = []
    for name in _required(proto):
        member = getattr(obj, name, None)
        if member is None or (name in vars(proto) and callable(vars(proto)[name]) and not callable(member)):
            missing.append(name)
    if missing:
        raise TypeError(
            f"{what} ({type(obj).__name__}) does not implement the {proto.__name__} protocol: missing "
            f"{', '.join(repr(m) for m in missing)}. See docs/accelerators.md for the backend contract."
        )


class SingleDeviceRuntime:
    """One always-available device that runs synchronously (cpu, meta)."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type

    def is_available(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def current_device(self) -> int:
        return 0

    def set_device(self, index: Any) -> None:
        if isinstance(index, int) and index > 0:
            raise RuntimeError(f"Invalid device index {index}: the {self.device_type} device type has 1 device (index 0).")

    def synchronize(self, index: int) -> None:
        return None

    def is_initialized(self) -> bool:
        return True


class NoRNG:
    """RNG of a device that draws no random numbers: seeding is accepted, state has no meaning."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self._seed = 67280421310721

    def manual_seed(self, seed: int) -> None:
        self._seed = int(seed)

    def seed(self) -> int:
        import random

        self._seed = random.SystemRandom().getrandbits(63)
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_rng_state(self, index: int) -> Any:
        raise NotImplementedError(self.reason)

    def set_rng_state(self, state: Any, index: int) -> None:
        raise NotImplementedError(self.reason)


# ---- component lookup (device-generic code goes through these) --------------------------------------
def _backend(device_type: str) -> Any:
    from torchplug._runtime.backends import backend_for

    return backend_for(device_type)


def runtime_of(device_type: str) -> Any:
    return _backend(device_type).runtime


def streams_of(device_type: str) -> Any:
    return _backend(device_type).streams


def allocator_of(device_type: str) -> Any:
    return _backend(device_type).allocator


def rng_of(device_type: str) -> Any:
    return _backend(device_type).rng


def unavailable_reason(device_type: str) -> str:
    """Why a device type is unavailable, from its runtime ('' when it gives no reason)."""
    runtime = runtime_of(device_type)
    reason = getattr(runtime, "unavailable_reason", None)
    return reason() if reason is not None else ""


def require_available(device_type: str) -> None:
    """Raise RuntimeError (with the runtime's reason) unless the device type is available."""
    if not runtime_of(device_type).is_available():
        reason = unavailable_reason(device_type)
        raise RuntimeError(f"The {device_type!r} device is not available" + (f": {reason}" if reason else "."))
