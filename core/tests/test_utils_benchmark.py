"""torchplug.utils.benchmark against torch.utils.benchmark: Measurement statistics and printout, Compare's
table, and Timer's real timing and thread setting."""

from __future__ import annotations

import pickle
import re

import pytest

import torchplug
from torchplug.utils import benchmark

RAW = [2.1e-3, 2.4e-3, 1.9e-3, 2.2e-3, 3.0e-3, 2.05e-3, 2.3e-3]


def _measure(lib_benchmark, raw, **task):
    spec = lib_benchmark.TaskSpec
    task = {"stmt": "x + x", "setup": "pass", **task}
    return lib_benchmark.Measurement(number_per_run=100, raw_times=list(raw), task_spec=spec(**task))


def _without_address(text):
    return re.sub(r"^<.*Measurement object at 0x[0-9a-f]+>\n", "", text)


def test_measurement_statistics_and_repr_match_torch():
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    for raw, task in ((RAW, {"label": "adds", "sub_label": "16 f32", "description": "eager"}),
                      (RAW[:2], {"num_threads": 4}), ([5e-7], {"setup": "a = 1\nb = 2"})):
        ours, theirs = _measure(benchmark, raw, **task), _measure(torch_benchmark, raw, **task)
        assert ours.times == pytest.approx(theirs.times)
        for name in ("median", "mean", "iqr"):
            assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
        assert ours.significant_figures == theirs.significant_figures
        assert ours.has_warnings == theirs.has_warnings
        assert _without_address(repr(ours)) == _without_address(repr(theirs))
        assert ours.label == theirs.label and ours.num_threads == theirs.num_threads


def test_compare_table_matches_torch():
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    rendered = []
    for lib in (benchmark, torch_benchmark):
        results = []
        for i, threads in enumerate((1, 4)):
            for j, sub in enumerate(("add", "mul")):
                for k, desc in enumerate(("small", "large")):
                    raw = [t * (1 + i + 2 * j + 5 * k) for t in RAW]
                    results.append(_measure(lib, raw, label="ops", sub_label=sub, description=desc,
                                            num_threads=threads))
        results.append(_measure(lib, RAW, label="other", sub_label="copy", description="small"))
        texts = []
        for trim, colour in ((False, False), (True, False), (True, True)):
            compare = lib.Compare(results)
            if trim:
                compare.trim_significant_figures()
            if colour:
                compare.colorize(rowwise=True)
                compare.highlight_warnings()
            texts.append(str(compare))
        rendered.append(texts)
    assert rendered[0] == rendered[1]
    assert "1 threads: " in rendered[0][0] and "Times are in microseconds (us)." in rendered[0][0]


def test_compare_rejects_non_measurements():
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_units_and_sigfigs_match_torch():
    theirs = pytest.importorskip("torch.utils.benchmark")
    for t in (3e-9, 4.5e-7, 2e-5, 1.5e-3, 0.2, 12.0):
        assert benchmark.select_unit(t) == theirs.select_unit(t)
    for x, n in ((3.14159, 2), (123.456, 1), (0.0123456, 3)):
        assert benchmark.trim_sigfig(x, n) == pytest.approx(theirs.trim_sigfig(x, n))


def test_timer_measures_real_time():
    m = benchmark.Timer("time.sleep(0.002)", setup="import time").timeit(5)
    assert m.number_per_run == 5 and len(m.times) == 1
    assert 0.002 <= m.median < 0.05
    x = torchplug.ones(16)
    m = benchmark.Timer("x + x", globals={"x": x}, label="add").blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1
    assert 0 < m.median < 1e-2
    assert pickle.loads(pickle.dumps(m)).median == m.median


def test_timer_defaults_torch_to_torchplug_and_sets_threads():
    seen = []
    before = torchplug.get_num_threads()
    benchmark.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen}, num_threads=2).timeit(3)
    assert set(seen) == {2} and torchplug.get_num_threads() == before


def test_adaptive_autorange_stops_on_a_steady_statement():
    calls = []
    m = benchmark.Timer("y = 1 + 1").adaptive_autorange(min_run_time=0.01, max_run_time=2.0,
                                                         callback=lambda n, t: calls.append(n))
    assert len(m.times) >= 4 and len(calls) == len(m.times)
    assert sum(m.raw_times) >= 0.01


def test_timer_rejects_what_torch_rejects():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        benchmark.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="int x;")
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        benchmark.Timer().repeat()


def test_public_names():
    theirs = pytest.importorskip("torch.utils.benchmark")
    for name in benchmark.__all__:
        assert hasattr(theirs, name)
