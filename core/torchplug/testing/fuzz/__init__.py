"""A differential fuzz suite: random calls of ~130 ops in torch and in torchplug, classified.

Each case draws an op and its arguments (shapes incl. 0-d and empty, every dtype, contiguous,
permuted, stepped, offset and expanded layouts, invalid arguments on purpose), builds the inputs
once as NumPy data, runs the op in torch (cpu, the reference) and in torchplug (the device under
test), and classifies the outcome: agree, both raise (same type), type mismatch, silent accept
(torch raises, torchplug returns), torchplug-only raise, value mismatch, crash.  Documented
divergences live in :mod:`torchplug.testing.fuzz.allowed`, each with a reason and a reference.

Run it on a backend::

    python -m torchplug.testing.fuzz --device cpu --cases 5000 --seed 0
    python -m torchplug.testing.fuzz --device meta --cases 2000 --report json

or from Python: ``run_fuzz(device="cpu", cases=5000, seed=0)`` returns a :class:`FuzzReport`.
torch and Hypothesis are needed to run it (imported lazily; the library never imports torch).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from torchplug.testing.fuzz._run import CATEGORIES, FAILURES, Outcome, Runner
from torchplug.testing.fuzz._table import FuzzOp, op_table
from torchplug.testing.fuzz.allowed import ALLOWED, Allowance
from torchplug.testing.fuzz.report import FuzzReport

__all__ = ["run_fuzz", "FuzzReport", "Outcome", "FuzzOp", "op_table", "Allowance", "ALLOWED", "CATEGORIES",
           "FAILURES", "Runner"]


def run_fuzz(device: str = "cpu", cases: int = 5000, seed: int = 0, *, engine: str = "hypothesis",
             ops: Sequence[str] | None = None, extra_ops: Sequence[str] = (), isolate: bool = True,
             timeout: float = 60.0, progress: Callable[[Outcome], None] | None = None) -> FuzzReport:
    """Run ``cases`` fuzz cases on ``device`` and return the classified report.

    Args:
        device: the torchplug device under test (torch runs on cpu as the reference).
        cases: how many cases; the run is the same for the same ``seed``, ``engine`` and ``ops``.
        engine: ``"hypothesis"`` or ``"random"`` (see ``_engine``).
        ops: fuzz op names to draw from (default: the whole table).
        extra_ops: modules (names or ``.py`` paths) whose ``OPS: list[FuzzOp]`` join the table
            (a backend's own ops).
        isolate: run in worker processes so that a crash or hang is recorded, not fatal
            (``timeout`` seconds per case); False runs in this process (faster to start).
    """
    from torchplug.testing.fuzz._table import table_with

    table = table_with(extra_ops)
    unknown = [name for name in ops or () if name not in table]
    if unknown:
        raise ValueError(f"unknown fuzz ops {unknown}; known: {sorted(table)}")
    if ops is None:
        from torchplug.testing._runner import device_has_data

        if not device_has_data(device):  # ops whose result shape depends on values cannot run without data
            ops = [name for name, op in table.items() if not op.data_dependent]
    began = time.monotonic()
    if isolate:
        from torchplug.testing.fuzz._process import run_isolated

        outcomes = run_isolated(device, cases, seed, engine, ops, timeout, progress, extra_ops)
    else:
        from torchplug.testing.fuzz._engine import drive

        runner = Runner(device)
        outcomes = []
        chosen = [table[name] for name in ops] if ops else list(table.values())

        def visit(k: int, call: object) -> None:
            outcome = runner.run(table[call.op], call, k)  # type: ignore[attr-defined]
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome)

        drive(cases, seed, engine, chosen, visit)
    return FuzzReport(outcomes, device, seed, engine, time.monotonic() - began, [a.id for a in ALLOWED])
