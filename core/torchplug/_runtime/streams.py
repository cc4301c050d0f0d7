"""Generic ``torchplug.Stream`` / ``torchplug.Event`` over a backend's stream provider, and current streams.

A backend supplies a :class:`torchplug._runtime.contract.StreamProvider` (native handles plus a few
operations on them); these classes add the device-generic behaviour: default device, current
stream per thread and device, context managers, argument checks and PyTorch's errors.
:class:`SynchronousStreams` is the provider of devices that run every kernel before returning
(cpu, meta, emulated devices): work is always complete, events record host time.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

__all__ = ["Stream", "Event", "StreamContext", "SynchronousStreams", "current_stream", "set_stream",
           "default_stream", "current_stream_if_set", "stream_device"]


def stream_device(device: Any, default_type: str | None = None) -> Any:
    """``device`` (None, index, string or device) as a device with an index on its type."""
    from torchplug._runtime.device import device as _device

    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        if default_type is None:
            from torchplug._runtime.accelerator_choice import require_accelerator_type

            default_type = require_accelerator_type()
        from torchplug._runtime.contract import runtime_of

        index = device if device is not None else runtime_of(default_type).current_device()
        return _device(default_type, _as_index(index))
    dev = _device(device)
    if dev.index is None:
        from torchplug._runtime.contract import runtime_of

        return _device(dev.type, _as_index(runtime_of(dev.type).current_device()))
    return dev


def _as_index(value: Any) -> int:
    return value if isinstance(value, int) else 0  # cpu's runtime answers 'cpu'


def _provider(device_type: str) -> Any:
    from torchplug._runtime.contract import streams_of

    return streams_of(device_type)


class Stream:
    """An in-order queue of work on one device: ``torchplug.Stream(device=None, *, priority=0)``.

    ``device`` defaults to the current device of the current accelerator (of this module's
    device type for ``torchplug.<type>.Stream``).  Usable as a context manager that makes it the
    current stream of its device.
    """

    _device_type: str | None = None  # set on the per-device-module subclasses

    def __init__(self, device: Any = None, *, priority: int = 0, _native: Any = None, _stream_id: int | None = None) -> None:
        from torchplug._runtime.contract import require_available

        dev = stream_device(device, self._device_type)
        require_available(dev.type)
        self.device = dev
        self.priority = priority
        provider = _provider(dev.type)
        self.native = _native if _native is not None else provider.new_stream(dev.index, priority)
        self.stream_id = _stream_id if _stream_id is not None else next(_IDS)
        self._ctx: list[Any] = []

    @property
    def device_type(self) -> str:
        return self.device.type

    @property
    def device_index(self) -> int:
        return self.device.index

    def query(self) -> bool:
        """True when all work submitted to this stream has completed."""
        return bool(_provider(self.device.type).stream_query(self.native))

    def synchronize(self) -> None:
        """Block the host until all work submitted to this stream has completed."""
        _provider(self.device.type).stream_synchronize(self.native)

    def wait_event(self, event: Event) -> None:
        """Make future work on this stream wait for ``event``; returns at once."""
        if event.native is not None:
            _provider(self.device.type).stream_wait_event(self.native, event.native)

    def wait_stream(self, stream: Stream) -> None:
        """Make future work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if None) on this stream; returns it."""
        event = event if event is not None else Event(self.device)
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        ctx = StreamContext(self)
        ctx.__enter__()
        self._ctx.append(ctx)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._ctx.pop().__exit__(*exc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.device == other.device and self.stream_id == other.stream_id

    def __hash__(self) -> int:
        return hash((self.device, self.stream_id))

    def __repr__(self) -> str:
        return f"torchplug.Stream device_type={self.device.type}, device_index={self.device.index}, stream_id={self.stream_id}"


class Event:
    """A marker in a stream: ``torchplug.Event(device=None, *, enable_timing=False, blocking=False,
    interprocess=False)``; ``record``, ``wait``, ``query``, ``synchronize``, ``elapsed_time``."""

    _device_type: str | None = None

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        from torchplug._runtime.contract import require_available

        dev = stream_device(device, self._device_type)
        require_available(dev.type)
        self.device = dev
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.native: Any = None  # created when first recorded, as in PyTorch

    @property
    def device_type(self) -> str:
        return self.device.type

    def record(self, stream: Stream | None = None) -> None:
        """Record on ``stream`` (default: the current stream of the event's device)."""
        stream = stream if stream is not None else current_stream(self.device)
        if stream.device != self.device:
            raise RuntimeError(
                f"Event device {self.device} does not match recording stream's device {stream.device}."
            )
        provider = _provider(self.device.type)
        if self.native is None:
            self.native = provider.new_event(self.device.index, self.enable_timing, self.blocking, self.interprocess)
        provider.event_record(self.native, stream.native)

    def wait(self, stream: Stream | None = None) -> None:
        """Make future work on ``stream`` (default: current) wait for this event."""
        stream = stream if stream is not None else current_stream(self.device)
        stream.wait_event(self)

    def query(self) -> bool:
        """True when the work recorded before this event has completed (True if never recorded)."""
        return True if self.native is None else bool(_provider(self.device.type).event_query(self.native))

    def synchronize(self) -> None:
        """Block the host until the recorded work has completed."""
        if self.native is not None:
            _provider(self.device.type).event_synchronize(self.native)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, both with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.native is None or end_event.native is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(_provider(self.device.type).event_elapsed_time(self.native, end_event.native))

    def __repr__(self) -> str:
        return f"torchplug.Event device_type={self.device.type}, device_index={self.device.index}, recorded={self.native is not None}"


_IDS = itertools.count(1)  # stream ids; 0 is every device's default stream


class _TLS(threading.local):
    def __init__(self) -> None:
        self.current: dict[Any, Stream] = {}


_tls = _TLS()
_defaults: dict[Any, Stream] = {}
_defaults_lock = threading.Lock()


def default_stream(device: Any = None, default_type: str | None = None) -> Stream:
    """The default stream (id 0) of a device."""
    dev = stream_device(device, default_type)
    found = _defaults.get(dev)
    if found is None:
        with _defaults_lock:
            found = _defaults.get(dev)
            if found is None:
                native = _provider(dev.type).default_stream(dev.index)
                found = Stream(dev, _native=native, _stream_id=0)
                _defaults[dev] = found
    return found


def current_stream(device: Any = None, default_type: str | None = None) -> Stream:
    """The current stream of a device in this thread (its default stream unless one was set)."""
    dev = stream_device(device, default_type)
    found = _tls.current.get(dev)
    return found if found is not None else default_stream(dev)


def current_stream_if_set(dev: Any) -> Stream | None:
    """The stream set current for ``dev`` in this thread, without creating anything (None: default)."""
    if dev.index is None:
        for key, s in _tls.current.items():
            if key.type == dev.type:
                return s
        return None
    return _tls.current.get(dev)


def set_stream(stream: Stream) -> None:
    """Make ``stream`` the current stream of its device in this thread (and its device current)."""
    if not isinstance(stream, Stream):
        raise TypeError(f"set_stream expects a torchplug.Stream, got {type(stream).__name__}")
    from torchplug._runtime.contract import runtime_of

    runtime_of(stream.device.type).set_device(stream.device.index)
    _tls.current[stream.device] = stream


class StreamContext:
    """``with StreamContext(stream):`` makes ``stream`` current (and its device current) inside the
    block and restores both after; ``None`` is a no-op."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self._saved: tuple[Any, ...] | None = None

    def __enter__(self) -> Stream | None:
        s = self.stream
        if s is None:
            return None
        from torchplug._runtime.contract import runtime_of

        runtime = runtime_of(s.device.type)
        self._saved = (runtime.current_device(), _tls.current.get(s.device))
        set_stream(s)
        return s

    def __exit__(self, *exc: Any) -> None:
        if self._saved is None:
            return
        from torchplug._runtime.contract import runtime_of

        prev_index, prev_stream = self._saved
        s = self.stream
        if prev_stream is None:
            _tls.current.pop(s.device, None)
        else:
            _tls.current[s.device] = prev_stream
        runtime_of(s.device.type).set_device(prev_index)
        self._saved = None


class _SyncEvent:
    __slots__ = ("time_ns", "index")

    def __init__(self, index: int) -> None:
        self.time_ns: int | None = None
        self.index = index


class SynchronousStreams:
    """Stream provider for devices that finish every kernel before returning: streams are always
    idle, waits are no-ops, events record the host clock."""

    def new_stream(self, index: int, priority: int) -> Any:
        return ("stream", index, priority)

    def default_stream(self, index: int) -> Any:
        return ("stream", index, 0)

    def stream_query(self, native: Any) -> bool:
        return True

    def stream_synchronize(self, native: Any) -> None:
        return None

    def stream_wait_event(self, native_stream: Any, native_event: Any) -> None:
        return None

    def new_event(self, index: int, enable_timing: bool, blocking: bool, interprocess: bool) -> Any:
        return _SyncEvent(index)

    def event_record(self, native_event: Any, native_stream: Any) -> None:
        native_event.time_ns = time.perf_counter_ns()

    def event_query(self, native_event: Any) -> bool:
        return True

    def event_synchronize(self, native_event: Any) -> None:
        return None

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        return (end.time_ns - start.time_ns) / 1e6
