"""The differential fuzz suite (torchplug.testing.fuzz) against torch, and checks of the harness itself.

``test_fuzz_cpu_*`` run 5,000 seeded Hypothesis cases on cpu (about a minute on two cores) and
assert: no crash, no value mismatch, no silent accept outside the documented list
(``torchplug/testing/fuzz/allowed.py``) and exception types matching torch's in >= 99% of the
cases where both raise.  Run more cases, another seed or another backend with
``python -m torchplug.testing.fuzz --device cpu --cases 20000 --seed 1`` (docs/conformance.md).
"""

from __future__ import annotations

import textwrap
from dataclasses import replace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("hypothesis")

import torchplug  # noqa: E402
from torchplug.testing.fuzz import FuzzOp, Runner, run_fuzz  # noqa: E402
from torchplug.testing.fuzz._draw import RandomDraw  # noqa: E402
from torchplug.testing.fuzz._spec import Call, TensorSpec, materialize  # noqa: E402
from torchplug.testing.fuzz._table import generate, op_table, repro  # noqa: E402
from torchplug.testing.fuzz.allowed import ALLOWED, Allowance  # noqa: E402

CASES = 5000
SEED = 0


@pytest.fixture(scope="module")
def cpu_report():
    return run_fuzz("cpu", CASES, SEED)


def _show(outcomes, limit=5):
    return "\n\n".join(f"[{o.category}] {o.op}: {o.detail} {o.torch_error} | {o.ours_error}\n{o.repro}"
                       for o in outcomes[:limit])


def test_fuzz_cpu_runs_every_case(cpu_report):
    assert len(cpu_report.outcomes) == CASES
    assert len({o.op for o in cpu_report.outcomes}) >= 100  # the draw reaches (nearly) the whole table
    print(cpu_report.summary())


def test_fuzz_cpu_no_crashes(cpu_report):
    crashes = cpu_report.unallowed("crash")
    assert not crashes, _show(crashes)


def test_fuzz_cpu_no_value_mismatches(cpu_report):
    bad = cpu_report.unallowed("value_mismatch")
    assert not bad, _show(bad)


def test_fuzz_cpu_no_silent_accepts_outside_the_list(cpu_report):
    bad = cpu_report.unallowed("silent_accept")
    assert not bad, _show(bad)


def test_fuzz_cpu_exception_types_agree(cpu_report):
    # documented mismatches (fuzz/allowed.py) left out; the raw share is in the report's summary
    assert cpu_report.type_agreement(documented=True) >= 0.99, _show(cpu_report.unallowed("type_mismatch"))


# ---- the harness ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout,extra", [
    ("contig", {}), ("perm", {"perm": (2, 0, 1)}), ("step", {}), ("offset", {"offset": 2}),
    ("expand", {"base": (1, 3, 1)}),
])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int16", "bool", "complex64"])
def test_both_libraries_get_identical_inputs(layout, extra, dtype):
    spec = TensorSpec((2, 3, 4), dtype, layout, seed=5, **extra)
    a, b = materialize(spec, torch, "cpu"), materialize(spec, torchplug, "cpu")
    assert tuple(a.shape) == tuple(b.shape) == (2, 3, 4)
    assert tuple(a.stride()) == tuple(b.stride()) and a.storage_offset() == b.storage_offset()
    expected = {"contig": (12, 4, 1), "step": (24, 8, 2), "offset": (12, 4, 1), "expand": (0, 1, 0)}
    assert layout == "perm" or tuple(a.stride()) == expected[layout]
    assert layout != "offset" or a.storage_offset() == 2
    torchplug.testing.assert_close(b, a, rtol=0, atol=0, equal_nan=True, check_dtype=False, check_device=False)


def test_zero_dim_and_empty_specs_keep_their_shape():
    for shape in ((), (0,), (2, 0, 3)):
        for layout in ("contig", "offset"):
            spec = TensorSpec(shape, "float64", layout, offset=1)
            assert tuple(materialize(spec, torch, "cpu").shape) == shape
            assert tuple(materialize(spec, torchplug, "cpu").shape) == shape


def test_reproducers_rerun_the_case_in_torch():
    # a failure's reproducer must do what the harness did: same result (or same exception type) in torch
    table = op_table()
    runner = Runner("cpu")
    for k in range(150):
        call = generate(RandomDraw(1000 + k), list(table.values()))
        op = table[call.op]
        expected, exc, _ = runner._execute(op, call, torch, "cpu")
        scope: dict = {}
        try:
            exec(repro(op, call), scope)  # noqa: S102 - the reproducer is code we generated
            got, got_exc = scope["r"], None
        except Exception as e:  # noqa: BLE001
            got, got_exc = None, e
        assert (exc is None) == (got_exc is None), f"{call.op}: {exc!r} vs {got_exc!r}\n{repro(op, call)}"
        if exc is not None:
            assert type(exc) is type(got_exc)
        elif isinstance(expected, torch.Tensor):
            assert got.shape == expected.shape and got.dtype == expected.dtype
            assert got.stride() == expected.stride() or got.numel() <= 1 or call.op in ("empty",)


