"""The nccl backend on a GPU: collectives of cuda tensors and DDP on cuda (skipped without CuPy/NCCL/GPU).

NCCL refuses two ranks of one communicator on the same GPU, so a machine with one GPU runs a world of one
(the NCCL path end to end) and the 2-rank job needs two GPUs."""

from __future__ import annotations

import pytest

from _dist_launch import torchplugrun
from torchplug_distributed.backends.nccl import NCCLBackend

pytestmark = pytest.mark.skipif(not NCCLBackend.is_available(), reason="needs CuPy with NCCL and a CUDA GPU")


def _gpus() -> int:
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


@pytest.mark.parametrize("ranks", [1, 2])
def test_nccl_collectives_and_ddp(ranks):
    if ranks > _gpus():
        pytest.skip(f"{ranks} ranks need {ranks} GPUs (NCCL allows one rank per GPU), this machine has {_gpus()}")
    proc = torchplugrun("--nproc-per-node", str(ranks), "nccl.py", timeout=180)
    assert proc.returncode == 0, proc.stderr
    for r in range(ranks):
        assert f"rank {r}: nccl ok" in proc.stdout
