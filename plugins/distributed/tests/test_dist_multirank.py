"""Jobs of 2 and 4 ranks on this machine (each test starts its own MPI processes, bounded by a timeout):
every collective against expected values, DDP against one process, failures and timeouts that end the job
with the failing rank named."""

from __future__ import annotations

import sys
import time

import pytest

from _dist_launch import RANKS, mpiexec, run, torchplugrun



def _ok(proc, ranks: int, marker: str) -> None:
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    for r in range(ranks):
        assert f"rank {r}: {marker}" in proc.stdout, proc.stdout


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective(ranks):
    proc = torchplugrun("--nproc-per-node", str(ranks), "collectives.py")
    _ok(proc, ranks, "all collectives ok")


@pytest.mark.parametrize("ranks", [2, 4])
def test_ddp_matches_one_process(ranks):
    _ok(torchplugrun("--nproc-per-node", str(ranks), "ddp.py"), ranks, "ddp ok")


def test_emulated_cuda_tensors_and_ddp():
    pytest.importorskip("torchplug_cuda")
    proc = torchplugrun("--nproc-per-node", "2", "cuda_emulated.py", env_extra={"TORCHPLUG_CUDA_EMULATE": "1"})
    _ok(proc, 2, "emulated cuda ok")


def test_plain_mpiexec_launch_is_detected():
    proc = run([mpiexec(), "-n", "2", sys.executable, str(RANKS / "mpiexec_direct.py")])
    assert proc.returncode == 0, proc.stderr
    assert "direct rank 0 of 2 ok" in proc.stdout and "direct rank 1 of 2 ok" in proc.stdout


def test_failed_rank_ends_the_job_and_is_named():
    start = time.monotonic()
    proc = torchplugrun("--nproc-per-node", "2", "fail.py", timeout=60)
    assert proc.returncode == 1
    assert "torchplugrun: rank 1 failed" in proc.stderr
    assert "ValueError: rank one gave up on purpose" in proc.stderr
    assert "unreachable" not in proc.stdout
    assert time.monotonic() - start < 60


def test_killed_rank_ends_the_job_and_is_named():
    proc = torchplugrun("--nproc-per-node", "2", "kill.py", timeout=60)
    assert proc.returncode == 1
    assert "torchplugrun: rank 1 (local_rank 1" in proc.stderr
    assert "died without a Python error: killed by signal 9 (SIGKILL)" in proc.stderr
    assert "unreachable" not in proc.stdout


def test_uncaught_error_under_plain_mpiexec_ends_the_job():
    proc = run([mpiexec(), "-n", "2", sys.executable, str(RANKS / "fail.py")], timeout=60)
    assert proc.returncode != 0
    assert "[Rank 1] uncaught ValueError: ending the job" in proc.stderr


def test_timeout_raises_naming_the_rank():
    proc = torchplugrun("--nproc-per-node", "2", "timeout.py", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "torchplugrun: rank 0 failed" in proc.stderr
    assert "DistBackendError: [Rank 0] all_reduce timed out after 2 s" in proc.stderr
    waited = float(proc.stdout.split("caught after ")[1].split(" s")[0])
    assert 1.9 <= waited < 10, proc.stdout
