"""What a profile recorded: ``FunctionEvent``, their per-key averages and ``EventList`` with PyTorch's
``table()`` and Chrome-trace export (``torch.autograd.profiler_util``'s classes and layout)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList", "format_time", "format_memory"]


def format_time(time_us: float) -> str:
    """``1.234ms``-style text for a duration in microseconds, as PyTorch prints it."""
    if time_us >= 1_000_000.0:
        return f"{time_us / 1_000_000.0:.3f}s"
    if time_us >= 1000.0:
        return f"{time_us / 1000.0:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def format_memory(nbytes: int) -> str:
    """``12.00 KB``-style text for a byte count, as PyTorch prints it."""
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return f"{nbytes} B"


class _TimeStrings:
    """The ``*_str`` properties PyTorch's events have."""

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)  # type: ignore[attr-defined]

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)  # type: ignore[attr-defined]

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)  # type: ignore[attr-defined]

    # no device activity is recorded: PyTorch's device fields, always zero here
    device_time_total = 0.0
    self_device_time_total = 0.0
    device_time = 0.0
    device_memory_usage = 0
    self_device_memory_usage = 0
    flops = 0
    is_async = False
    is_legacy = False
    use_device = None
    node_id = -1


class FunctionEvent(_TimeStrings):
    """One recorded call: an op (``aten::add``) or a ``record_function`` range. Times are microseconds
    from the profile's start; ``cpu_parent``/``cpu_children`` give the nesting."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, *, input_shapes: list | None = None,
                 stack: list[str] | None = None, overload_name: str = "", is_user_annotation: bool = False,
                 sequence_nr: int = -1) -> None:
        self.id = id
        self.trace_name = name
        if name.startswith("ProfilerStep#"):  # the steps aggregate in the table, as PyTorch's do
            name = "ProfilerStep*"
        self.name = name
        self.key = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.overload_name = overload_name
        self.is_user_annotation = is_user_annotation
        self.sequence_nr = sequence_nr
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.count = 1
        self.device_type = "CPU"

    @property
    def time_range(self) -> tuple[float, float]:
        return (self.start_us, self.end_us)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_TimeStrings):
    """The events that share a key (name, and input shapes or stack when grouped by them), summed."""

    def __init__(self) -> None:
        self.key: str | None = None
        self.name: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes: list | None = None
        self.stack: list[str] | None = None
        self.overload_name: str | None = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_parent = None
        self.is_user_annotation = False
        self.device_type = "CPU"

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Fold ``other`` (an event or an average of the same key) into this average."""
        if self.key is None:
            self.key = other.key
            self.name = other.name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.overload_name = other.overload_name
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = getattr(other, "cpu_parent", None)
        elif other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {self.key} vs {other.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class EventList(list):
    """A list of events (or averages) with PyTorch's ``table``, ``key_averages`` and trace export."""

    def __init__(self, *args: Any, profile_memory: bool = False, **kwargs: Any) -> None:
        super().__init__(*args)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self) -> float:
        return sum(event.self_cpu_time_total for event in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One ``FunctionEventAvg`` per name (and input shapes / first ``n`` stack frames / overload when asked)."""
        stats: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            key: tuple = (event.key,)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(event.stack[:group_by_stack_n])
            if group_by_overload_name:
                key += (event.overload_name,)
            stats.setdefault(key, FunctionEventAvg()).add(event)
        averages = EventList(stats.values(), profile_memory=self._profile_memory)
        for avg in averages:
            if not group_by_input_shapes:
                avg.input_shapes = None
            avg.stack = avg.stack[:group_by_stack_n] if avg.stack else None
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one average with the key ``Total``."""
        total = FunctionEventAvg()
        for event in self:
            total.count += event.count
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
            total.cpu_memory_usage += event.cpu_memory_usage
            total.self_cpu_memory_usage += event.self_cpu_memory_usage
        total.key = total.name = "Total"
        return total

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's text table, sorted (descending) by the attribute ``sort_by``, e.g.
        ``"cpu_time_total"`` or ``"self_cpu_memory_usage"``."""
        return build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                           max_src_column_width=max_src_column_width, max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width, profile_memory=self._profile_memory,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON, ``chrome://tracing`` / Perfetto / TensorBoard)."""
        write_chrome_trace(self, path)


def _sort_key(sort_by: str) -> Any:
    name = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
    return lambda event: getattr(event, name)


def build_table(events: EventList, *, sort_by: str | None, header: str | None, row_limit: int,
                max_src_column_width: int, max_name_column_width: int, max_shapes_column_width: int,
                profile_memory: bool, top_level_events_only: bool, time_unit: str | None) -> str:
    """PyTorch's profiler table (the CPU columns; no device activity is recorded here)."""
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        if not hasattr(rows[0], sort_by.replace("cuda", "device")):
            raise AttributeError(f"'{type(rows[0]).__name__}' object has no attribute '{sort_by}'")
        rows.sort(key=_sort_key(sort_by), reverse=True)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in rows)
    has_overload = any(e.overload_name for e in rows)
    stacks = [e.stack for e in rows if e.stack]
    name_width = min(max(len(e.key) for e in rows) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_column_width)
    src_width = min(max(len(entry) for s in stacks for entry in s) + 4, max_src_column_width) if stacks else 0

    headers = ["Name"] + (["Overload Name"] if has_overload else [])
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    formats: list[str] = []
    seps: list[str] = []

    def column(width: int, align: str = ">") -> None:
        formats.append("{: " + align + str(width) + "}  ")
        seps.append("-" * width + "  ")

    column(name_width)
    if has_overload:
        column(name_width)
    for _ in headers[1 + has_overload:]:
        column(12)
    if has_shapes:
        headers.append("Input Shapes")
        column(shapes_width)
    if stacks:
        headers.append("Source Location")
        column(src_width, "<")
    row_format, header_sep = "".join(formats), "".join(seps)
    line_length = sum(len(s) for s in seps) - 2

    def unit(time_us: float) -> str:
        if time_unit == "s":
            return f"{time_us / 1_000_000.0:.3f}s"
        if time_unit == "ms":
            return f"{time_us / 1000.0:.3f}ms"
        if time_unit == "us":
            return f"{time_us:.3f}us"
        return format_time(time_us)

    def trim(path: str) -> str:
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total_self = sum(e.self_cpu_time_total for e in rows)
    out: list[str] = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [header_sep, row_format.format(*headers), header_sep]
    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        values: list[Any] = [name]
        if has_overload:
            values.append(e.overload_name or "")
        values += [_format_share(e.self_cpu_time_total, total_self), unit(e.self_cpu_time_total),
                   _format_share(e.cpu_time_total, total_self), unit(e.cpu_time_total), unit(e.cpu_time)]
        if profile_memory:
            values += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            values.append(trim(e.stack[0]) if e.stack else "")
        out.append(row_format.format(*values))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:]:
                out.append(row_format.format(*blank, trim(entry)))
            out.append(row_format.format(*blank, ""))
    out += [header_sep, f"Self CPU time total: {unit(total_self)}"]
    return "".join(line + "\n" for line in out)


