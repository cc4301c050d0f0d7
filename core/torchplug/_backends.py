"""The backend registry: which device types exist, their dispatch keys and data-movement hooks.

The core names no device.  A backend plugin registers a :class:`Backend` record through the
``torchplug_register_backends`` hook; everything device-specific the core needs (how to bring
host data in, how to read it out, whether the device holds data at all) is a field of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._dispatch import keys as K
from ._dispatch.dispatcher import DISPATCHER

__all__ = ["Backend", "register_backend", "unregister_backend", "backend_for", "registered_backends", "WELL_KNOWN_DEVICE_TYPES"]

# Device types whose provider we can name even when it is not installed.
WELL_KNOWN_DEVICE_TYPES = {
    "cpu": "torchplug-cpu",
    "meta": "torchplug-meta",
    "cuda": "torchplug-cuda",
    "mps": "torchplug-mps",
}


@dataclass(eq=False)
class Backend:
    """What a backend tells the core about one device type.

    Args:
        device_type: the name users write in ``device('...')``.
        key_name: its dispatch key name (``'CPU'``); runtime keys are allocated at registration.
        from_host: ``(ndarray, device) -> Tensor``: a new tensor on this device holding a copy
            (or, for a host device, a view) of a NumPy array.
        to_host: ``(Tensor) -> ndarray``: the tensor's values on the host; may share memory for
            host devices.  Backends without data raise here.
        storage_offset: ``(Tensor) -> int``: the tensor's offset into its storage, in elements.
        has_data: False for shape-only devices (meta).
        is_host: True when tensors live in host memory (NumPy can view them).
        high_priority: wins key resolution when mixed with other backends (meta does).
        is_accelerator: an asynchronous device that ``torchplug.accelerator`` may pick.
        accelerator_priority: which accelerator is current when several are registered (higher
            wins; ties by name); users override it (``accelerator.set_accelerator_priority``,
            ``TORCHPLUG_ACCELERATOR``).  See docs/accelerators.md.
        runtime, allocator, streams, rng: the backend contract's components
            (``torchplug._contract``); left None, the core supplies its defaults.
        device_module_extras: functions replacing names of the generated device module.
        host_pinning: for accelerators, an object with ``pin(ndarray) -> ndarray`` (a copy in
            page-locked host memory) and ``is_pinned(ndarray) -> bool``; ``Tensor.pin_memory()``
            and ``is_pinned()`` reach it.
        intra_op_threads: for host backends, ``(n | None) -> int``: sets the number of threads
            its kernels use inside one op (BLAS) when given ``n``, and returns the current number;
            ``torchplug.set_num_threads``/``get_num_threads`` reach it.
        device_module: the ``torchplug.<type>`` module, built by the core at registration.
    """

    device_type: str
    key_name: str
    from_host: Callable[..., Any]
    to_host: Callable[[Any], Any]
    storage_offset: Callable[[Any], int]
    has_data: bool = True
    is_host: bool = False
    high_priority: bool = False
    is_accelerator: bool = False
    accelerator_priority: int = 0
    runtime: Any = None
    allocator: Any = None
    streams: Any = None
    rng: Any = None
    device_module_extras: dict[str, Any] = field(default_factory=dict)
    intra_op_threads: Callable[[int | None], int] | None = None
    host_pinning: Any = None
    plugin: str = ""
    distribution: str = ""
    device_module: Any = None
    on_registered: Callable[[Backend], None] | None = None  # called once keys are allocated
    # filled at registration
    key: K.DispatchKey | None = None
    keyset: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


_lock = threading.RLock()
_BACKENDS: dict[str, Backend] = {}
# Called with a device type the registry does not know; the plugin manager uses it to load
# plugins lazily and to explain failures.  Returns the Backend or None.
unknown_device_hook: list[Callable[[str], Backend | None]] = []
# Explains why a device type is missing (e.g. its plugin failed or is blocked); '' if unknown.
missing_device_reason: list[Callable[[str], str]] = []


def register_backend(backend: Backend) -> Backend:
    """Register a device type: checks its contract components, allocates its dispatch keys and
    builds its device module."""
    from ._contract import complete_backend
    from ._device_module import make_device_module

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
    from ._tensor import install_device_members

    install_device_members(backend.device_type)
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
        from ._tensor import uninstall_device_members

        uninstall_device_members(device_type)


def registered_backends() -> dict[str, Backend]:
    """Device type -> Backend for every registered backend."""
    return dict(_BACKENDS)


def backend_for(device_type: str) -> Backend:
    """The backend of a device type, loading plugins lazily; a clear error if there is none."""
    found = _BACKENDS.get(device_type)
    if found is not None:
        return found
    for hook in unknown_device_hook:
        found = hook(device_type)
        if found is not None:
            return found
    raise RuntimeError(unknown_device_message(device_type))


def unknown_device_message(device_type: str) -> str:
    known = sorted(_BACKENDS)
    reasons = [r for hook in missing_device_reason if (r := hook(device_type))]
    if reasons:  # a plugin provides it but failed or is blocked: say that first, not "unknown"
        return f"Device type {device_type!r} is not available. " + " ".join(reasons) + f" Available device types are {known}."
    msg = f"Unknown device type {device_type!r}. Available device types are {known}."
    if device_type in WELL_KNOWN_DEVICE_TYPES:
        msg += (
            f" The {device_type!r} device type is provided by the {WELL_KNOWN_DEVICE_TYPES[device_type]!r} "
            f"distribution: pip install {WELL_KNOWN_DEVICE_TYPES[device_type]}."
        )
    return msg
