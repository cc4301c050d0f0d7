"""``python -m torchplug_cuda.selfcheck [--json PATH]``: what holds of the cuda backend on this machine.

On an NVIDIA GPU (CuPy sees a device) every check runs on it, within about ten minutes on one
GPU: the conformance suite against torch on CUDA where torch with CUDA is installed (else against
torch on the CPU, or, without torch, against the cpu backend's NumPy results), autograd, the
digits example, the allocator, out-of-memory, memory fraction, ``empty_cache``, autocast, streams
and events, DLPack, pinned copies, the fused kernels, bfloat16, random numbers and the benchmark
rows (ratios to torch on the same GPU when torch with CUDA is installed).

Without a GPU it says so, runs what can run with the device emulated on NumPy
(``TORCHPLUG_CUDA_EMULATE=1``: the backend's wiring, not CuPy), marks the GPU-only checks
"needs a GPU" and exits 0.  It exits 1 when a check fails.

The table has one row per check: its name, its result (``pass``, ``FAIL``, ``needs a GPU``,
``skipped``), the figure it measured and the seconds it took.  ``--json PATH`` writes the same rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from . import _runtime
from ._selfcheck_checks import CHECKS, Context, NeedsGPU, Skipped

__all__ = ["main", "run_checks", "format_table"]

PASS, FAIL, NEEDS_GPU, SKIPPED = "pass", "FAIL", "needs a GPU", "skipped"


def _detect() -> tuple[bool, str]:
    """(whether a real GPU is used, one line saying which device or why none)."""
    if _runtime.emulated_device_count():
        return False, f"{_runtime.EMULATE_VAR} is set: the cuda device is emulated on NumPy (not GPU verification)"
    cp, why = _runtime.probe()
    if cp is not None:
        return True, ""
    os.environ[_runtime.EMULATE_VAR] = "1"
    return False, (f"No CUDA GPU here ({why}). Running under {_runtime.EMULATE_VAR}=1 what can run (the backend's "
                   "wiring on NumPy, not CuPy); the GPU-only checks say 'needs a GPU'.")


def run_checks(ctx: Context, checks: list[tuple[str, Callable[[Context], str]]] | None = None,
               echo: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Run ``checks`` (default: all) in order; one row dict per check."""
    rows = []
    for name, fn in checks if checks is not None else CHECKS:
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                figure, result = fn(ctx), PASS
        except NeedsGPU as exc:
            figure, result = str(exc), NEEDS_GPU
        except Skipped as exc:
            figure, result = str(exc), SKIPPED
        except Exception as exc:  # noqa: BLE001 - a failing check is a row, the run goes on
            figure, result = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:300], FAIL
        row = {"check": name, "result": result, "figure": figure, "seconds": round(time.perf_counter() - start, 2)}
        rows.append(row)
        if echo is not None:
            echo(f"  {name:<22} {result:<12} {figure}")
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a fixed-width text table (check, result, figure, seconds)."""
    width = max([len(r["check"]) for r in rows] + [5])
    lines = [f"{'check':<{width}}  {'result':<11}  {'seconds':>7}  figure", "-" * (width + 40)]
    for r in rows:
        lines.append(f"{r['check']:<{width}}  {r['result']:<11}  {r['seconds']:>7.2f}  {r['figure']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run every check, print the table (and write ``--json``); 1 if a check failed, else 0."""
    parser = argparse.ArgumentParser(prog="python -m torchplug_cuda.selfcheck", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="also write the rows (and the device) as JSON to PATH")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated check names to run (default: all)")
    args = parser.parse_args(argv)
    gpu, note = _detect()
    if note:
        print(note)
    ctx = Context.create(gpu)
    print(f"device: {ctx.device_line()}")
    checks = CHECKS
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {name for name, _ in CHECKS}
        if unknown:
            parser.error(f"unknown check(s) {sorted(unknown)}; the checks are {[name for name, _ in CHECKS]}")
        checks = [(name, fn) for name, fn in CHECKS if name in wanted]
    rows = run_checks(ctx, checks)
    print(format_table(rows))
    counts = {k: sum(r["result"] == k for r in rows) for k in (PASS, FAIL, NEEDS_GPU, SKIPPED)}
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"device": ctx.device_line(), "gpu": gpu, "note": note, "counts": counts, "checks": rows},
                      fh, indent=2)
    return 1 if counts[FAIL] else 0


if __name__ == "__main__":
    sys.exit(main())
