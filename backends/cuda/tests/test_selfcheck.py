"""``python -m torchplug_cuda.selfcheck`` under emulation: every check present, none failing, the
GPU-only ones marked, the table printed and the JSON written."""

from __future__ import annotations

import json

import pytest

from torchplug_cuda import _runtime, selfcheck
from torchplug_cuda._selfcheck_checks import CHECKS, Context, NeedsGPU

GPU_ONLY = {"fused_kernels", "bench_add_64M", "bench_matmul_fp16", "bench_matmul_bf16", "bench_mlp_step"}
REQUIRED = {"device", "conformance", "autograd", "digits", "allocator", "oom", "memory_fraction", "empty_cache",
            "autocast_fp16", "autocast_bf16", "streams_events", "dlpack", "pinned_copies", "fused_kernels",
            "bfloat16", "random"} | GPU_ONLY


def test_main_under_emulation_runs_every_check(emulated, monkeypatch, tmp_path, capsys):
    pytest.importorskip("sklearn")  # the digits example's data
    monkeypatch.setenv(_runtime.EMULATE_VAR, "1")
    out = tmp_path / "selfcheck.json"
    assert selfcheck.main(["--json", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    rows = {r["check"]: r for r in report["checks"]}
    assert set(rows) == REQUIRED == {name for name, _ in CHECKS}
    assert report["gpu"] is False and report["counts"]["FAIL"] == 0
    for name, row in rows.items():
        expected = "needs a GPU" if name in GPU_ONLY else "pass"
        assert row["result"] == expected, row
        assert row["figure"] and name in printed
    assert "emulated on NumPy" in report["device"]


def test_a_failing_check_is_a_row_and_exit_code_1(emulated, monkeypatch, tmp_path):
    def broken(ctx):
        raise AssertionError("cuda differs from cpu by 3.0e-01")

    def gpu_only(ctx):
        ctx.need_gpu("measures the GPU")

    rows = selfcheck.run_checks(Context.create(False), [("broken", broken), ("gpu_only", gpu_only)])
    assert [(r["check"], r["result"]) for r in rows] == [("broken", "FAIL"), ("gpu_only", "needs a GPU")]
    assert rows[0]["figure"] == "AssertionError: cuda differs from cpu by 3.0e-01"
    monkeypatch.setattr(selfcheck, "CHECKS", [("broken", broken)])
    assert selfcheck.main(["--only", "broken"]) == 1
    table = selfcheck.format_table(rows)
    assert table.splitlines()[0].split() == ["check", "result", "seconds", "figure"]


def test_needs_gpu_names_what_it_measures():
    ctx = Context(gpu=False, tp=None, torch=None, torch_cuda=False)
    with pytest.raises(NeedsGPU, match="measures"):
        ctx.need_gpu("measures")
