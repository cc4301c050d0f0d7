"""Registering a device type: fill in the contract's defaults, allocate dispatch keys, build its device module.

The top of the runtime layer: it assembles the parts below it (the registry, the default allocator,
streams and RNG, the device-module builder) for one backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._runtime.allocator import DeviceAllocator
from torchplug._runtime.backends import _BACKENDS, WELL_KNOWN_DEVICE_TYPES, Backend, _lock
from torchplug._runtime.contract import SingleDeviceRuntime, check_members
from torchplug._runtime.device_module import make_device_module
from torchplug._runtime.generator import HostRNG
from torchplug._runtime.streams import SynchronousStreams

__all__ = ["register_backend", "unregister_backend", "complete_backend", "DEVICE_TYPE_LISTENERS"]

# (added, removed) callbacks told when a device type is registered or unregistered; the layers above
# the registry subscribe here (torchplug's __init__ wires the Tensor's per-device members).
DEVICE_TYPE_LISTENERS: list[tuple[Callable[[str], None], Callable[[str], None]]] = []


def complete_backend(backend: Any) -> None:
    """Fill the components a backend left out with the core's defaults and check the ones it gave.

    Called by ``register_backend`` before any key is allocated, so a backend that breaks the
    contract never half-registers.
    """
    who = f"Backend {backend.device_type!r}"
    if backend.plugin or backend.distribution:
        who += f" (plugin {backend.plugin or '?'!r}, {backend.distribution or 'no distribution'})"
    given = {}
    for name in ("runtime", "allocator", "streams", "rng"):
        obj = getattr(backend, name)
        if obj is not None:
            check_members(obj, name, f"{who}: its {name}")
            given[name] = obj
    if backend.runtime is None:
        backend.runtime = SingleDeviceRuntime(backend.device_type)
    if backend.allocator is None:
        backend.allocator = DeviceAllocator(backend.device_type, host_memory=backend.is_host)
    elif backend.allocator.device_type != backend.device_type:
        raise TypeError(f"{who}: its allocator serves {backend.allocator.device_type!r}, not {backend.device_type!r}.")
    if backend.streams is None:
        backend.streams = SynchronousStreams()
    if backend.rng is None:
        backend.rng = HostRNG(backend.device_type, host=backend.is_host)


def register_backend(backend: Backend) -> Backend:
    """Register a device type: checks its contract components, allocates its dispatch keys and
    builds its device module."""
    complete_backend(backend)
    with _lock:
        existing = _BACKENDS.get(backend.device_type)
        if existing is not None and existing is not backend:
            raise RuntimeError(
                f"Device type {backend.device_type!r} is already registered by {existing.plugin or '?'} "
                f"({existing.distribution or '?'}); {backend.plugin or '?'} ({backend.distribution or '?'}) "
                "tried to register it again. Block one of the two plugins with TORCHPLUG_BLOCK_PLUGINS."
            )
        key = K.allocate_backend_keys(backend.key_name, high_priority=backend.high_priority)
        backend.key = key
        backend.keyset = key.mask | (1 << K.AD_INPLACE_OR_VIEW_BIT) | K.KEYS["Autocast" + backend.key_name].mask
        _BACKENDS[backend.device_type] = backend
        backend.device_module = make_device_module(backend)
        DISPATCHER.invalidate_all()
    for added, _ in DEVICE_TYPE_LISTENERS:  # e.g. the Tensor layer's ``is_<type>``/``<type>()`` members
        added(backend.device_type)
    if backend.on_registered is not None:
        backend.on_registered(backend)
    return backend


def unregister_backend(device_type: str) -> None:
    with _lock:
        backend = _BACKENDS.pop(device_type, None)
        if backend is not None:
            K.release_backend_keys(backend.key_name)
            DISPATCHER.invalidate_all()
    if backend is not None and device_type not in WELL_KNOWN_DEVICE_TYPES:
        for _, removed in DEVICE_TYPE_LISTENERS:
            removed(device_type)
