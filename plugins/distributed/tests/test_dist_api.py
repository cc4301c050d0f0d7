"""torchplug.distributed in this process (no process group is created here: see ranks/single.py, run in its
own process by test_single_process_world, and the multi-rank tests)."""

from __future__ import annotations

import sys

import pytest

import torchplug as tp
import torchplug.distributed as dist
from _dist_launch import RANKS, run
from torchplug_distributed.backends.mpi import launch_info_from_env
from torchplug_distributed.distributed import registry


def test_single_process_world():
    proc = run([sys.executable, str(RANKS / "single.py")], timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "single ok" in proc.stdout


def test_not_initialized_errors_match_torch():
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    for ours, theirs in ((dist.get_rank, tdist.get_rank), (dist.get_world_size, tdist.get_world_size),
                         (dist.barrier, tdist.barrier), (lambda: dist.all_reduce(tp.ones(2)),
                                                         lambda: tdist.all_reduce(torch.ones(2)))):
        with pytest.raises(ValueError) as expected:
            theirs()
        with pytest.raises(ValueError) as got:
            ours()
        assert str(got.value) == str(expected.value)
    assert not dist.is_initialized() and dist.is_available()


def test_names_as_torch():
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        assert int(getattr(dist.ReduceOp, name)) == int(getattr(tdist.ReduceOp, name).value)
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX == dist.ReduceOp(4)
    assert dist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"
    assert dist.Backend.NCCL == tdist.Backend.NCCL and dist.Backend.MPI == tdist.Backend.MPI
    with pytest.raises(ValueError, match="Unknown backend type nope"):
        dist.Backend("nope")
    with pytest.raises(ValueError, match="Invalid ``op``"):
        dist.P2POp(dist.all_reduce, tp.ones(1), 1)
    assert dist.default_pg_timeout == tdist.default_pg_timeout
    assert dist.get_default_backend_for_device("cuda:0") == "nccl"


def test_backends_come_from_entry_points():
    classes = registry.backend_classes()
    assert {"mpi", "nccl"} <= set(classes)
    assert registry.canonical_name("GLOO") == "mpi" and dist.is_gloo_available() and dist.is_mpi_available()
    assert dist.is_backend_available("nccl") == classes["nccl"].is_available()


def test_launch_detection():
    assert launch_info_from_env({"PMI_RANK": "1", "PMI_SIZE": "4"}) == (1, 4)
    assert launch_info_from_env({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}) == (0, 2)
    assert launch_info_from_env({"RANK": "0"}) is None


def test_reachable_through_torchplug_names():
    from torchplug.nn.parallel import DistributedDataParallel
    from torchplug.utils.data.distributed import DistributedSampler

    assert tp.nn.parallel.DistributedDataParallel is DistributedDataParallel
    assert tp.nn.parallel.distributed.DistributedDataParallel is DistributedDataParallel
    assert issubclass(DistributedDataParallel, tp.nn.Module)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedDataParallel(tp.nn.Linear(2, 2))


def test_doctor_lists_the_backends():
    from torchplug_distributed.distributed.doctor import report

    text = report()
    assert "mpi        devices=cpu      available" in text
    assert "nccl       devices=cuda" in text and "gloo       alias of 'mpi'" in text
