"""``python -m torchplug.testing.fuzz``: run the differential fuzz suite on a backend and print the report.

    python -m torchplug.testing.fuzz --device cpu --cases 5000 --seed 0
    python -m torchplug.testing.fuzz --device meta --cases 2000 --report json > fuzz.json
    python -m torchplug.testing.fuzz --ops softmax,conv2d --cases 500 --report markdown

Exit status 1 when a failure outside the documented allowances occurred (a crash, a value
mismatch, a silent accept, a torchplug-only raise) or exception types agree in fewer than 99% of
the both-raise cases (documented mismatches left out).
"""

from __future__ import annotations

import argparse
import json
import sys

from torchplug.testing.fuzz import FAILURES, run_fuzz
from torchplug.testing.fuzz._engine import ENGINES

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchplug.testing.fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", help="torchplug device under test (default cpu)")
    parser.add_argument("--cases", type=int, default=5000, help="number of cases (default 5000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--engine", choices=ENGINES, default="hypothesis", help="case generator (default hypothesis)")
    parser.add_argument("--ops", default="", help="comma-separated fuzz op names (default: all)")
    parser.add_argument("--extra-ops", default="", help="comma-separated modules or .py files defining OPS to add")
    parser.add_argument("--report", choices=("text", "json", "markdown"), default="text", help="output format")
    parser.add_argument("--examples", type=int, default=40, help="failing examples shown in the text report")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per case before it counts as a hang")
    parser.add_argument("--in-process", action="store_true", help="no worker process (a crash ends the run)")
    parser.add_argument("--list-ops", action="store_true", help="print the fuzz op names and exit")
    args = parser.parse_args(argv)
    extra = [m for m in args.extra_ops.split(",") if m]
    if args.list_ops:
        from torchplug.testing.fuzz._table import table_with

        print("\n".join(table_with(extra)))
        return 0
    ops = [o for o in args.ops.split(",") if o] or None
    report = run_fuzz(args.device, args.cases, args.seed, engine=args.engine, ops=ops, extra_ops=extra,
                      isolate=not args.in_process, timeout=args.timeout)
    if args.report == "json":
        print(json.dumps(report.to_json(), indent=1))
    elif args.report == "markdown":
        print(report.markdown())
    else:
        print(report.text(args.examples))
    failed = any(report.unallowed(cat) for cat in FAILURES if cat != "type_mismatch")
    return 1 if failed or report.type_agreement(documented=True) < 0.99 else 0


if __name__ == "__main__":
    sys.exit(main())
