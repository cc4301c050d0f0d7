"""Start-up cost: torchplug vs PyTorch in fresh processes, measured in the same run.

Usage: ``python benchmarks/bench_startup.py [--rounds N] [--frameworks torchplug,torch] [--rows SUBSTR]
[--json PATH]``

Each row is a ``python -c`` snippet run in a fresh interpreter (so nothing is cached in the process,
as for a user's script); the frameworks take turns snippet by snippet and round by round, so that
drift of a shared host hits them alike.  The report gives, per row and framework, the median over
rounds of the wall time and of the child's CPU time (user + system: steadier than wall time when
other jobs compete for the cores), and torchplug's wall-time ratio to PyTorch.

The rows: ``import`` alone; ``import`` plus a first op (the yardstick's ``import.first_op``,
``(X.ones(4) + 1).sum()``); plus a first autograd op (a backward through a product); plus an
``nn.Linear`` forward.

Bytecode caches count: run once beforehand (or ``python -m compileall``) when the source tree was
just checked out, since ``PYTHONDONTWRITEBYTECODE=1`` makes every import compile the sources again.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

__all__ = ["ROWS", "run_once", "main"]

# row -> code, with ``X`` the framework's module name
ROWS: dict[str, str] = {
    "import": "import X",
    "import + first op": "import X; (X.ones(4) + 1).sum()",
    "import + first autograd op": "import X; x = X.ones(4, requires_grad=True); (x * 2).sum().backward()",
    "import + nn.Linear forward": "import X; X.nn.Linear(8, 4)(X.ones(2, 8))",
}


def run_once(code: str) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of ``python -c code`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"`{code}` failed: {proc.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """Run the rows and print the table; returns ``{row: {framework: {"wall_ms", "cpu_ms"}}}``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--frameworks", default="torchplug,torch")
    parser.add_argument("--rows", default=None, help="run only the rows containing this text")
    parser.add_argument("--json", default=None, help="write the medians to this file")
    args = parser.parse_args(argv)
    frameworks = [f for f in args.frameworks.split(",") if f]
    rows = {row: code for row, code in ROWS.items() if args.rows is None or args.rows in row}
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {row: {fw: [] for fw in frameworks} for row in rows}
    for _ in range(args.rounds):
        for row, code in rows.items():
            for fw in frameworks:
                samples[row][fw].append(run_once(code.replace("X", fw)))
    result: dict[str, dict[str, dict[str, float]]] = {}
    print(f"# python {sys.version.split()[0]}, {args.rounds} rounds, medians; load average "
          f"{os.getloadavg()[0]:.1f}; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    header = " | ".join(f"{fw} wall / cpu (ms)" for fw in frameworks)
    ratio = len(frameworks) > 1 and frameworks[0] != frameworks[1]
    print(f"| row | {header} |" + (f" {frameworks[0]}/{frameworks[1]} (wall) |" if ratio else ""))
    print("|---|" + "---:|" * (len(frameworks) + (1 if ratio else 0)))
    for row in rows:
        result[row] = {}
        cells = []
        for fw in frameworks:
            wall = statistics.median(s[0] for s in samples[row][fw]) * 1e3
            cpu = statistics.median(s[1] for s in samples[row][fw]) * 1e3
            result[row][fw] = {"wall_ms": wall, "cpu_ms": cpu}
            cells.append(f"{wall:.0f} / {cpu:.0f}")
        line = f"| {row} | " + " | ".join(cells) + " |"
        if ratio:
            line += f" {result[row][frameworks[0]]['wall_ms'] / result[row][frameworks[1]]['wall_ms']:.2f}× |"
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
