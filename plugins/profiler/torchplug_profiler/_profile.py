"""``torchplug.profiler.profile`` and its schedule (PyTorch's ``torch.profiler.profile`` semantics, CPU only)."""

from __future__ import annotations

import enum
import os
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from ._events import EventList, _host_name, write_chrome_trace
from ._recorder import Session, record_function

__all__ = ["ProfilerActivity", "ProfilerAction", "DeviceType", "profile", "schedule", "tensorboard_trace_handler",
           "supported_activities", "kineto_available"]


class ProfilerActivity(enum.Enum):
    """The activity groups PyTorch's profiler knows; this profiler records ``CPU`` (every dispatched op)."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self) -> str:
        return f"<ProfilerActivity.{self.name}: {self.value}>"


class ProfilerAction(enum.Enum):
    """What the profiler does at a step (a ``schedule``'s answer)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


class DeviceType(enum.Enum):
    """The device of an event (PyTorch's ``torch.profiler.DeviceType``); every recorded event is ``CPU``."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 14
    Meta = 15
    HPU = 16
    VE = 17
    Lazy = 18
    IPU = 19
    PrivateUse1 = 20


def supported_activities() -> set[ProfilerActivity]:
    """The activities this profiler can record: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """PyTorch's Kineto library is not used here: events come from the dispatcher's ``Profiler`` key."""
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A ``step -> ProfilerAction`` function: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (the last saves), ``repeat`` times (0: until the end)."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} (need >= 0), "
            f"active={active} (need > 0), repeat={repeat} (need >= 0), skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing ``<dir_name>/<worker>.<time_ns>.pt.trace.json`` (Chrome trace;
    ``.gz`` with ``use_gzip``), the layout TensorBoard's profiler plugin reads."""

    def handler_fn(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{_host_name()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


_WARNED_CYCLES = False


class profile:
    """Record the ops the enclosed code dispatches (``with profile(...) as prof:``), optionally on a
    ``schedule`` advanced by ``prof.step()``; ``on_trace_ready(prof)`` runs when a recorded cycle ends.

    Events are recorded on the thread that entered the profile. ``record_shapes`` keeps each op's input
    shapes, ``profile_memory`` the host memory each op allocated (net of frees), ``with_stack`` the Python
    frames outside torchplug. Only CPU activity exists here: other activities are ignored with a warning.
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[[Any], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        requested = set(activities) if activities is not None else supported_activities()
        if len(requested) == 0:
            raise AssertionError("No valid profiler activities found")
        unsupported = requested - supported_activities()
        if use_cuda:
            unsupported.add(ProfilerActivity.CUDA)
        if unsupported:
            warnings.warn(f"Unsupported profiler activities {sorted(a.name for a in unsupported)}: torchplug's "
                          "profiler records CPU activity (every dispatched op) only", UserWarning, stacklevel=2)
        self.activities = requested
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = schedule is not None  # PyTorch marks steps only under a schedule
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: record_function | None = None
        self._session: Session | None = None
        self._events: EventList | None = None
        self._base_ns = 0

    # -- context ---------------------------------------------------------------------------------
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        """Begin profiling (``__enter__`` calls it)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        """End profiling; a recording in progress is finished and handed to ``on_trace_ready``."""
        self._close_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signal that the next step (e.g. training iteration) begins: advances the schedule."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self) -> None:
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step(self) -> None:
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _transit(self, prev: ProfilerAction, current: ProfilerAction | None) -> None:
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev in recording and (current not in recording or prev is ProfilerAction.RECORD_AND_SAVE):
            if prev is ProfilerAction.RECORD and current is not None:
                warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}", stacklevel=3)
            self._stop_trace()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if current in recording and self._session is None:
            self._start_trace()

    def _start_trace(self) -> None:
        global _WARNED_CYCLES
        if self._events is not None and not self.acc_events and not _WARNED_CYCLES:
            _WARNED_CYCLES = True  # once per process, as PyTorch warns
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.", stacklevel=4)
        self._session = Session(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                with_stack=self.with_stack)
        self._session.start()

    def _stop_trace(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            self._events = session.stop()
            self._base_ns = session.wall_base_ns

    # -- results ---------------------------------------------------------------------------------
    def events(self) -> EventList:
        """The events of the last finished recording, in call order."""
        if self._events is None:
            raise AssertionError("Expected profiling results, but no recording has finished yet")
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events averaged per op name (and input shapes / first ``n`` stack frames when asked)."""
        if group_by_input_shape and not self.record_shapes:
            raise AssertionError("group_by_input_shape requires record_shapes=True")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str) -> None:
        """Write the last recording as a Chrome trace JSON file (gzip-compressed if ``path`` ends in ``.gz``)."""
        events = self.events()
        if path.endswith(".gz"):
            import gzip
            import tempfile

            with tempfile.NamedTemporaryFile("w+b", suffix=".json", delete=False) as fp:
                tmp = fp.name
            write_chrome_trace(events, tmp, base_ns=self._base_ns, record_shapes=self.record_shapes,
                               profile_memory=self.profile_memory)
            with open(tmp, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
            return
        write_chrome_trace(events, path, base_ns=self._base_ns, record_shapes=self.record_shapes,
                           profile_memory=self.profile_memory)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write ``frame;frame;... <microseconds>`` lines (flame-graph input); needs ``with_stack=True``."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        with open(path, "w", encoding="utf-8") as f:
            for event in self.events():
                if event.stack:
                    value = int(getattr(event, metric.replace("cuda", "device")))
                    f.write(";".join(reversed(event.stack)) + f";{event.name} {value}\n")

    def add_metadata(self, key: str, value: str) -> None:
        """Accepted for compatibility; the trace carries no user metadata here."""

    def add_metadata_json(self, key: str, value: str) -> None:
        """Accepted for compatibility; the trace carries no user metadata here."""
