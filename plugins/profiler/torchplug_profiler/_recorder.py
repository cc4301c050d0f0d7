"""Recording: the ``Profiler`` key's boxed fallback, the per-thread recording session and ``record_function``.

While a session records, the ``Profiler`` key is in the thread's TLS include set, so every dispatched call
(nested calls too: a composite's ops, autograd's backward ops) reaches :func:`profiler_fallback` first. It
opens an event, redispatches below the key and closes the event. Outside a session no key set has the bit:
the calls, their cache entries and kernels are exactly those of an unprofiled run.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any

from torchplug._dispatch.keys import lookup_key
from torchplug._dispatch.tls import tls

from ._events import EventList, FunctionEvent, current_thread_id

__all__ = ["Session", "profiler_fallback", "record_function", "active_session"]

PROFILER_MASK = lookup_key("Profiler").mask
_BELOW = ~PROFILER_MASK


class _State(threading.local):
    session: Session | None = None


_STATE = _State()


def active_session() -> Session | None:
    """The session recording on this thread, if any."""
    return _STATE.session


def _shape_of(arg: Any) -> list:
    shape = getattr(arg, "shape", None)
    if shape is not None and hasattr(arg, "_keyset"):
        return list(shape)
    if isinstance(arg, (list, tuple)) and arg and all(hasattr(a, "_keyset") for a in arg):
        return [list(a.shape) for a in arg]
    return []


_OWN_FILES = ("torchplug", "torchplug_")


def _user_stack() -> list[str]:
    """``file(line): function`` of the Python frames outside torchplug, innermost first."""
    frames = []
    f: Any = sys._getframe(2)
    while f is not None:
        filename = f.f_code.co_filename
        module = f.f_globals.get("__name__", "")
        if not (filename.startswith("<torchplug") or module.partition(".")[0].startswith(_OWN_FILES)
                or module.startswith(("contextlib", "importlib"))):
            frames.append(f"{filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


def _host_stats() -> Any:
    """The host (cpu) allocator's counters, for the memory columns; None without a cpu backend."""
    from torchplug._runtime.backends import registered_backends

    backend = registered_backends().get("cpu")
    allocator = getattr(backend, "allocator", None) if backend is not None else None
    return allocator.stats_for(0) if allocator is not None else None


class Session:
    """One recording on one thread: the finished events in call order and the open ones (a stack)."""

    def __init__(self, *, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events: list[FunctionEvent] = []
        self.open: list[tuple[FunctionEvent, int]] = []
        self.thread = current_thread_id()
        self.base_ns = time.perf_counter_ns()
        self.wall_base_ns = time.time_ns()
        self.stats = _host_stats() if profile_memory else None
        self._had_bit = False

    # -- enabling -------------------------------------------------------------------------------
    def start(self) -> None:
        if _STATE.session is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        _STATE.session = self
        self._had_bit = bool(tls.include & PROFILER_MASK)
        tls.include |= PROFILER_MASK
        tls.mask |= PROFILER_MASK

    def stop(self) -> EventList:
        if _STATE.session is self:
            _STATE.session = None
            if not self._had_bit:
                tls.include &= _BELOW
        while self.open:  # ranges left open (a record_function never exited): end them now
            self.close(self.open[-1][0])
        return EventList(self.events, profile_memory=self.profile_memory)

    # -- events ---------------------------------------------------------------------------------
    def begin(self, name: str, args: tuple = (), *, overload: str = "", annotation: bool = False) -> FunctionEvent:
        event = FunctionEvent(len(self.events), name, self.thread, 0.0, overload_name=overload,
                              is_user_annotation=annotation,
                              input_shapes=[_shape_of(a) for a in args] if self.record_shapes else None,
                              stack=_user_stack() if self.with_stack else None)
        if self.open:
            parent = self.open[-1][0]
            event.cpu_parent = parent
            parent.cpu_children.append(event)
        self.events.append(event)
        self.open.append((event, self.stats.cur_b if self.stats is not None else 0))
        event.start_us = (time.perf_counter_ns() - self.base_ns) / 1000.0
        return event

    def close(self, event: FunctionEvent) -> None:
        end = (time.perf_counter_ns() - self.base_ns) / 1000.0
        while self.open:
            top, mem_before = self.open.pop()
            top.end_us = end
            if self.stats is not None:
                top.cpu_memory_usage = self.stats.cur_b - mem_before
                top.self_cpu_memory_usage = top.cpu_memory_usage - sum(c.cpu_memory_usage for c in top.cpu_children)
            if top is event:
                return


def profiler_fallback(ks: int, op: Any, *args: Any) -> Any:
    """The ``Profiler`` key's kernel for every op: time the call (and its nested calls) as one event."""
    session = _STATE.session
    if session is None:  # the key was added to the TLS set by hand
        return op.redispatch(ks & _BELOW, *args)
    schema = op._entry.schema
    event = session.begin(f"{schema.namespace}::{schema.name}", args)
    try:
        return op.redispatch(ks & _BELOW, *args)
    finally:
        session.close(event)


class record_function(contextlib.ContextDecorator):
    """Label a block (``with record_function("name"):``) or a function (as a decorator) in the profile:
    it shows as one event whose children are the ops it ran. Costs nothing when no profile records."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._event: FunctionEvent | None = None
        self._session: Session | None = None

    def __enter__(self) -> record_function:
        session = _STATE.session
        if session is not None:
            self._session = session
            self._event = session.begin(self.name, annotation=True)
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self._event is not None and self._session is not None and self.run_callbacks_on_exit:
            self._session.close(self._event)
        self._event = self._session = None
        return False

    def _call_end_callbacks_on_future(self, fut: Any) -> Any:
        """PyTorch's hook for asynchronous work: the range ends now (nothing here runs asynchronously)."""
        self.run_callbacks_on_exit = False
        if self._event is not None and self._session is not None:
            self._session.close(self._event)
        return fut
