"""The device module (``torchplug.cpu``, ``torchplug.mps``, ...): one surface, derived from the contract.

:func:`make_device_module` builds a module for a registered backend from its runtime, streams,
RNG and allocator; the backend plugin exposes it with ``ctx.expose(device_type, module)``.  Every
device module has exactly the names in :data:`SURFACE`.  A backend may replace individual
functions (``Backend.device_module_extras``, e.g. cpu's ``current_device() -> 'cpu'``), never
remove one; where a device truly cannot do something the function raises ``NotImplementedError``
with the reason.  Everything except ``is_available``, ``device_count``, ``is_initialized`` and
``get_amp_supported_dtype`` first checks availability and raises the runtime's reason.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["SURFACE", "make_device_module", "device_index_of"]

SURFACE = (
    "is_available", "is_initialized", "init", "device_count", "current_device", "set_device", "device",
    "get_device_name", "synchronize",
    "Stream", "Event", "StreamContext", "current_stream", "default_stream", "set_stream", "stream",
    "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
    "get_rng_state_all", "set_rng_state_all",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache", "memory_snapshot",
    "_record_memory_history", "change_current_allocator", "get_current_allocator", "OutOfMemoryError",
    "get_amp_supported_dtype",
)


def device_index_of(device_type: str, device: Any, runtime: Any) -> int:
    """``device`` (None, int, str or torchplug.device) as an index of ``device_type``."""
    if device is None:
        idx = runtime.current_device()
        return idx if isinstance(idx, int) else 0
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    from torchplug._runtime.device import device as _device

    dev = _device(device)
    if dev.type != device_type:
        raise ValueError(f"Expected a {device_type} device, but got: {dev}")
    if dev.index is None:
        idx = runtime.current_device()
        return idx if isinstance(idx, int) else 0
    return dev.index


def make_device_module(backend: Any) -> ModuleType:
    """The ``torchplug.<type>`` module of ``backend`` (the same names for every backend)."""
    from torchplug._runtime import allocator as _allocator
    from torchplug._runtime import contract as _contract
    from torchplug._runtime import streams as _streams

    t = backend.device_type
    mod = ModuleType(f"torchplug.{t}", f"The {t!r} device module: the same surface as every torchplug device module.")

    def _rt() -> Any:
        return _contract.runtime_of(t)

    def _need() -> Any:
        _contract.require_available(t)
        return _rt()

    def _index(device: Any) -> int:
        return device_index_of(t, device, _rt())

    def _alloc() -> Any:
        _need()
        return _contract.allocator_of(t)

    # -- availability and devices --------------------------------------------------------------
    def is_available() -> bool:
        """Whether the device can be used now (may initialise it)."""
        try:
            return bool(_rt().is_available())
        except Exception:  # noqa: BLE001 - a broken driver means "not available"
            return False

    def is_initialized() -> bool:
        probe = getattr(_rt(), "is_initialized", None)
        return bool(probe()) if probe is not None else is_available()

    def init() -> None:
        """Initialise the device now (normally lazy)."""
        _need()
        hook = getattr(_rt(), "init", None)
        if hook is not None:
            hook()

    def device_count() -> int:
        """Number of devices of this type (0 when unavailable)."""
        try:
            return int(_rt().device_count()) if is_available() else 0
        except Exception:  # noqa: BLE001
            return 0

    def current_device() -> int:
        """Index of the current device."""
        return _need().current_device()

    def set_device(device: Any) -> None:
        """Make ``device`` (index, string or device) current; negative indices are a no-op."""
        index = _index(device)
        if index < 0:
            return
        _need().set_device(index)

    def get_device_name(device: Any = None) -> str:
        runtime = _need()
        name = getattr(runtime, "get_device_name", None)
        return name(_index(device)) if name is not None else t

    def synchronize(device: Any = None) -> None:
        """Wait for all work on every stream of the device."""
        _need().synchronize(_index(device))

    class device:  # noqa: N801 - torch's name
        """Context manager that makes a device current inside the block (None/negative: no-op)."""

        def __init__(self, device: Any) -> None:
            self.idx = -1 if device is None else _index(device)
            self.prev_idx = -1

        def __enter__(self) -> Any:
            if self.idx >= 0:
                self.prev_idx = current_device()
                if self.prev_idx != self.idx:
                    set_device(self.idx)
            return self

        def __exit__(self, *exc: Any) -> bool:
            if self.idx >= 0 and self.prev_idx != self.idx:
                set_device(self.prev_idx)
            return False

    device.__qualname__ = "device"

    # -- streams and events ------------------------------------------------------------------------
    Stream = type("Stream", (_streams.Stream,), {"_device_type": t, "__module__": mod.__name__,
                                                 "__doc__": f"A {t} stream (see torchplug.Stream)."})
    Event = type("Event", (_streams.Event,), {"_device_type": t, "__module__": mod.__name__,
                                              "__doc__": f"A {t} event (see torchplug.Event)."})

    def _dev(device: Any) -> Any:
        from torchplug._runtime.device import device as _device

        _need()
        return _device(t, _index(device))

    def current_stream(device: Any = None) -> Any:
        """The current stream of the device in this thread."""
        return _streams.current_stream(_dev(device))

    def default_stream(device: Any = None) -> Any:
        return _streams.default_stream(_dev(device))

    def set_stream(stream: Any) -> None:
        """Make ``stream`` current (None: no-op)."""
        if stream is None:
            return
        if stream.device.type != t:
            raise ValueError(f"Expected a {t} stream, but got a stream on {stream.device}")
        _streams.set_stream(stream)

    def stream(stream: Any) -> Any:
        """``with stream(s):`` makes ``s`` current inside the block (None: no-op)."""
        if stream is not None and stream.device.type != t:
            raise ValueError(f"Expected a {t} stream, but got a stream on {stream.device}")
        return _streams.StreamContext(stream)

    # -- RNG -----------------------------------------------------------------------------------------
    def _rng() -> Any:
        _need()
        return _contract.rng_of(t)

    def manual_seed(seed: int) -> None:
        """Seed the current device's generator (silently ignored when the device is unavailable)."""
        if is_available():
            _rng().manual_seed(int(seed))

    def manual_seed_all(seed: int) -> None:
        manual_seed(seed)

    def seed() -> None:
        if is_available():
            _rng().seed()

    def seed_all() -> None:
        seed()

    def initial_seed() -> int:
        return _rng().initial_seed()

    def get_rng_state(device: Any = None) -> Any:
        """The generator state of the device as a uint8 tensor."""
        return _rng().get_rng_state(_index(device))

    def set_rng_state(new_state: Any, device: Any = None) -> None:
        _rng().set_rng_state(new_state, _index(device))

    def get_rng_state_all() -> list[Any]:
        return [get_rng_state(i) for i in range(device_count())]

    def set_rng_state_all(new_states: Any) -> None:
        for i, state in enumerate(new_states):
            set_rng_state(state, i)

    # -- memory ------------------------------------------------------------------------------------
    def memory_stats(device: Any = None) -> dict[str, int]:
        """PyTorch's ``memory_stats()`` dict (sorted keys) for the device."""
        return _alloc().memory_stats(_index(device))

    def memory_allocated(device: Any = None) -> int:
        """Bytes held by live tensors on the device."""
        return _alloc().memory_stats(_index(device))["allocated_bytes.all.current"]

    def max_memory_allocated(device: Any = None) -> int:
        return _alloc().memory_stats(_index(device))["allocated_bytes.all.peak"]

    def memory_reserved(device: Any = None) -> int:
        return _alloc().memory_stats(_index(device))["reserved_bytes.all.current"]

    def max_memory_reserved(device: Any = None) -> int:
        return _alloc().memory_stats(_index(device))["reserved_bytes.all.peak"]

    def reset_peak_memory_stats(device: Any = None) -> None:
        _alloc().reset_peak_memory_stats(_index(device))

    def reset_accumulated_memory_stats(device: Any = None) -> None:
        _alloc().reset_accumulated_memory_stats(_index(device))

    def empty_cache() -> None:
        """Release cached, unused memory (these allocators cache nothing themselves)."""
        _alloc().empty_cache()

    def memory_snapshot() -> dict[str, Any]:
        """Live blocks and recorded traces, in the format of docs/accelerators.md."""
        return _alloc().snapshot()

    def _record_memory_history(enabled: Any = "all", *args: Any, **kwargs: Any) -> None:
        """Start/stop recording alloc/free traces (``enabled=None`` stops)."""
        _alloc().record_memory_history(enabled, *args, **kwargs)

    def change_current_allocator(allocator: Any) -> Any:
        """Route this device type's allocations through ``allocator`` (None restores); returns the old one."""
        return _alloc().change_current_allocator(allocator)

    def get_current_allocator() -> Any:
        return _alloc().get_current_allocator()

    def get_amp_supported_dtype() -> list[Any]:
        """The lower-precision dtypes autocast supports on this device."""
        from torchplug._base import dtype as D

        probe = getattr(_rt(), "amp_supported_dtypes", None)
        return list(probe()) if probe is not None else [D.float16, D.bfloat16]

    namespace = dict(locals())
    for name in SURFACE:
        if name == "StreamContext":
            obj: Any = _streams.StreamContext
        elif name == "OutOfMemoryError":
            obj = _allocator.OutOfMemoryError
        else:
            obj = namespace[name]
        setattr(mod, name, obj)
    for name, obj in (backend.device_module_extras or {}).items():
        if name not in SURFACE:
            raise ValueError(f"device_module_extras of {t!r} may only replace surface names, not add {name!r}")
        setattr(mod, name, obj)
    mod.__all__ = [n for n in SURFACE if not n.startswith("_")]
    mod.device_type = t
    return mod
