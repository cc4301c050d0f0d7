"""Native streams and events of the cuda device type: CuPy's on a GPU, synchronous when emulating.

The core's ``torchplug.cuda.Stream``/``Event`` wrap the native handles returned here; the
kernel guard runs each op on the thread's current stream (``with stream.native``), so work
queued inside ``with torchplug.cuda.stream(s):`` goes to ``s``.
"""

from __future__ import annotations

from typing import Any

from torchplug._runtime.streams import SynchronousStreams

from . import _runtime

__all__ = ["CudaStreams", "CupyStreams"]


class CupyStreams:
    """StreamProvider on ``cupy.cuda.Stream``/``cupy.cuda.Event``."""

    def new_stream(self, index: int, priority: int) -> Any:
        cp = _runtime.cupy()
        with cp.cuda.Device(index or 0):
            # CUDA priorities: lower is higher priority, as in torch.cuda.Stream(priority=-1).
            return cp.cuda.Stream(non_blocking=True, priority=priority) if priority else cp.cuda.Stream(non_blocking=True)

    def default_stream(self, index: int) -> Any:
        return _runtime.cupy().cuda.Stream.null

    def stream_query(self, native: Any) -> bool:
        return bool(native.done)

    def stream_synchronize(self, native: Any) -> None:
        native.synchronize()

    def stream_wait_event(self, native_stream: Any, native_event: Any) -> None:
        native_stream.wait_event(native_event)

    def new_event(self, index: int, enable_timing: bool, blocking: bool, interprocess: bool) -> Any:
        cp = _runtime.cupy()
        with cp.cuda.Device(index or 0):
            return cp.cuda.Event(block=blocking, disable_timing=not enable_timing, interprocess=interprocess)

    def event_record(self, native_event: Any, native_stream: Any) -> None:
        native_event.record(native_stream)

    def event_query(self, native_event: Any) -> bool:
        return bool(native_event.done)

    def event_synchronize(self, native_event: Any) -> None:
        native_event.synchronize()

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        return float(_runtime.cupy().cuda.get_elapsed_time(start, end))


class CudaStreams:
    """Delegates to :class:`CupyStreams` on a GPU and to the core's synchronous streams when emulating."""

    def __init__(self) -> None:
        self._sync = SynchronousStreams()
        self._cupy = CupyStreams()

    def _impl(self) -> Any:
        mode = _runtime.mode()
        if mode is None:
            raise RuntimeError(_runtime.unavailable_message())
        return self._cupy if mode == "cupy" else self._sync

    def new_stream(self, index: int, priority: int) -> Any:
        return self._impl().new_stream(index, priority)

    def default_stream(self, index: int) -> Any:
        return self._impl().default_stream(index)

    def stream_query(self, native: Any) -> bool:
        return self._impl().stream_query(native)

    def stream_synchronize(self, native: Any) -> None:
        self._impl().stream_synchronize(native)

    def stream_wait_event(self, native_stream: Any, native_event: Any) -> None:
        self._impl().stream_wait_event(native_stream, native_event)

    def new_event(self, index: int, enable_timing: bool, blocking: bool, interprocess: bool) -> Any:
        return self._impl().new_event(index, enable_timing, blocking, interprocess)

    def event_record(self, native_event: Any, native_stream: Any) -> None:
        self._impl().event_record(native_event, native_stream)

    def event_query(self, native_event: Any) -> bool:
        return self._impl().event_query(native_event)

    def event_synchronize(self, native_event: Any) -> None:
        self._impl().event_synchronize(native_event)

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        return self._impl().event_elapsed_time(start, end)
