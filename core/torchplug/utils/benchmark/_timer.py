"""``Timer`` (PyTorch's ``torch.utils.benchmark.Timer``): ``timeit``-based timing of a Python statement with
the thread count set through ``torchplug.set_num_threads`` while it runs."""

from __future__ import annotations

import enum
import time
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from torchplug.utils.benchmark import _common as common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """``time.perf_counter()`` (``timeit.default_timer``), after waiting for the current accelerator's queued
    work (if one exists)."""
    import torchplug

    if torchplug.accelerator.is_available():
        torchplug.accelerator.synchronize()
    return time.perf_counter()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` after running ``setup`` once, in a namespace made of ``globals`` (``torch`` is
    torchplug unless given), with ``num_threads`` intra-op threads. ``timeit(number)``,
    ``blocked_autorange(min_run_time)`` and ``adaptive_autorange(threshold)`` return a :class:`Measurement`;
    ``label``, ``sub_label``, ``description`` and ``env`` place it in a :class:`Compare` table.
    Only Python statements can be timed here (``language="cpp"`` needs PyTorch's C++ toolchain)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._globals = dict(globals or {})  # a copy: exec adds __builtins__
        if language in (Language.PYTHON, "py", "python"):
            import torchplug

            self._globals.setdefault("torch", torchplug)  # PyTorch adds `torch` the same way
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                                 "simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("torchplug's Timer times Python statements only: C++ timing needs "
                                      "PyTorch's C++ toolchain (torch.utils.cpp_extension). Use language='python'.")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        # multi-line snippets written inside functions: dedent, drop the leading newline (as PyTorch does)
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        import timeit  # here, not at import: resolving the module's names (python -m torchplug --compat) stays cheap

        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)  # no real statement takes under 1 ns; avoids dividing by 0

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a short warm-up) and return one measurement of that block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))  # warm-up
            return common.Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number: int, time_hook: Callable[[], float],
                                   stop_hook: Callable[[list[float]], bool], min_run_time: float,
                                   max_run_time: float | None = None,
                                   callback: Callable[[int, float], Any] | None = None) -> list[float]:
        total_time = 0.0
        can_stop = False
        times: list[float] = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                time_spent = time_hook()
                times.append(time_spent)
                total_time += time_spent
                if callback:
                    callback(number, time_spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time: float) -> int:
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                time_taken = self._timeit(number)
                if overhead / time_taken <= 1e-4 and time_taken >= min_run_time / 1000:
                    break
                if time_taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Pick a block size whose timer overhead is negligible, then time blocks until ``min_run_time``
        seconds have been spent; ``callback(number, seconds)`` is told each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(number, lambda: self._timeit(number), lambda times: True,
                                                min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None) -> common.Measurement:
        """Like :meth:`blocked_autorange`, but time blocks until the IQR is under ``threshold`` of the median
        (after at least four blocks and ``min_run_time`` seconds) or ``max_run_time`` seconds have passed."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times: list[float]) -> bool:
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec).meets_confidence(threshold=threshold)
            return False

        times = self._threaded_measurement_loop(number, lambda: self._timeit(number), stop_hook, min_run_time,
                                                max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("collect_callgrind needs PyTorch's Valgrind bindings, which torchplug does not "
                                  "have; time with blocked_autorange() or adaptive_autorange() instead.")
