"""Start the rank scripts of tests/ranks as jobs of their own, bounded by a timeout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RANKS = Path(__file__).parent / "ranks"


def mpiexec() -> str:
    """The mpiexec of the mpich wheel beside this Python (skip the test when there is none)."""
    path = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(path):
        path = shutil.which("mpiexec") or ""
    if not path:
        pytest.skip("no mpiexec: pip install mpich mpi4py (the distributed plugin's dependencies)")
    return path


def run(args: list[str], timeout: float = 90, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``args`` with a clean torchrun environment; a job that outlives ``timeout`` fails the test."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR",
                                                             "MASTER_PORT", "PMI_RANK", "PMI_SIZE")}
    env["OMP_NUM_THREADS"] = "1"
    env.update(env_extra or {})
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=RANKS)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(args)} still running after {timeout} s (a hang):\n{exc.stdout}\n{exc.stderr}")


def torchplugrun(*args: str, timeout: float = 90,
                 env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m torchplug.distributed.run ARGS`` (the launcher, as ``torchplugrun``)."""
    mpiexec()
    return run([sys.executable, "-m", "torchplug.distributed.run", *args], timeout, env_extra)
