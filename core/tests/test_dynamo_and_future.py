"""``torchplug._dynamo`` and ``torchplug.__future__``: reachable as PyTorch's are, right after ``import torch``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import torchplug


def test_private_modules_load_on_first_attribute_use_like_torch():
    # a fresh interpreter: attribute access alone must import them, as torch's lazy __getattr__ does
    code = ("import torchplug as torch; d = torch._dynamo; f = torch.__future__;"
            "print(d.__name__, f.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["torchplug._dynamo", "torchplug.__future__"]


def test_dynamo_entry_points_accept_what_torch_does():
    torch = pytest.importorskip("torch")
    import torch._dynamo  # noqa: F401

    for lib in (torchplug, torch):
        dyn = lib._dynamo
        assert dyn.reset() is None and dyn.reset_code_caches() is None
        x = lib.randn(4, 3)
        assert dyn.mark_dynamic(x, 0) is None and dyn.maybe_mark_dynamic(x, 1) is None
        assert dyn.mark_static(x, 0) is None
        assert dyn.config.suppress_errors is False and dyn.config.cache_size_limit == 8
        assert callable(dyn.disable(lambda: 1)) and "inductor" in dyn.list_backends()


def test_dynamo_config_settings_can_be_assigned():
    old = torchplug._dynamo.config.suppress_errors
    try:
        torchplug._dynamo.config.suppress_errors = True
        assert torchplug._dynamo.config.suppress_errors is True
    finally:
        torchplug._dynamo.config.suppress_errors = old


def test_explain_runs_the_function_and_reports_no_graphs():
    calls = []

    def bar(a, b):
        calls.append(1)
        x = a / (torchplug.abs(a) + 1)
        if b.sum() < 0:
            b = b * -1
        return x * b

    out = torchplug._dynamo.explain(bar)(torchplug.randn(10), torchplug.randn(10))
    assert calls == [1]
    assert (out.graph_count, out.graph_break_count, out.op_count, out.graphs, out.break_reasons) == (0, 0, 0, [], [])
    assert str(out).startswith("Graph Count: 0\nGraph Break Count: 0\nOp Count: 0\nBreak Reasons:\n")
    with pytest.warns(FutureWarning, match="explain\\(f, \\*args, \\*\\*kwargs\\) is deprecated"):
        old = torchplug._dynamo.explain(bar, torchplug.randn(3), torchplug.randn(3))
    assert old.graph_count == 0 and calls == [1, 1]


def test_explain_output_prints_in_torchs_layout():
    torch = pytest.importorskip("torch")
    from torch._dynamo.backends.debugging import ExplainOutput as TorchExplainOutput

    fields = dict(graphs=[], graph_count=0, graph_break_count=0, break_reasons=[], op_count=0, ops_per_graph=[],
                  out_guards=[], compile_times="")
    assert str(torchplug._dynamo.ExplainOutput(**fields)) == str(TorchExplainOutput(**fields))
    fields.update(ops_per_graph=[["add", "mul"]])
    assert str(torchplug._dynamo.ExplainOutput(**fields)) == str(TorchExplainOutput(**fields))
