"""``torchplug.autograd.profiler``'s names: PyTorch's legacy ``torch.autograd.profiler.profile``
(one recording per ``with`` block, no schedule) on the same recorder as ``torchplug.profiler``."""

from __future__ import annotations

from typing import Any

from ._events import EventList, FunctionEvent, FunctionEventAvg, write_chrome_trace
from ._profile import kineto_available
from ._recorder import Session, record_function

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "kineto_available"]


class profile:
    """``with torch.autograd.profiler.profile() as prof:`` records the block's ops; ``prof.table()``,
    ``prof.key_averages()``, ``prof.export_chrome_trace(path)`` and ``prof.function_events`` read them.
    ``enabled=False`` records nothing. CPU activity only: ``use_cuda``/``use_device`` record nothing more."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: str | None = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.function_events: EventList | None = None
        self.entered = False
        self._session: Session | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._session = Session(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                                with_stack=self.with_stack)
        self._session.start()
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self._session is not None:
            self.function_events = self._session.stop()
            self._session = None
        return False

    def _check_finish(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's text table (see :meth:`EventList.table`)."""
        return self._check_finish().table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events averaged per op name (and input shapes / stack when asked)."""
        return self._check_finish().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self) -> FunctionEventAvg:
        return self._check_finish().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._check_finish().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace JSON file."""
        write_chrome_trace(self._check_finish(), path, record_shapes=self.record_shapes,
                           profile_memory=self.profile_memory)

    def __str__(self) -> str:
        return str(self._check_finish())

    def __repr__(self) -> str:
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)
