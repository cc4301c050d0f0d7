"""``torchplug.utils.benchmark``: PyTorch's benchmarking helpers (``Timer``, ``Measurement``, ``Compare``)
for torchplug code. Timing is ``timeit``'s; ``num_threads`` is applied through ``torchplug.set_num_threads``.
PyTorch's C++ and Callgrind timing and its op fuzzers are not provided."""

from __future__ import annotations

from torchplug.utils.benchmark._common import (
    Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig, unit_to_english,
)
from torchplug.utils.benchmark._compare import Colorize, Compare
from torchplug.utils.benchmark._timer import Language, Timer, timer

__all__ = [
    "TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
    "set_torch_threads", "Timer", "timer", "Language", "Colorize", "Compare",
]
