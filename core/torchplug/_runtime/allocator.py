"""The allocator protocol's standard implementation: exact memory statistics, events, history, snapshots.

Every backend gets a :class:`DeviceAllocator` (its own, or the core's default).  A backend accounts
a fresh buffer by giving its tensor a :class:`TrackedStorage` built with the per-device
:class:`DeviceStats` from :meth:`DeviceAllocator.stats_for`; the storage's ``__del__`` accounts the
free.  Views share their base's storage, so they allocate nothing.

Two paths:

- **fast** (the default): a handful of integer updates in ``TrackedStorage.__init__``/``__del__``;
  no dict, no call, no lookup.
- **slow** (only while a replacement allocator, an event callback or history recording is
  installed for the device type): the allocation also goes to the replacement allocator, to
  every subscriber (:class:`MemoryEvent`) and to the history ring buffer.

Statistics follow PyTorch's ``memory_stats()`` key layout.  These allocators do not cache, so
every allocation is its own segment: ``reserved_bytes`` equals ``allocated_bytes``, ``segment``
equals ``allocation``, ``active`` equals ``allocation``, nothing is ever an inactive split, and
sizes are not rounded (``requested_bytes`` equals ``allocated_bytes``).  The large pool holds
allocations above 1 MiB, as in PyTorch.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from torchplug._dispatch.codegen import observe_entry_frames
from torchplug._runtime.storage import Storage

__all__ = [
    "SMALL_SIZE", "DeviceStats", "TrackedStorage", "DeviceAllocator", "MemoryEvent", "Subscription",
    "OutOfMemoryError", "STAT_NAMES", "POOLS", "METRICS", "subscribe", "current_op", "rehome",
]

SMALL_SIZE = 1 << 20  # PyTorch's kSmallSize: allocations up to 1 MiB go to the small pool
STAT_NAMES = ("active", "active_bytes", "allocated_bytes", "allocation", "inactive_split", "inactive_split_bytes",
              "requested_bytes", "reserved_bytes", "segment")
POOLS = ("all", "large_pool", "small_pool")
METRICS = ("allocated", "current", "freed", "peak")
_BYTE_STATS = frozenset({"active_bytes", "allocated_bytes", "requested_bytes", "reserved_bytes", "inactive_split_bytes"})


class OutOfMemoryError(RuntimeError):
    """A device (or a replacement allocator) could not provide the memory asked for."""


class DeviceStats:
    """Counters of one device (type and index).  Current values, peaks and totals, all and large pool;
    the small pool is derived as ``all - large`` except for its peaks, which are tracked."""

    __slots__ = (
        "allocator", "index", "slow",
        "cur_b", "cur_n", "peak_b", "peak_n", "tot_b", "tot_n",          # all pools
        "lcur_b", "lcur_n", "lpeak_b", "lpeak_n", "ltot_b", "ltot_n",    # large pool
        "speak_b", "speak_n",                                            # small-pool peaks
        "base", "num_ooms",
    )

    def __init__(self, allocator: DeviceAllocator, index: int) -> None:
        self.allocator = allocator
        self.index = index
        self.slow = False
        self.cur_b = self.cur_n = self.peak_b = self.peak_n = self.tot_b = self.tot_n = 0
        self.lcur_b = self.lcur_n = self.lpeak_b = self.lpeak_n = self.ltot_b = self.ltot_n = 0
        self.speak_b = self.speak_n = 0
        self.base = (0, 0, 0, 0, 0, 0, 0, 0)  # accumulated counters at the last reset (see stats())
        self.num_ooms = 0

    # The same updates as TrackedStorage's fast path, for the slow path and raw allocate().
    def add(self, n: int) -> None:
        self.tot_n += 1
        self.tot_b += n
        c = self.cur_b + n
        self.cur_b = c
        if c > self.peak_b:
            self.peak_b = c
        k = self.cur_n + 1
        self.cur_n = k
        if k > self.peak_n:
            self.peak_n = k
        if n > SMALL_SIZE:
            self.ltot_n += 1
            self.ltot_b += n
            self.lcur_b += n
            self.lcur_n += 1
            if self.lcur_b > self.lpeak_b:
                self.lpeak_b = self.lcur_b
            if self.lcur_n > self.lpeak_n:
                self.lpeak_n = self.lcur_n
        else:
            if c - self.lcur_b > self.speak_b:
                self.speak_b = c - self.lcur_b
            if k - self.lcur_n > self.speak_n:
                self.speak_n = k - self.lcur_n

    def sub(self, n: int) -> None:
        self.cur_b -= n
        self.cur_n -= 1
        if n > SMALL_SIZE:
            self.lcur_b -= n
            self.lcur_n -= 1

    def release(self, storage: TrackedStorage) -> None:
        """Free of a fast-path allocation while the slow path is on (events still fire)."""
        self.sub(storage._nbytes)
        self.allocator._after_free(self, storage, None)

    def stats(self) -> dict[str, int]:
        """This device's ``memory_stats()`` in PyTorch's layout (sorted keys)."""
        b_tot, b_n, b_freed_b, b_freed_n, bl_tot, bl_n, bl_freed_b, bl_freed_n = self.base
        all_b = (self.cur_b, self.peak_b, self.tot_b - b_tot, self.tot_b - self.cur_b - b_freed_b)
        all_n = (self.cur_n, self.peak_n, self.tot_n - b_n, self.tot_n - self.cur_n - b_freed_n)
        lg_b = (self.lcur_b, self.lpeak_b, self.ltot_b - bl_tot, self.ltot_b - self.lcur_b - bl_freed_b)
        lg_n = (self.lcur_n, self.lpeak_n, self.ltot_n - bl_n, self.ltot_n - self.lcur_n - bl_freed_n)
        sm_b = (all_b[0] - lg_b[0], self.speak_b, all_b[2] - lg_b[2], all_b[3] - lg_b[3])
        sm_n = (all_n[0] - lg_n[0], self.speak_n, all_n[2] - lg_n[2], all_n[3] - lg_n[3])
        pools = {"all": (all_b, all_n), "large_pool": (lg_b, lg_n), "small_pool": (sm_b, sm_n)}
        out: dict[str, int] = {}
        for stat in STAT_NAMES:
            for pool in POOLS:
                b, n = pools[pool]
                values = (0, 0, 0, 0) if stat.startswith("inactive_split") else (b if stat in _BYTE_STATS else n)
                cur, peak, alloc, freed = values
                for metric, v in zip(METRICS, (alloc, cur, freed, peak)):
                    out[f"{stat}.{pool}.{metric}"] = v
        out["num_alloc_retries"] = 0
        out["num_device_alloc"] = all_n[2]
        out["num_device_free"] = all_n[3]
        out["num_ooms"] = self.num_ooms
        out["num_sync_all_streams"] = 0
        out["max_split_size"] = -1
        for name in ("oversize_allocations", "oversize_segments"):
            for metric in METRICS:
                out[f"{name}.{metric}"] = 0
        return dict(sorted(out.items()))

    def reset_peaks(self) -> None:
        self.peak_b, self.peak_n = self.cur_b, self.cur_n
        self.lpeak_b, self.lpeak_n = self.lcur_b, self.lcur_n
        self.speak_b, self.speak_n = self.cur_b - self.lcur_b, self.cur_n - self.lcur_n

    def save_peaks(self) -> tuple[int, ...]:
        return (self.peak_b, self.peak_n, self.lpeak_b, self.lpeak_n, self.speak_b, self.speak_n)

    def restore_peaks(self, saved: tuple[int, ...]) -> None:
        """Undo peaks raised by buffers that were later :func:`rehome`-d to another device."""
        self.peak_b = max(saved[0], self.cur_b)
        self.peak_n = max(saved[1], self.cur_n)
        self.lpeak_b = max(saved[2], self.lcur_b)
        self.lpeak_n = max(saved[3], self.lcur_n)
        self.speak_b = max(saved[4], self.cur_b - self.lcur_b)
        self.speak_n = max(saved[5], self.cur_n - self.lcur_n)

    def reset_accumulated(self) -> None:
        self.base = (self.tot_b, self.tot_n, self.tot_b - self.cur_b, self.tot_n - self.cur_n,
                     self.ltot_b, self.ltot_n, self.ltot_b - self.lcur_b, self.ltot_n - self.lcur_n)
        self.num_ooms = 0


class _Block:
    """Bookkeeping of one slow-path allocation (held in the storage's ``allocation`` slot)."""

    __slots__ = ("stats", "handle", "replacement", "stream", "op", "addr", "frames")
    slow = True

    def __init__(self, stats: DeviceStats, handle: Any, replacement: Any, stream: Any, op: str | None,
                 addr: int, frames: list[dict[str, Any]]) -> None:
        self.stats = stats
        self.handle = handle
        self.replacement = replacement
        self.stream = stream
        self.op = op
        self.addr = addr
        self.frames = frames

    def release(self, storage: TrackedStorage) -> None:
        stats = self.stats
        stats.sub(storage._nbytes)
        if self.replacement is not None:
            self.replacement.free(self.handle, storage._nbytes, stats.index, self.stream)
        stats.allocator._after_free(stats, storage, self)


class _Nothing:
    """``allocation`` of a storage whose allocation failed or was freed explicitly: frees nothing."""

    __slots__ = ()
    slow = True

    def release(self, storage: Any) -> None:
        return None


_NOTHING = _Nothing()


class TrackedStorage(Storage):
    """A Storage whose creation and destruction are accounted to a device's allocator.

    ``TrackedStorage(nbytes, device, data, stats)``: ``stats`` is the :class:`DeviceStats` of the
    device (``DeviceAllocator.stats_for(index)``), looked up once by the backend, not per call.
    """

    __slots__ = ()

    def __init__(self, nbytes: int, dev: Any, data: Any, stats: DeviceStats) -> None:
        self.version = 0
        self._nbytes = nbytes
        self.device = dev
        self.data = data
        if stats.slow:
            self.allocation = _NOTHING  # in case the replacement allocator refuses
            stats.allocator._slow_alloc(stats, self)
            return
        self.allocation = stats
        # Inlined DeviceStats.add: this runs once per fresh tensor on every accounted backend.
        stats.tot_n += 1
        stats.tot_b += nbytes
        c = stats.cur_b + nbytes
        stats.cur_b = c
        if c > stats.peak_b:
            stats.peak_b = c
        k = stats.cur_n + 1
        stats.cur_n = k
        if k > stats.peak_n:
            stats.peak_n = k
        if nbytes > 1048576:  # SMALL_SIZE, as a literal: no global lookup on the hot path
            stats.ltot_n += 1
            stats.ltot_b += nbytes
            stats.lcur_b += nbytes
            stats.lcur_n += 1
            if stats.lcur_b > stats.lpeak_b:
                stats.lpeak_b = stats.lcur_b
            if stats.lcur_n > stats.lpeak_n:
                stats.lpeak_n = stats.lcur_n
        else:
            if c - stats.lcur_b > stats.speak_b:
                stats.speak_b = c - stats.lcur_b
            if k - stats.lcur_n > stats.speak_n:
                stats.speak_n = k - stats.lcur_n

    def __del__(self) -> None:
        a = self.allocation
        if a.slow:  # a slow-path block, a freed one, or the slow path is on for this device
            a.release(self)
            return
        n = self._nbytes
        a.cur_b -= n
        a.cur_n -= 1
        if n > 1048576:  # SMALL_SIZE
            a.lcur_b -= n
            a.lcur_n -= 1


class MemoryEvent:
    """One allocation or free, as subscribers and the history see it.

    Attributes: ``action`` (``'alloc'`` or ``'free'``), ``nbytes``, ``device`` (a
    ``torchplug.device``), ``stream`` (the current ``torchplug.Stream`` of that device, or None),
    ``op`` (the innermost operator being dispatched, e.g. ``'aten::add.Tensor'``, or None),
    ``addr`` (the block's address, unique among live blocks), ``time_ns``.
    """

    __slots__ = ("action", "nbytes", "device", "stream", "op", "addr", "time_ns")

    def __init__(self, action: str, nbytes: int, device: Any, stream: Any, op: str | None, addr: int) -> None:
        self.action = action
        self.nbytes = nbytes
        self.device = device
        self.stream = stream
        self.op = op
        self.addr = addr
        self.time_ns = time.perf_counter_ns()

    def __repr__(self) -> str:
        return f"MemoryEvent({self.action}, {self.nbytes} bytes, {self.device}, op={self.op})"


class Subscription:
    """A memory-event subscription; ``close()`` (or leaving a ``with`` block) removes it."""

    def __init__(self, callback: Callable[[MemoryEvent], None], allocators: list[DeviceAllocator]) -> None:
        self.callback = callback
        self.allocators = allocators
        for a in allocators:
            a._callbacks.append(callback)
            a._refresh_mode()

    def close(self) -> None:
        for a in self.allocators:
            if self.callback in a._callbacks:
                a._callbacks.remove(self.callback)
                a._refresh_mode()
        self.allocators = []

    remove = close

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_ENTRY_PREFIX = "<torchplug entry "


def current_op() -> str | None:
    """The innermost operator entry point on the Python stack (slow path only: it walks frames)."""
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith(_ENTRY_PREFIX):
            return name[len(_ENTRY_PREFIX):-1]
        f = f.f_back
    return None


def _python_frames(limit: int = 16) -> list[dict[str, Any]]:
    frames = []
    f = sys._getframe(3)
    while f is not None and len(frames) < limit:
        frames.append({"filename": f.f_code.co_filename, "line": f.f_lineno, "name": f.f_code.co_name})
        f = f.f_back
    return frames


class DeviceAllocator:
    """The allocator of one device type: statistics, replacement allocator, events, history, snapshot.

    Args:
        device_type: the device type it serves.
        address_of: ``(storage) -> int``, the device address of a storage's buffer; defaults to
            the storage's ``id`` (an opaque address, unique among live blocks).
        host_memory: True when the buffers are host (NumPy) memory that a replacement allocator
            can observe and veto but not provide.
    """

    def __init__(self, device_type: str, *, address_of: Callable[[Any], int] | None = None,
                 host_memory: bool = False) -> None:
        self.device_type = device_type
        self.address_of = address_of or id
        self.host_memory = host_memory
        self._stats: dict[int, DeviceStats] = {}
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[MemoryEvent], None]] = []
        self._replacement: Any = None
        self._history: deque[dict[str, Any]] | None = None
        self._history_stacks = False
        self._history_index: int | None = None
        self._live: dict[int, _Block] = {}

    # -- device stats ---------------------------------------------------------------------------
    def stats_for(self, index: int | None) -> DeviceStats:
        """The counters of device ``index`` (``None`` means 0); backends cache the result."""
        index = index or 0
        found = self._stats.get(index)
        if found is None:
            with self._lock:
                found = self._stats.setdefault(index, DeviceStats(self, index))
                found.slow = self._slow()
        return found

    def memory_stats(self, index: int | None = None) -> dict[str, int]:
        return self.stats_for(index).stats()

    def reset_peak_memory_stats(self, index: int | None = None) -> None:
        self.stats_for(index).reset_peaks()

    def reset_accumulated_memory_stats(self, index: int | None = None) -> None:
        self.stats_for(index).reset_accumulated()

    def empty_cache(self) -> None:
        """Nothing is cached here; a replacement allocator with ``empty_cache()`` is asked to release."""
        release = getattr(self._replacement, "empty_cache", None)
        if release is not None:
            release()

    # -- raw allocation (backends whose buffers are not Storages; tests) -----------------------
    def allocate(self, nbytes: int, device: Any = None, stream: Any = None) -> TrackedStorage:
        """Account ``nbytes`` on device ``device`` (index or torchplug.device); returns the handle
        to pass to :meth:`free`.  Goes through the replacement allocator and events like any buffer."""
        from torchplug._runtime.device import device as _device

        index = device if isinstance(device, int) or device is None else _device(device).index
        try:
            dev: Any = _device(self.device_type, index) if index is not None else _device(self.device_type)
        except RuntimeError:  # an allocator not (yet) attached to a registered device type
            dev = self.device_type if index is None else f"{self.device_type}:{index}"
        return TrackedStorage(int(nbytes), dev, None, self.stats_for(index))

    def free(self, handle: TrackedStorage) -> None:
        """Free an allocation from :meth:`allocate` now (the handle may stay referenced)."""
        a = handle.allocation
        handle.allocation = _NOTHING
        if a.slow:
            a.release(handle)
        else:
            a.sub(handle._nbytes)

    # -- replacement allocator ------------------------------------------------------------------
    def change_current_allocator(self, replacement: Any) -> Any:
        """Route every allocation of this device type through ``replacement`` (None restores the
        default); returns the previous one.  ``replacement.allocate(nbytes, device_index, stream)``
        returns a handle, ``replacement.free(handle, nbytes, device_index, stream)`` releases it;
        both see every buffer the backend creates.  On host-memory backends NumPy still owns the
        bytes: the replacement accounts, pools or vetoes (raise ``OutOfMemoryError``)."""
        if replacement is not None:
            from torchplug._runtime.contract import check_members

            check_members(replacement, "ReplacementAllocator", f"replacement allocator for {self.device_type!r}")
        previous = self._replacement
        self._replacement = replacement
        self._refresh_mode()
        return previous

    def get_current_allocator(self) -> Any:
        return self._replacement

    # -- events and history ---------------------------------------------------------------------
    def subscribe(self, callback: Callable[[MemoryEvent], None]) -> Subscription:
        """Call ``callback(MemoryEvent)`` on every alloc/free of this device type."""
        return Subscription(callback, [self])

    def record_memory_history(self, enabled: str | None = "all", context: str | None = "all", stacks: str = "python",
                              max_entries: int = sys.maxsize, device: Any = None, clear_history: bool = False) -> None:
        """Start (``enabled='all'``/``'state'``) or stop (``None``) recording alloc/free traces."""
        if enabled not in (None, "all", "state"):
            raise ValueError(f"enabled must be None, 'all' or 'state', got {enabled!r}")
        if enabled is None:
            self._history = None
        else:
            old = self._history if self._history is not None and not clear_history else ()
            self._history = deque(old, maxlen=None if max_entries >= sys.maxsize else max_entries)
            self._history_stacks = context in ("all", "alloc") and stacks in ("python", "all")
        self._refresh_mode()

    def snapshot(self) -> dict[str, Any]:
        """Live blocks and recorded traces in the documented snapshot format (docs/accelerators.md)."""
        by_index: dict[int, list[dict[str, Any]]] = {}
        for obj in gc.get_objects():
            # type(), not isinstance(): some foreign objects warn when their __class__ is read
            if issubclass(type(obj), TrackedStorage):
                a = obj.allocation
                stats = a if a.__class__ is DeviceStats else getattr(a, "stats", None)
                if stats is None or stats.allocator is not self:
                    continue
                block = a if a.__class__ is _Block else None
                addr = block.addr if block is not None else self._addr(obj)
                by_index.setdefault(stats.index, []).append({
                    "device": stats.index, "address": addr, "total_size": obj.nbytes, "allocated_size": obj.nbytes,
                    "active_size": obj.nbytes, "requested_size": obj.nbytes,
                    "stream": _stream_id(block.stream if block is not None else None),
                    "segment_type": "large" if obj.nbytes > SMALL_SIZE else "small",
                    "segment_pool_id": (0, 0), "is_expandable": False,
                    "blocks": [{"address": addr, "size": obj.nbytes, "requested_size": obj.nbytes,
                                "state": "active_allocated", "frames": block.frames if block is not None else []}],
                })
        segments = [s for i in sorted(by_index) for s in sorted(by_index[i], key=lambda s: s["address"])]
        n = max([*self._stats, 0]) + 1
        traces: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for entry in self._history or ():
            traces[entry["device"]].append(dict(entry))
        return {"version": 1, "device_type": self.device_type, "segments": segments, "device_traces": traces}

    # -- slow path --------------------------------------------------------------------------------
    def _slow(self) -> bool:
        return bool(self._callbacks) or self._replacement is not None or self._history is not None

    def _refresh_mode(self) -> None:
        slow = self._slow()
        for stats in list(self._stats.values()):
            stats.slow = slow
        # events name their op from the entry point's Python frame (current_op): no C entry points meanwhile
        observe_entry_frames(self, bool(self._callbacks) or self._history is not None)

    def _addr(self, storage: Any) -> int:
        try:
            return int(self.address_of(storage)) or id(storage)
        except Exception:  # noqa: BLE001 - an address is informative only
            return id(storage)

    def _slow_alloc(self, stats: DeviceStats, storage: TrackedStorage) -> None:
        nbytes = storage._nbytes
        stream = _current_stream(storage.device)
        replacement = self._replacement
        handle = None
        if replacement is not None:
            try:
                handle = replacement.allocate(nbytes, stats.index, stream)
            except OutOfMemoryError:
                stats.num_ooms += 1
                raise
        stats.add(nbytes)
        op = current_op() if (self._callbacks or self._history is not None) else None
        frames = _python_frames() if self._history is not None and self._history_stacks else []
        block = _Block(stats, handle, replacement, stream, op, self._addr(storage), frames)
        storage.allocation = block
        self._emit("alloc", stats, storage, block.addr, stream, op, frames)

    def _after_free(self, stats: DeviceStats, storage: TrackedStorage, block: _Block | None) -> None:
        if not (self._callbacks or self._history is not None):
            return
        addr = block.addr if block is not None else self._addr(storage)
        stream = block.stream if block is not None else None
        self._emit("free", stats, storage, addr, stream, current_op(), [])

    def _emit(self, action: str, stats: DeviceStats, storage: Any, addr: int, stream: Any, op: str | None,
              frames: list[dict[str, Any]]) -> None:
        nbytes = storage._nbytes
        if self._callbacks:
            event = MemoryEvent(action, nbytes, storage.device, stream, op, addr)
            for cb in list(self._callbacks):
                cb(event)
        history = self._history
        if history is not None:
            t = time.perf_counter_ns() // 1000
            base = {"addr": addr, "size": nbytes, "stream": _stream_id(stream), "device": stats.index,
                    "device_free": 0, "op": op, "frames": frames, "time_us": t}
            if action == "alloc":
                history.append({"action": "alloc", **base})
            else:
                history.append({"action": "free_requested", **base})
                history.append({"action": "free_completed", **base})


