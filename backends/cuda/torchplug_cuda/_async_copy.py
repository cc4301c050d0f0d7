"""``copy_(..., non_blocking=True)`` between pinned host memory and a GPU, as an asynchronous copy.

PyTorch starts a host<->device copy asynchronously on the current stream when ``non_blocking``
is set and the host side is page-locked (``pin_memory()``); the caller synchronizes (an event,
``synchronize()``) before reading a device-to-host result.  CuPy offers the same through
``ndarray.set(host, stream)`` and ``ndarray.get(stream, out=host)``, which are asynchronous
exactly when the host buffer is pinned.

Only plain copies take this path: same dtype, same shape, both sides contiguous.  Anything else
(a cast, a broadcast, a strided view, pageable memory) needs the synchronous kernel, as in PyTorch
where such copies go through a staging step.

While a copy is in flight its host buffer must stay alive and unreused, which PyTorch's caching
host allocator ensures with an event per block; here the copy keeps a reference to the host
array with an event recorded after the copy, dropped once the event completes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["copy_async", "in_flight"]

_IN_FLIGHT: list[tuple[Any, Any]] = []  # (event recorded after the copy, host array it reads or writes)


def _plain(dst: Any, src: Any) -> bool:
    a, b = dst._data, src._data
    return (dst._dtype is src._dtype and a.shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous)


def _forget_finished() -> None:
    _IN_FLIGHT[:] = [(event, host) for event, host in _IN_FLIGHT if not event.done]


def in_flight() -> int:
    """How many asynchronous copies still hold their host buffers (finished ones are dropped)."""
    _forget_finished()
    return len(_IN_FLIGHT)


def copy_async(dst: Any, src: Any, pinning: Any, cp: Any) -> bool:
    """Start ``dst.copy_(src)`` asynchronously on CuPy's current stream and return True, or return
    False when it must be synchronous (see the module docstring); ``pinning`` answers is_pinned."""
    dst_host = dst._device.type != "cuda"
    src_host = src._device.type != "cuda"
    if dst_host == src_host or not _plain(dst, src):
        return False
    host = dst._data if dst_host else src._data
    if not pinning.is_pinned(host):
        return False
    stream = cp.cuda.get_current_stream()
    if dst_host:
        src._data.get(stream=stream, out=host)
    else:
        dst._data.set(host, stream=stream)
    _forget_finished()
    _IN_FLIGHT.append((stream.record(), host))
    return True
