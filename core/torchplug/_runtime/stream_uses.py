"""``Tensor.record_stream``: memory used on another stream outlives the tensor until that work is done.

PyTorch's caching allocator refuses to reuse a block freed while a recorded stream may still
read it.  Here the tensor's storage gets a finalizer: when the storage dies, an event is
recorded on each recorded stream and the root buffer (which holds the backend's memory) is kept
until those events complete.  Held buffers are checked, and released, at every later free or
``record_stream`` call and by :func:`release_completed`.  Works for any backend with streams.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

__all__ = ["record_stream", "release_completed", "held_count"]

_lock = threading.Lock()
_held: list[tuple[list[Any], Any]] = []  # (events recorded at free time, root buffer kept alive)
_recorded: dict[int, list[Any]] = {}  # id(storage) -> streams recorded on it


def record_stream(tensor: Any, stream: Any) -> None:
    """Mark ``tensor``'s memory as used by work queued on ``stream`` (see the module docstring)."""
    from torchplug._runtime.streams import Stream

    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 'stream' must be a torchplug Stream, not {type(stream).__name__}")
    if stream.device.type != tensor._device.type:
        raise RuntimeError(f"record_stream(): the stream is on {stream.device} but the tensor is on {tensor._device}; "
                           "record a stream of the tensor's own device")
    storage = tensor._storage
    key = id(storage)
    with _lock:
        streams = _recorded.get(key)
        if streams is None:
            streams = _recorded[key] = []
            weakref.finalize(storage, _on_free, key, storage.data)
        if all(s is not stream for s in streams):
            streams.append(stream)
    release_completed()


def _on_free(key: int, root: Any) -> None:
    from torchplug._runtime.streams import Event

    with _lock:
        streams = _recorded.pop(key, [])
    events = []
    for stream in streams:
        event = Event(device=stream.device)
        event.record(stream)
        events.append(event)
    with _lock:
        _held.append((events, root))
    release_completed()


def release_completed() -> int:
    """Drop the held buffers whose recorded work has completed; returns how many are still held."""
    with _lock:
        keep = [(events, root) for events, root in _held if not all(e.query() for e in events)]
        _held[:] = keep
        return len(keep)


def held_count() -> int:
    """How many freed buffers are waiting for work on a recorded stream."""
    with _lock:
        return len(_held)
