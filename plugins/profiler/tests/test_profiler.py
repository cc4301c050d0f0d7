"""torchplug.profiler against torch.profiler: op names, input shapes, call counts, nesting, timings,
memory, schedules, trace files and the legacy torch.autograd.profiler."""

from __future__ import annotations

import json
import os
import re
import time
import warnings

import pytest

import torchplug
from torchplug._dispatch.keys import lookup_key
from torchplug._dispatch.tls import included_keyset

profiler = torchplug.profiler
PROFILER_BIT = lookup_key("Profiler").mask


def _torch():
    return pytest.importorskip("torch")


def _run(lib, fn, **kwargs):
    P = lib.profiler
    with P.profile(activities=[P.ProfilerActivity.CPU], **kwargs) as prof:
        fn(lib)
    return prof


def _top_level(prof):
    return [(e.name, e.input_shapes) for e in prof.events() if e.cpu_parent is None]


def _ops(lib):
    a = lib.ones(2, 3)
    b = lib.ones(3, 4)
    lib.mm(a, b)
    a + a
    a.sum()


def test_top_level_op_names_and_input_shapes_match_torch():
    torch = _torch()
    a = torch.ones(2, 3)  # warm torch up: its first call of an op may record extra helper ops
    _ops(torch)
    kw = dict(record_shapes=True)
    ours = [(n, s) for n, s in _top_level(_run(torchplug, _ops, **kw)) if n != "aten::sum"]
    theirs = [(n, s) for n, s in _top_level(_run(torch, _ops, **kw)) if n != "aten::sum"]
    assert ours == theirs  # aten::ones, aten::ones, aten::mm [[2, 3], [3, 4]], aten::add [[2, 3], [2, 3], []]
    assert ("aten::mm", [[2, 3], [3, 4]]) in ours


def test_call_counts_and_key_averages_match_torch():
    torch = _torch()

    def loop(lib):
        x = lib.ones(4)
        for _ in range(5):
            x = x + 1
        x.mul_(2)

    counts = []
    for lib in (torchplug, torch):
        averages = _run(lib, loop).key_averages()
        counts.append({e.key: e.count for e in averages if e.key in ("aten::add", "aten::mul_", "aten::ones")})
    assert counts[0] == counts[1] == {"aten::add": 5, "aten::mul_": 1, "aten::ones": 1}


def test_nested_ops_record_under_their_caller_with_self_time():
    x = torchplug.randn(8, 4)
    lin = torchplug.nn.Linear(4, 3)
    with profiler.profile() as prof:
        with profiler.record_function("forward_pass"):
            lin(x).relu()
    events = prof.events()
    rng = next(e for e in events if e.name == "forward_pass")
    assert rng.is_user_annotation and rng.cpu_parent is None
    linear = next(e for e in events if e.name == "aten::linear")
    assert linear.cpu_parent is rng
    assert {c.name for c in linear.cpu_children} >= {"aten::addmm"}
    for event in events:
        children = sum(c.cpu_time_total for c in event.cpu_children)
        assert event.cpu_time_total >= children >= 0
        assert event.self_cpu_time_total == pytest.approx(event.cpu_time_total - children)
        for child in event.cpu_children:
            assert event.start_us <= child.start_us <= child.end_us <= event.end_us


def test_timings_are_real():
    big = torchplug.randn(300, 300)
    start = time.perf_counter()
    with profiler.profile() as prof:
        for _ in range(3):
            torchplug.mm(big, big)
    wall_us = (time.perf_counter() - start) * 1e6
    mm = next(e for e in prof.key_averages() if e.key == "aten::mm")
    assert mm.count == 3
    assert 0 < mm.cpu_time_total <= wall_us
    assert mm.cpu_time == pytest.approx(mm.cpu_time_total / 3)
    assert prof.key_averages().self_cpu_time_total <= wall_us


def test_backward_ops_are_recorded():
    x = torchplug.randn(3, 4, requires_grad=True)
    w = torchplug.randn(4, 2)
    with profiler.profile() as prof:
        (x @ w).sum().backward()
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts["aten::mm"] == 2  # the forward product and x's gradient


def test_profile_memory_matches_torch():
    torch = _torch()

    def alloc(lib):
        lib.ones(1000)

    usage = []
    for lib in (torchplug, torch):
        averages = _run(lib, alloc, profile_memory=True).key_averages()
        usage.append(next(e.cpu_memory_usage for e in averages if e.key == "aten::ones"))
    assert usage[0] == usage[1] == 4000


def test_table_has_torchs_columns():
    torch = _torch()
    headers = []
    for lib in (torchplug, torch):
        prof = _run(lib, _ops, record_shapes=True, profile_memory=True)
        text = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total", row_limit=3)
        lines = text.splitlines()
        headers.append(re.split(r"\s{2,}", lines[1].strip()))
        assert lines[-1].startswith("Self CPU time total: ")
        assert len(lines) == 3 + 3 + 2  # separator, header, separator; three rows; separator, total
    assert headers[0] == headers[1]
    assert headers[0][-1] == "Input Shapes"


