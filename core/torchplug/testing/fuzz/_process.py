"""Crash isolation: cases run in a worker process the parent watches.

The worker (``python -m torchplug.testing.fuzz._worker``) prints ``B k`` before case ``k`` and
``R {json}`` after it.  If the worker dies (a segfault in a C kernel, an abort) or prints nothing
for ``timeout`` seconds (a hang), the parent records case ``k`` as a ``crash``, asks a fresh
worker for the case's reproducer (drawn, not run), and starts a new worker at case ``k + 1``.
A worker that dies between cases (heap corruption that fails when the memory is freed later)
turns the case that returned last into the crash.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from torchplug.testing.fuzz._run import Outcome

__all__ = ["run_isolated", "STARTUP_TIMEOUT"]

STARTUP_TIMEOUT = 180.0  # importing torch and torchplug on a loaded machine


def _command(cfg: dict[str, Any], start: int, describe: int | None = None) -> list[str]:
    cfg = {**cfg, "start": start, "describe": describe}
    return [sys.executable, "-m", "torchplug.testing.fuzz._worker", json.dumps(cfg)]


def _lines(proc: subprocess.Popen[bytes], timeout: float, first_timeout: float) -> Any:
    """Yield the worker's stdout lines; yields None when it stays silent for ``timeout`` seconds."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    wait = first_timeout
    try:
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                wait = timeout
                yield line.decode("utf-8", "replace")
            if not sel.select(wait):
                yield None
                return
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return
            buf += chunk
    finally:
        sel.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _tail(path: str, limit: int = 20000) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace").strip()


def _why(stderr: str) -> str:
    """The lines of a dead worker's stderr that say why: the C library's message, faulthandler's
    'Fatal Python error' and the innermost frames; else the last lines."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            before = [lines[i - 1]] if i and not lines[i - 1].startswith(("  File", "Extension modules")) else []
            frames = [ln.strip() for ln in lines[i + 1:] if ln.strip().startswith("File")][:3]
            return " | ".join(before + [line] + frames)
    return " | ".join(lines[-6:])


def _describe(cfg: dict[str, Any], index: int) -> dict[str, Any]:
    """The op and reproducer of case ``index`` (drawn in a fresh worker, not run)."""
    try:
        out = subprocess.run(_command(cfg, index, describe=index), capture_output=True,
                             timeout=STARTUP_TIMEOUT + 600, check=False)
    except subprocess.TimeoutExpired:
        return {}
    for line in out.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("R "):
            return json.loads(line[2:])
    return {}


def run_isolated(device: str, count: int, seed: int, engine: str, ops: Sequence[str] | None, timeout: float,
                 progress: Callable[[Outcome], None] | None = None,
                 extra_ops: Sequence[str] = ()) -> list[Outcome]:
    """Run cases ``0..count-1`` in worker processes; a dead or silent worker makes that case a crash."""
    cfg = {"device": device, "count": count, "seed": seed, "engine": engine, "ops": list(ops) if ops else None,
           "extra_ops": list(extra_ops)}
    outcomes: list[Outcome] = []
    start = 0
    while start < count:
        with tempfile.NamedTemporaryFile(prefix="torchplug-fuzz-", suffix=".stderr", delete=False) as err:
            err_path = err.name
        with open(err_path, "wb") as err_fh:
            proc = subprocess.Popen(_command(cfg, start), stdout=subprocess.PIPE,
                                    stderr=err_fh, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        current: int | None = None
        began = time.monotonic()
        finished = False
        try:
            for line in _lines(proc, timeout, STARTUP_TIMEOUT + timeout):
                if line is None:
                    break
                if line.startswith("B "):
                    current = int(line[2:])
                    began = time.monotonic()
                elif line.startswith("R "):
                    outcome = Outcome(**json.loads(line[2:]))
                    outcomes.append(outcome)
                    if progress is not None:
                        progress(outcome)
                    current = None
                elif line == "D":
                    finished = True
        finally:
            _stop(proc)
        stderr = _tail(err_path)
        os.unlink(err_path)
        if finished:
            break
        if current is None:
            if not outcomes or outcomes[-1].index < start:
                raise RuntimeError(f"the fuzz worker stopped before its first case (exit status {proc.returncode}); "
                                   f"its stderr ends with:\n{stderr}")
            # it died between cases: memory a case corrupted (a C kernel writing out of bounds) fails when
            # it is freed later, so the case that just returned is the likely culprit
            last = outcomes.pop()
            info = _describe(cfg, last.index)
            outcome = Outcome(last.index, last.op, "crash",
                              f"the process died after this case returned (it was classified {last.category}; "
                              f"memory it corrupted failing later?), exit status {proc.returncode}: {_why(stderr)}",
                              repro=info.get("repro", last.repro))
        else:
            hung = time.monotonic() - began >= timeout
            info = _describe(cfg, current)
            what = (f"no result after {timeout:.0f} s (hang)" if hung
                    else f"the process died (exit status {proc.returncode})")
            outcome = Outcome(current, info.get("op", "?"), "crash", what + (": " + _why(stderr) if stderr else ""),
                              repro=info.get("repro", ""))
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
        start = outcome.index + 1
    return outcomes
