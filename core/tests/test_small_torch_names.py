"""Small names of torch's namespace: set_flush_denormal (the host kernels flush denormals on this thread, as
torch's do), the build flags has_mkl/has_openmp, the torch.types aliases, detach_copy, the torch.storage module
and legacy_contiguous_format."""

from __future__ import annotations

import platform

import numpy as np
import pytest

import torchplug as tp

SUPPORTED = platform.machine().lower() in ("x86_64", "amd64") and platform.libc_ver()[0] == "glibc"


@pytest.fixture
def restore_denormals():
    yield
    tp.set_flush_denormal(False)


def test_flush_denormal_flushes_host_results(restore_denormals):
    x = tp.tensor([1e-310, 1.0], dtype=tp.float64)
    f = tp.tensor([1e-40, 1.0])
    assert tp.set_flush_denormal(True) is SUPPORTED
    if not SUPPORTED:
        pytest.skip("flush-denormal mode is set only on x86-64 with glibc")
    assert (x * 1).tolist() == [0.0, 1.0] and (f + 0).tolist() == [0.0, 1.0]
    assert tp.set_flush_denormal(False) is True
    assert (x * 1).tolist() == [1e-310, 1.0]
    assert (f + 0)[0].item() == pytest.approx(1e-40, rel=1e-4)


def test_flush_denormal_matches_torch(restore_denormals):
    torch = pytest.importorskip("torch")
    data = np.array([1e-310, 2.5e-320, 3.0])
    results = []
    for m in (tp, torch):
        flag = m.set_flush_denormal(True)
        results.append((flag, (m.tensor(data) * 2).tolist()))
        m.set_flush_denormal(False)
    if SUPPORTED:
        assert results[0] == results[1]
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
        torch.set_flush_denormal(1)
    with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
        tp.set_flush_denormal(1)


def test_build_flags_follow_torchplug_backends():
    from torchplug.backends import mkl, openmp

    assert tp.has_mkl is mkl.is_available() and tp.has_openmp is openmp.is_available()
    assert isinstance(tp.has_mkl, bool) and tp.has_openmp is False  # NumPy's kernels use no OpenMP pool


def test_types_aliases():
    import torchplug.types as types

    assert types._dtype is tp.dtype and types._device is tp.device and types.Size is tp.Size
    assert types.Tensor is tp.Tensor and types._int is int and types._bool is bool
    assert isinstance(True, types._Number) and isinstance(2.5, types._Number)
    assert set(types.__all__) == {"Number", "Device", "FileLike", "Storage"}
    torch = pytest.importorskip("torch")
    import torch.types as ttypes

    assert set(ttypes.__all__) == set(types.__all__)


def test_detach_copy_matches_torch():
    torch = pytest.importorskip("torch")
    x = tp.tensor([1.0, 2.0], requires_grad=True)
    y = tp.detach_copy(x)
    assert not y.requires_grad and y.tolist() == [1.0, 2.0] and y.data_ptr() != x.data_ptr()
    out = tp.empty(0)
    assert tp.detach_copy(x, out=out) is out and out.tolist() == [1.0, 2.0]
    assert torch.detach_copy(torch.tensor([1.0, 2.0], requires_grad=True)).tolist() == y.tolist()


def test_storage_module_and_legacy_contiguous_format():
    import torchplug.storage as storage

    assert storage.TypedStorage is tp.TypedStorage and storage.UntypedStorage is tp.UntypedStorage
    assert tp.legacy_contiguous_format is tp.contiguous_format
    torch = pytest.importorskip("torch")
    import torch.storage as tstorage

    assert set(storage.__all__) == set(tstorage.__all__)
    assert torch.legacy_contiguous_format is torch.contiguous_format
