"""Lazy modules and uninitialized parameters, DataParallel on a machine without an accelerator, SyncBatchNorm
without a process group, DistributedSampler; compared with torch."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
from torchplug.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from torchplug.utils.data import DistributedSampler

from nn_helpers import to_np

torch = pytest.importorskip("torch")


# ---- uninitialized parameters ----------------------------------------------------------------------------------
def test_uninitialized_parameter_behaviour():
    p = UninitializedParameter()
    assert isinstance(p, nn.Parameter) and is_lazy(p) and p.requires_grad
    assert repr(p) == repr(torch.nn.UninitializedParameter()) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        p.share_memory_()
    q = copy.deepcopy(p)
    assert type(q) is UninitializedParameter and q is not p
    p.materialize((2, 3), dtype=tp.float64)
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == tp.float64 and p.requires_grad
    b = UninitializedBuffer()
    assert not b.requires_grad and is_lazy(b)
    b.materialize(4)
    assert type(b) is tp.Tensor and tuple(b.shape) == (4,)


# ---- lazy modules -------------------------------------------------------------------------------------------------
def test_lazy_linear_materializes_like_torch():
    ours, theirs = nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert repr(ours) == repr(theirs)
    sd = ours.state_dict()
    assert list(sd) == list(theirs.state_dict()) and all(is_lazy(v) for v in sd.values())
    assert ours.has_uninitialized_params()
    opt = tp.optim.SGD(ours.parameters(), lr=0.5)  # built before the first forward, as torch allows
    y = ours(tp.randn(2, 5))
    theirs(torch.randn(2, 5))
    assert type(ours) is nn.Linear and repr(ours) == repr(theirs)
    assert tuple(y.shape) == (2, 3) and tuple(ours.weight.shape) == (3, 5)
    bound = 1 / np.sqrt(5)  # Linear's initialization ran
    assert np.abs(to_np(ours.weight)).max() <= bound
    before = to_np(ours.weight).copy()
    y.sum().backward()
    opt.step()
    assert not np.allclose(to_np(ours.weight), before)  # the optimizer updates the materialized parameter


def test_lazy_linear_load_state_dict_materializes():
    src = nn.Linear(4, 2)
    lazy = nn.LazyLinear(2)
    lazy.load_state_dict(src.state_dict())
    assert tuple(lazy.weight.shape) == (2, 4) and not lazy.has_uninitialized_params()
    x = tp.randn(3, 4)
    np.testing.assert_allclose(to_np(lazy(x)), to_np(src(x)))
    assert type(lazy) is nn.Linear and lazy.in_features == 4


@pytest.mark.parametrize("name, args, shape", [
    ("LazyConv1d", (4, 3), (2, 3, 9)), ("LazyConv2d", (4, 3), (2, 3, 9, 9)), ("LazyConv3d", (4, 2), (1, 3, 5, 5, 5)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 9)), ("LazyConvTranspose2d", (4, 3, 2), (2, 6, 5, 5)),
    ("LazyConvTranspose3d", (4, 2), (1, 3, 4, 4, 4)), ("LazyConv2d", (4, 3), (3, 9, 9)),
])
def test_lazy_conv_shapes_match_torch(name, args, shape):
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    y_ours, y_theirs = ours(tp.tensor(x)), theirs(torch.tensor(x))
    assert tuple(y_ours.shape) == tuple(y_theirs.shape)
    assert type(ours).__name__ == type(theirs).__name__
    assert tuple(ours.weight.shape) == tuple(theirs.weight.shape)
    assert ours.in_channels == theirs.in_channels
    # same parameters, same output
    with tp.no_grad():
        ours.weight.copy_(tp.tensor(theirs.weight.detach().numpy()))
        ours.bias.copy_(tp.tensor(theirs.bias.detach().numpy()))
    np.testing.assert_allclose(to_np(ours(tp.tensor(x))), y_theirs.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_lazy_conv_rejects_wrong_rank():
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(tp.randn(2, 3))


@pytest.mark.parametrize("name, shape", [
    ("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm2d", (4, 3, 2, 2)), ("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (2, 3, 5)), ("LazyInstanceNorm2d", (2, 3, 4, 4)), ("LazyInstanceNorm3d", (2, 3, 2, 3, 3)),
])
def test_lazy_norms_match_torch(name, shape):
    ours, theirs = getattr(nn, name)(), getattr(torch.nn, name)()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y_ours, y_theirs = ours(tp.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(to_np(y_ours), y_theirs.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert type(ours).__name__ == type(theirs).__name__ and ours.num_features == 3
    np.testing.assert_allclose(to_np(ours.running_mean), theirs.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    assert repr(ours) == repr(theirs)


# ---- DataParallel ------------------------------------------------------------------------------------------------------
def test_data_parallel_without_accelerator_runs_module():
    if tp.accelerator.current_accelerator(check_available=True) is not None:
        pytest.skip("an accelerator is available: DataParallel moves the module there")
    inner = nn.Linear(2, 3)
    dp = nn.DataParallel(inner)
    ref = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert dp.module is inner and dp.device_ids == ref.device_ids == []
    assert list(dp.state_dict()) == list(ref.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp).splitlines()[0] == repr(ref).splitlines()[0] == "DataParallel("
    x = tp.randn(4, 2)
    np.testing.assert_allclose(to_np(dp(x)), to_np(inner(x)))
    assert nn.parallel.DataParallel is nn.DataParallel
    from torchplug.nn.parallel.data_parallel import DataParallel  # PyTorch's module path

    assert DataParallel is nn.DataParallel


# ---- SyncBatchNorm -----------------------------------------------------------------------------------------------------
def test_sync_batchnorm_is_local_batchnorm_without_process_group():
    ours, theirs = nn.SyncBatchNorm(3), torch.nn.SyncBatchNorm(3)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal((4, 3, 5)).astype(np.float32)
    for train in (True, False):
        ours.train(train)
        theirs.train(train)
        np.testing.assert_allclose(to_np(ours(tp.tensor(x))), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
    np.testing.assert_allclose(to_np(ours.running_var), theirs.running_var.numpy(), rtol=1e-5)
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 1
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        ours(tp.randn(3))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(tp.randn(2, 0, 3))


def test_convert_sync_batchnorm_shares_state():
    model = nn.Sequential(nn.Conv2d(1, 3, 1), nn.Sequential(nn.BatchNorm2d(3, affine=False)), nn.BatchNorm1d(3))
    bn = model[2]
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1][0], nn.SyncBatchNorm) and isinstance(converted[2], nn.SyncBatchNorm)
    assert converted[2].weight is bn.weight and converted[2].running_mean is bn.running_mean
    assert converted[1][0].weight is None
    assert isinstance(converted[0], nn.Conv2d)


# ---- DistributedSampler ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n, replicas, drop_last, shuffle", [
    (10, 3, False, True), (10, 3, True, True), (10, 4, False, False), (7, 2, True, False), (2, 5, False, True),
])
def test_distributed_sampler_matches_torch(n, replicas, drop_last, shuffle):
    dataset = list(range(n))
    union = []
    for rank in range(replicas):
        ours = DistributedSampler(dataset, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=3,
                                  drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(dataset, num_replicas=replicas, rank=rank, shuffle=shuffle,
                                                     seed=3, drop_last=drop_last)
        for epoch in (0, 1):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            got = list(ours)
            assert sorted(got) == sorted(theirs)  # the index sets
            assert got == list(theirs)  # and the order: the random stream is torch's
            assert len(ours) == len(theirs)
        union += list(ours)
    if not drop_last:
        assert set(union) == set(dataset)


def test_distributed_sampler_errors():
    with pytest.raises(ValueError, match="Invalid rank 3, rank should be in the interval \\[0, 2\\]"):
        DistributedSampler(range(5), num_replicas=3, rank=3)
    try:
        tp.distributed
    except AttributeError:  # no distributed plugin installed
        with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
            DistributedSampler(range(5))
    else:  # installed but no process group: PyTorch's error from get_world_size()
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            torch.utils.data.DistributedSampler(range(5))
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            DistributedSampler(range(5))
    loader = tp.utils.data.DataLoader(list(range(6)), batch_size=2,
                                      sampler=DistributedSampler(list(range(6)), num_replicas=2, rank=0, shuffle=False))
    assert [b.tolist() for b in loader] == [[0, 2], [4]]


def test_conversions_before_materialization_decide_dtype():
    for ours, theirs in ((nn.LazyLinear(3).double(), torch.nn.LazyLinear(3).double()),
                         (nn.LazyBatchNorm1d().to(tp.float64), torch.nn.LazyBatchNorm1d().to(torch.float64))):
        assert type(ours.weight).__name__ == type(theirs.weight).__name__ == "UninitializedParameter"
        assert ours.weight.requires_grad
        if hasattr(theirs, "running_mean"):
            assert type(ours.running_mean).__name__ == type(theirs.running_mean).__name__ == "UninitializedBuffer"
        x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float64)
        y_ours, y_theirs = ours(tp.tensor(x)), theirs(torch.tensor(x))
        assert str(y_ours.dtype).split(".")[-1] == str(y_theirs.dtype).split(".")[-1] == "float64"
        assert ours.weight.dtype == tp.float64 and ours.weight.requires_grad
    lazy = nn.LazyConv2d(2, 3)
    clone = copy.deepcopy(lazy)
    assert type(clone.weight) is UninitializedParameter and clone.weight is not lazy.weight
    assert tuple(clone(tp.randn(1, 3, 5, 5)).shape) == (1, 2, 3, 3) and lazy.has_uninitialized_params()
