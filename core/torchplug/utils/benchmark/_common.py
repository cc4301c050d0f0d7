"""``TaskSpec`` and ``Measurement`` (PyTorch's ``torch.utils.benchmark.utils.common``): what a Timer
measured, its statistics and their printout."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer runs and how it is labelled (everything but its globals)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """The label (with its sub-label), else the one-line statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        return f"setup:\n{textwrap.indent(self.setup, '  ')}" if "\n" in self.setup else f"setup: {self.setup}"

    def summarize(self) -> str:
        """The task's part of a Measurement's printout."""
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join([f"{i}\n" if "\n" in i else i for i in sections if i])


_TASKSPEC_FIELDS = tuple(i.name for i in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """One or more timings of a statement: ``times`` (seconds per run), ``median``, ``mean``, ``iqr``, and
    the TaskSpec's fields (``label``, ``num_threads``...) as attributes. Picklable."""

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None  # reserved for user payloads

    def __post_init__(self) -> None:
        self._sorted_times: tuple[float, ...] = ()
        self._warnings: tuple[str, ...] = ()
        self._median = -1.0
        self._mean = -1.0
        self._p25 = -1.0
        self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:  # forward the TaskSpec's fields
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """How many digits of the median the interquartile spread supports (1 to 4); ``Compare`` trims to it."""
        self._lazy_init()
        n_total = len(self._sorted_times)
        points = self._sorted_times[n_total // 4: math.ceil(3 * n_total / 4)]
        std = float(np.std(np.asarray(points, dtype=np.float32)))
        interval = max(1.645 * std / math.sqrt(len(points)), _MIN_CONFIDENCE_INTERVAL)
        figures = int(math.floor(math.log10(self._median / interval)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if self.raw_times and not self._sorted_times:
            self._sorted_times = tuple(sorted(self.times))
            values = np.asarray(self._sorted_times, dtype=np.float64)
            self._median = float(np.quantile(values, 0.5))
            self._mean = float(values.mean())
            self._p25 = float(np.quantile(values, 0.25))
            self._p75 = float(np.quantile(values, 0.75))

            def add_warning(msg: str) -> None:
                rel_iqr = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {rel_iqr:.1f}% "
                                   f"of the median measurement.\n           {msg}",)

            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                add_warning("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                add_warning("This could indicate system fluctuation.")

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        skip_line, newline = "MEASUREMENT_REPR_SKIP_LINE", "\n"
        n = len(self._sorted_times)
        time_unit, time_scale = select_unit(self._median)
        iqr_filter = "" if n >= 4 else skip_line
        repr_str = f"""
{super().__repr__()}
{self.task_spec.summarize()}
  {'Median: ' if n > 1 else ''}{self._median / time_scale:.2f} {time_unit}
  {iqr_filter}IQR:    {self.iqr / time_scale:.2f} {time_unit} ({self._p25 / time_scale:.2f} to {self._p75 / time_scale:.2f})
  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {'per measurement,' if n > 1 else ','} {self.num_threads} thread{'s' if self.num_threads > 1 else ''}
{newline.join(self._warnings)}""".strip()
        return "\n".join(line for line in repr_str.splitlines(keepends=False) if skip_line not in line)

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """Merge replicates of the same TaskSpec into one Measurement per task (times per single run)."""
        grouped: collections.defaultdict[TaskSpec, list[Measurement]] = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].append(m)
        merged = []
        for task_spec, group in grouped.items():
            times: list[float] = []
            for m in group:
                times.extend(m.times)
            merged.append(Measurement(number_per_run=1, raw_times=times, task_spec=task_spec, metadata=None))
        return merged


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``, ``us``, ``ms``, ``s``) and its scale that put ``t`` seconds in O(1)."""
    time_unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3) if t > 0 else -3, "s")
    return time_unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[time_unit]


def unit_to_english(u: str) -> str:
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(math.ceil(math.log10(abs(x))))
    scale = 10 ** (magnitude - n)
    return float(np.round(np.float32(x / scale)) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``torchplug.set_num_threads(n)``, restoring the previous count after."""
    import torchplug

    prior = torchplug.get_num_threads()
    try:
        torchplug.set_num_threads(n)
        yield
    finally:
        torchplug.set_num_threads(prior)
