"""The fuzz worker process (started by ``_process.run_isolated``; not a public entry point).

Argument: one JSON object ``{device, count, seed, engine, ops, extra_ops, start, describe}``.  Prints ``B k``
before running case ``k``, ``R {outcome json}`` after it and ``D`` at the end.  With ``describe=k``
it prints case ``k``'s op and reproducer without running it, then exits.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
from typing import Any

__all__ = ["main"]


def _write(line: str) -> None:
    os.write(1, (line + "\n").encode())


def main(argv: list[str]) -> int:
    cfg: dict[str, Any] = json.loads(argv[0])
    faulthandler.enable()
    from torchplug.testing.fuzz._engine import drive
    from torchplug.testing.fuzz._spec import Call
    from torchplug.testing.fuzz._table import repro, table_with

    table = table_with(cfg.get("extra_ops") or ())
    ops = [table[name] for name in cfg["ops"]] if cfg.get("ops") else list(table.values())
    describe = cfg.get("describe")
    if describe is not None:
        def show(k: int, call: Call) -> None:
            if k == describe:
                _write("R " + json.dumps({"op": call.op, "repro": repro(table[call.op], call)}))
                os._exit(0)

        drive(cfg["count"], cfg["seed"], cfg["engine"], ops, show, start=describe)
        return 0

    from torchplug.testing.fuzz._run import Runner

    _quiet_threads()
    runner = Runner(cfg["device"])

    def visit(k: int, call: Call) -> None:
        _write(f"B {k}")
        outcome = runner.run(table[call.op], call, k)
        _write("R " + json.dumps(outcome.to_json()))

    drive(cfg["count"], cfg["seed"], cfg["engine"], ops, visit, start=cfg.get("start", 0))
    _write("D")
    return 0


def _quiet_threads() -> None:
    """One thread for both libraries: the tensors are tiny, and the machine may be shared."""
    import torch

    import torchplug

    torch.set_num_threads(1)
    torchplug.set_num_threads(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