def _host_name() -> str:
    import socket  # (here: the plugin loads with the first op, and only a written trace needs the host name)

    return socket.gethostname()


def write_chrome_trace(events: Iterable[FunctionEvent], path: str, *, base_ns: int = 0,
                       record_shapes: bool = False, profile_memory: bool = False) -> None:
    """Write complete ('X') events in the Chrome trace format PyTorch's exporter uses."""
    pid = os.getpid()
    trace = []
    for event in events:
        item: dict[str, Any] = {
            "ph": "X", "cat": "user_annotation" if event.is_user_annotation else "cpu_op", "name": event.trace_name,
            "pid": pid, "tid": event.thread, "ts": event.start_us, "dur": event.cpu_time_total,
            "args": {"External id": event.id, "Record function id": 0},
        }
        if event.input_shapes:
            item["args"]["Input Dims"] = event.input_shapes
        if event.stack:
            item["args"]["Call stack"] = ";".join(event.stack)
        trace.append(item)
    document = {
        "schemaVersion": 1, "deviceProperties": [], "record_shapes": int(record_shapes),
        "profile_memory": int(profile_memory), "host_name": _host_name(), "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base_ns, "traceEvents": trace, "traceName": str(path),
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f)


def current_thread_id() -> int:
    """The id PyTorch's traces give the recording thread (the OS thread id)."""
    return threading.get_native_id()