def _op(name, fn, tol="elementwise"):
    return FuzzOp(name, lambda d: Call(name, (TensorSpec((3,), "float32", seed=1),)), fn=fn, tol=tol)


def _nan_first(m, x):
    y = x.clone()
    if m is torchplug:
        y[0] = float("nan")
    return y


def _raise_differently(m, x):
    if m is torch:
        return x[5]  # IndexError
    raise RuntimeError("index 5 is out of bounds")


@pytest.mark.parametrize("name,fn,category", [
    ("agree", lambda m, x: x * 2, "agree"),
    ("within_tolerance", lambda m, x: x * (2 if m is torch else 2 + 1e-7), "agree"),
    ("values", lambda m, x: x * (2 if m is torch else 3), "value_mismatch"),
    ("nan_placement", _nan_first, "value_mismatch"),
    ("dtype", lambda m, x: x if m is torch else x.double(), "value_mismatch"),
    ("shape", lambda m, x: x if m is torch else x[:2], "value_mismatch"),
    ("structure", lambda m, x: (x, x) if m is torch else (x,), "value_mismatch"),
    ("both_raise", lambda m, x: x[5], "both_raise"),
    ("type_mismatch", _raise_differently, "type_mismatch"),
    ("silent_accept", lambda m, x: x[5] if m is torch else x, "silent_accept"),
    ("torchplug_only_raise", lambda m, x: x if m is torch else x[5], "torchplug_only_raise"),
])
def test_classification(name, fn, category):
    op = _op(name, fn)
    call = op.gen(RandomDraw(0))
    outcome = Runner("cpu", allowances=[]).run(op, call)
    assert outcome.category == category, outcome
    if category not in ("agree", "both_raise"):
        assert "torch.tensor(" in outcome.repro  # failures carry a reproducer


def test_allowances_match_precisely():
    op = _op("probe", lambda m, x: x[5] if m is torch else x)
    call = op.gen(RandomDraw(0))
    entry = Allowance("x", ("probe",), ("silent_accept",), "r", "ref", torch_error="IndexError: index 5")
    outcome = Runner("cpu", allowances=[entry]).run(op, call)
    assert outcome.category == "silent_accept" and outcome.allowed == "x"
    assert not entry.matches("other", outcome, call, "cpu")
    assert not replace(entry, torch_error="RuntimeError").matches("probe", outcome, call, "cpu")
    assert not replace(entry, categories=("type_mismatch",)).matches("probe", outcome, call, "cpu")
    assert not replace(entry, when=lambda c: False).matches("probe", outcome, call, "cpu")
    assert not replace(entry, devices=("meta",)).matches("probe", outcome, call, "cpu")
    assert all(a.reason and a.reference and a.categories for a in ALLOWED)
    assert len({a.id for a in ALLOWED}) == len(ALLOWED)


def test_a_crash_or_hang_is_recorded_and_the_run_goes_on(tmp_path):
    module = tmp_path / "crashy_ops.py"
    module.write_text(textwrap.dedent('''
        import os, time
        from torchplug.testing.fuzz import FuzzOp
        from torchplug.testing.fuzz._spec import Call

        ARMED = []

        def gen(d):
            if ARMED:  # the process dies between cases, as heap corruption does when the memory is freed
                os.abort()
            return Call("crashy", (d.int(0, 4),))

        def fn(module, k):
            if module.__name__ == "torchplug":
                if k == 0:
                    os.abort()
                if k == 1:
                    time.sleep(120)
                if k == 2:
                    ARMED.append(True)
            return module.zeros(2)

        OPS = [FuzzOp("crashy", gen, fn=fn, expr=lambda a, k: f"crashy({a[0]})")]
    '''))
    # seed 2 draws the values [2, 4, 3, 1, 0]: case 0 kills the worker after it returned, case 3 hangs,
    # case 4 aborts, cases 1 and 2 agree
    report = run_fuzz("cpu", 5, 2, engine="random", ops=["crashy"], extra_ops=[str(module)], timeout=4)
    assert [o.index for o in report.outcomes] == list(range(5))
    got = {o.index: o for o in report.outcomes}
    assert [got[k].category for k in range(5)] == ["crash", "agree", "agree", "crash", "crash"]
    assert "after this case returned" in got[0].detail and got[0].repro.endswith("crashy(2)")
    assert "hang" in got[3].detail and got[3].repro.endswith("crashy(1)")
    assert "died" in got[4].detail and "Aborted" in got[4].detail and got[4].repro.endswith("crashy(0)")


def test_meta_device_compares_shapes_only():
    report = run_fuzz("meta", 150, SEED, isolate=False)
    assert len(report.outcomes) == 150 and not report.unallowed("crash")
    assert report.counts()["agree"] > 50


def test_values_of_the_grad_output_are_reproducible():
    from torchplug.testing.fuzz._run import grad_output_data

    a, b = grad_output_data((2, 3), "float32"), grad_output_data((2, 3), "float32")
    assert np.array_equal(a, b) and grad_output_data((), "float64").shape == ()
