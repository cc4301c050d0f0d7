"""The backend registry: which device types exist, their dispatch keys and data-movement hooks.

The core names no device.  A backend plugin registers a :class:`Backend` record through the
``torchplug_register_backends`` hook; everything device-specific the core needs (how to bring
host data in, how to read it out, whether the device holds data at all) is a field of it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER

__all__ = [
    "missing_backend_message",
    "Backend", "register_backend", "unregister_backend", "backend_for", "registered_backends", "WELL_KNOWN_DEVICE_TYPES",
    "WellKnownDevice", "install_command", "install_hint", "repository_root", "unknown_device_message",
]

@dataclass(frozen=True)
class WellKnownDevice:
    """A device type PyTorch code names even when no backend for it is installed.

    Args:
        distribution: the torchplug distribution that provides it ('' when none does yet).
        source: where that distribution lives in the torchplug repository (``backends/cuda``).
        module: PyTorch always has ``torch.<type>``; without a backend torchplug answers with a
            placeholder device module (``is_available()`` False, everything else explains).
        extras: names ``torch.<type>`` has beyond the generic device-module surface.
        amp: ``torch.<type>.amp`` exists (PyTorch's deprecated autocast/GradScaler aliases).
        tensor_types: ``torch.<type>.FloatTensor`` and the other legacy typed constructors exist.
        accelerator: an accelerator type, named when explaining that no accelerator is available.
        label: how PyTorch spells the device in its messages (``CUDA``).
    """

    distribution: str = ""
    source: str = ""
    module: bool = True
    extras: tuple[str, ...] = ()
    amp: bool = False
    tensor_types: bool = False
    accelerator: bool = False
    label: str = ""


# Device types whose provider we can name even when it is not installed.
WELL_KNOWN_DEVICE_TYPES: dict[str, WellKnownDevice] = {
    "cpu": WellKnownDevice("torchplug-cpu", "backends/cpu", amp=True, label="CPU"),
    "meta": WellKnownDevice("torchplug-meta", "backends/meta", module=False, label="meta"),
    "cuda": WellKnownDevice(
        "torchplug-cuda", "backends/cuda", amp=True, tensor_types=True, accelerator=True, label="CUDA",
        extras=("get_device_capability", "get_device_properties", "mem_get_info", "is_bf16_supported",
                "is_tf32_supported", "get_arch_list", "set_per_process_memory_fraction",
                "get_per_process_memory_fraction"),
    ),
    "mps": WellKnownDevice(
        "torchplug-mps", "backends/mps", accelerator=True, label="MPS",
        extras=("current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
                "set_per_process_memory_fraction"),
    ),
    "xpu": WellKnownDevice(
        accelerator=True, label="XPU",
        extras=("get_device_capability", "get_device_properties", "mem_get_info", "is_bf16_supported",
                "is_tf32_supported", "get_arch_list"),
    ),
}


def repository_root() -> Path | None:
    """The torchplug source checkout this core runs from (an editable install), or None."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "core" / "torchplug").is_dir() and (root / "backends").is_dir() else None


def install_command(device_type: str, extras: str = "") -> str:
    """The command that installs the distribution providing a well-known device type from the
    torchplug repository (its ``backends/<type>`` folder, with optional ``extras`` such as
    ``'cuda12'``), or '' when torchplug has none."""
    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    if known is None or not known.source:
        return ""
    suffix = f"[{extras}]" if extras else ""
    root = repository_root()
    if root is not None and (root / known.source / "pyproject.toml").is_file():
        target = f"{root / known.source}{suffix}"
        return f"pip install -e '{target}'" if suffix else f"pip install -e {target}"
    target = f"{known.source}{suffix}"
    return (f"pip install -e '{target}'" if suffix else f"pip install -e {target}") + " (from a checkout of the torchplug repository)"


def install_hint(device_type: str) -> str:
    """One sentence naming who provides ``device_type`` and how to install it ('' if not well known)."""
    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    if known is None:
        return ""
    if not known.distribution:
        return (f"torchplug has no backend for the {device_type!r} device type; a third-party distribution that "
                "registers it (entry-point group 'torchplug.backends') would provide it.")
    return (f"The {device_type!r} device type is provided by the {known.distribution!r} distribution, which "
            f"ships in the torchplug repository: {install_command(device_type)}.")


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
        platforms: ``sys.platform`` prefixes of the systems where the device can exist at all
            (``('darwin',)`` for Metal); empty means any.  An accelerator that is unavailable and
            cannot exist on this system is never the current accelerator
            (:meth:`could_be_available`).
        runtime, allocator, streams, rng: the backend contract's components
            (``torchplug._runtime.contract``); left None, the core supplies its defaults.
        device_module_extras: functions replacing names of the generated device module.
        host_pinning: for accelerators, an object with ``pin(ndarray) -> ndarray`` (a copy in
            page-locked host memory) and ``is_pinned(ndarray) -> bool``; ``Tensor.pin_memory()``
            and ``is_pinned()`` reach it.
        dlpack_device_types, from_dlpack: the DLPack device codes (``__dlpack_device__()[0]``,
            e.g. 2 for CUDA) whose data ``from_dlpack(obj) -> Tensor`` imports without copying;
            ``torchplug.from_dlpack`` routes such objects here (host memory needs neither).
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
    platforms: tuple[str, ...] = ()
    runtime: Any = None
    allocator: Any = None
    streams: Any = None
    rng: Any = None
    device_module_extras: dict[str, Any] = field(default_factory=dict)
    intra_op_threads: Callable[[int | None], int] | None = None
    host_pinning: Any = None
    dlpack_device_types: tuple[int, ...] = ()
    from_dlpack: Callable[[Any], Any] | None = None
    plugin: str = ""
    distribution: str = ""
    device_module: Any = None
    on_registered: Callable[[Backend], None] | None = None  # called once keys are allocated
    # filled at registration
    key: K.DispatchKey | None = None
    keyset: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def could_be_available(self) -> bool:
        """Whether this device can exist on this system (``platforms``); says nothing about
        whether it is usable now (that is ``runtime.is_available()``)."""
        return not self.platforms or sys.platform.startswith(tuple(self.platforms))


_lock = threading.RLock()
_BACKENDS: dict[str, Backend] = {}
# Called with a device type the registry does not know; the plugin manager uses it to load
# plugins lazily and to explain failures.  Returns the Backend or None.
unknown_device_hook: list[Callable[[str], Backend | None]] = []
# Explains why a device type is missing (e.g. its plugin failed or is blocked); '' if unknown.
missing_device_reason: list[Callable[[str], str]] = []


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
    hint = install_hint(device_type)
    return f"{msg} {hint}" if hint else msg


def missing_backend_message(device_type: str, what: str = "") -> str:
    """Why ``device_type`` cannot be used (blocked/failed plugin, or not installed) and how to fix it."""
    reasons = [r for hook in missing_device_reason if (r := hook(device_type))]
    if reasons:  # installed but blocked or broken: installing again would not help
        body = f"the {device_type!r} device type is not available. " + " ".join(reasons)
    else:
        body = f"no backend for the {device_type!r} device type is installed. {install_hint(device_type)}".rstrip()
    return f"{what} needs a {device_type!r} device, but {body}" if what else body[0].upper() + body[1:]