def _current_stream(dev: Any) -> Any:
    try:
        from torchplug._runtime.streams import current_stream_if_set

        return current_stream_if_set(dev)
    except Exception:  # noqa: BLE001 - streams are informative here
        return None


def _stream_id(stream: Any) -> int:
    return 0 if stream is None else int(getattr(stream, "stream_id", 0))


def subscribe(callback: Callable[[MemoryEvent], None], device_type: str | None = None) -> Subscription:
    """Call ``callback(MemoryEvent)`` on every alloc/free of ``device_type`` (every registered
    backend's allocator when None; backends registered later are not included)."""
    from torchplug._runtime.contract import allocator_of
    from torchplug._runtime.backends import registered_backends

    types = [device_type] if device_type is not None else list(registered_backends())
    return Subscription(callback, [allocator_of(t) for t in types])


def rehome(storage: TrackedStorage, dev: Any, stats: DeviceStats) -> TrackedStorage:
    """A storage for the same buffer accounted to ``stats`` (device ``dev``); the old device's
    counters forget the buffer as if it had never been allocated there.  For emulating backends
    that run another backend's kernels (torchplug-mps on NumPy)."""
    old = storage.allocation
    n = storage._nbytes
    if old.__class__ is DeviceStats:
        old.sub(n)
        old.tot_b -= n
        old.tot_n -= 1
        if n > SMALL_SIZE:
            old.ltot_b -= n
            old.ltot_n -= 1
    elif old.__class__ is _Block:
        old.release(storage)  # the replacement allocator / subscribers of the old device see a free
    storage.allocation = _NOTHING
    new = TrackedStorage(n, dev, storage.data, stats)
    new.version = storage.version
    return new