def test_sort_by_orders_rows_descending():
    prof = _run(torchplug, _ops)
    averages = prof.key_averages()
    body = averages.table(sort_by="self_cpu_time_total").splitlines()[3:-2]
    by_key = {e.key: e.self_cpu_time_total for e in averages}
    names = [re.split(r"\s{2,}", line.strip())[0] for line in body]
    values = [by_key[n] for n in names]
    assert values == sorted(values, reverse=True)


def test_schedule_matches_torch():
    torch = _torch()
    for kw in (dict(wait=1, warmup=1, active=2, repeat=1), dict(wait=0, warmup=2, active=1, skip_first=2),
               dict(wait=2, warmup=1, active=3, repeat=2, skip_first=1, skip_first_wait=1)):
        ours = profiler.schedule(**kw)
        theirs = torch.profiler.schedule(**kw)
        assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        profiler.schedule(wait=0, warmup=1, active=0)


def test_scheduled_cycles_call_on_trace_ready_like_torch():
    torch = _torch()
    results = []
    for lib in (torchplug, torch):
        seen = []

        def ready(prof):
            seen.append({e.key: e.count for e in prof.key_averages() if e.key in ("aten::add", "ProfilerStep*")})

        P = lib.profiler
        x = lib.ones(3)
        with warnings.catch_warnings():  # the second cycle warns that the first one's events are cleared
            warnings.simplefilter("ignore")
            with P.profile(activities=[P.ProfilerActivity.CPU], on_trace_ready=ready,
                           schedule=P.schedule(wait=1, warmup=1, active=2, repeat=2)) as prof:
                for _ in range(10):
                    x + 1
                    prof.step()
        results.append((seen, prof.step_num))
    assert results[0] == results[1]
    assert results[0][0] == [{"aten::add": 2, "ProfilerStep*": 2}] * 2


def test_tensorboard_trace_handler_writes_chrome_trace(tmp_path):
    x = torchplug.ones(3)
    with profiler.profile(on_trace_ready=profiler.tensorboard_trace_handler(str(tmp_path / "log"), "worker0"),
                          record_shapes=True):
        x * 2
    (name,) = os.listdir(tmp_path / "log")
    assert name.startswith("worker0.") and name.endswith(".pt.trace.json")
    trace = json.loads((tmp_path / "log" / name).read_text())
    mul = [e for e in trace["traceEvents"] if e["name"] == "aten::mul"]
    assert len(mul) == 1 and mul[0]["ph"] == "X" and mul[0]["dur"] >= 0
    assert mul[0]["args"]["Input Dims"] == [[3], []]


def test_export_chrome_trace(tmp_path):
    prof = _run(torchplug, _ops)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())
    names = [e["name"] for e in trace["traceEvents"]]
    assert names.count("aten::ones") == 2 and "aten::mm" in names


def test_with_stack_records_the_callers_line():
    with profiler.profile(with_stack=True) as prof:
        torchplug.ones(2) + 1
    add = next(e for e in prof.events() if e.name == "aten::add")
    assert add.stack and os.path.basename(__file__) in add.stack[0]
    assert "test_with_stack_records_the_callers_line" in add.stack[0]


def test_no_cost_outside_a_profile():
    before = included_keyset()
    assert not before & PROFILER_BIT
    with profiler.profile():
        assert included_keyset() & PROFILER_BIT
    assert included_keyset() == before
    # nothing is recorded by calls after the profile ended
    with profiler.profile() as prof:
        pass
    torchplug.ones(2) + 1
    assert len(prof.events()) == 0


def test_record_function_without_a_profile_is_a_no_op():
    with profiler.record_function("idle"):
        y = torchplug.ones(2) * 3
    assert y.tolist() == [3.0, 3.0]

    @profiler.record_function("decorated")
    def f():
        return torchplug.ones(1) + 1

    with profiler.profile() as prof:
        f()
    event = next(e for e in prof.events() if e.name == "decorated")
    assert [c.name for c in event.cpu_children][-1] == "aten::add"


def test_nested_profile_raises():
    with profiler.profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profiler.profile():
                pass


def test_other_activities_warn():
    with pytest.warns(UserWarning, match="CPU activity"):
        profiler.profile(activities=[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA])


def test_autograd_profiler_aliases():
    from torchplug.autograd import profiler as legacy

    with legacy.profile(record_shapes=True) as prof:
        with legacy.record_function("block"):
            torchplug.ones(2, 2) @ torchplug.ones(2, 2)
    keys = {e.key for e in prof.key_averages()}
    assert {"block", "aten::mm"} <= keys
    assert "Self CPU time total" in prof.table(sort_by="self_cpu_time_total")
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        legacy.profile().table()


def test_public_names_match_torch():
    torch = _torch()
    missing = set(torch.profiler.__all__) - set(profiler.__all__)
    assert missing == {"ExecutionTraceObserver"}
    assert [a.name for a in profiler.ProfilerAction] == [a.name for a in torch.profiler.ProfilerAction]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert profiler.ProfilerActivity.CPU in profiler.supported_activities()
