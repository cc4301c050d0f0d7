"""DLPack: torchplug.from_dlpack, torchplug.utils.dlpack and Tensor.__dlpack__, zero-copy with NumPy
and with real PyTorch tensors, both directions."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as torch
from torchplug.utils import dlpack


@pytest.fixture
def real():
    return pytest.importorskip("torch")


def test_numpy_to_torchplug_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_dlpack(a)
    assert t.dtype is torch.float32 and t.shape == (2, 3) and t.device.type == "cpu"
    t[0, 0] = 100.0
    assert a[0, 0] == 100.0  # a write through torchplug shows in NumPy
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0  # and the other way


def test_torchplug_to_numpy_shares_memory():
    t = torch.arange(8, dtype=torch.int32)
    view = t[2:6]  # a view with a storage offset
    a = np.from_dlpack(view)
    assert a.tolist() == [2, 3, 4, 5]
    a[0] = 42
    assert t[2].item() == 42
    t[3] = -7
    assert a[1] == -7
    strided = np.from_dlpack(torch.arange(12.0).reshape(3, 4).t())
    assert strided.tolist() == np.arange(12.0).reshape(3, 4).T.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int16", "int64", "bool", "complex64"])
def test_torch_to_torchplug_zero_copy(real, dtype):
    src = real.arange(6).reshape(2, 3).to(getattr(real, dtype))
    t = torch.from_dlpack(src)
    assert t.dtype is getattr(torch, dtype) and t.tolist() == src.tolist()
    if dtype != "bool":
        t[0, 1] = 5
        assert src[0, 1].item() == 5
        src[1, 0] = 3
        assert t[1, 0].item() == 3


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
def test_torchplug_to_torch_zero_copy(real, dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    r = real.from_dlpack(t)
    assert r.dtype is getattr(real, dtype) and r.tolist() == t.tolist()
    if dtype != "bool":
        r[0, 1] = 4
        assert t[0, 1].item() == 4
        t[1, 2] = 9
        assert r[1, 2].item() == 9
    view = torch.arange(10.0)[3:7]
    assert real.from_dlpack(view).tolist() == [3.0, 4.0, 5.0, 6.0]


def test_capsules_both_ways(real):
    src = real.arange(4.0)
    t = dlpack.from_dlpack(real.utils.dlpack.to_dlpack(src))
    t[0] = 10.0
    assert src[0].item() == 10.0
    ours = torch.arange(3.0)
    back = real.utils.dlpack.from_dlpack(dlpack.to_dlpack(ours))
    back[2] = -1.0
    assert ours[2].item() == -1.0
    capsule = dlpack.to_dlpack(torch.ones(2))
    dlpack.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                                           "be consumed only once"):
        dlpack.from_dlpack(capsule)
    with pytest.raises(RuntimeError) as theirs:
        real.from_dlpack([1, 2])
    with pytest.raises(RuntimeError) as ours_err:
        torch.from_dlpack([1, 2])
    assert str(ours_err.value) == str(theirs.value)


def test_requires_grad_refuses_export_like_torch(real):
    with pytest.raises(BufferError) as theirs:
        real.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError) as ours:
        torch.ones(2, requires_grad=True).__dlpack__()
    assert str(ours.value) == str(theirs.value)
    assert np.from_dlpack(torch.ones(2, requires_grad=True).detach()).tolist() == [1.0, 1.0]


def test_device_and_copy_arguments():
    a = np.arange(3, dtype=np.float32)
    copied = torch.from_dlpack(a, copy=True)
    copied[0] = 9
    assert a[0] == 0
    shared = torch.from_dlpack(a, device="cpu", copy=False)
    shared[0] = 5
    assert a[0] == 5
    meta = torch.from_dlpack(a, device="meta")
    assert meta.device.type == "meta" and meta.shape == (3,)
    with pytest.raises(BufferError, match=r"copy=False\): the data is on cpu, and moving it to meta needs a copy"):
        torch.from_dlpack(a, device="meta", copy=False)


def test_dlpack_device_and_types():
    assert tuple(torch.ones(1).__dlpack_device__()) == (dlpack.DLDeviceType.kDLCPU, 0)
    with pytest.raises(BufferError, match=r"Cannot export a torchplug.bfloat16 tensor through DLPack.*t.float\(\)"):
        torch.ones(2, dtype=torch.bfloat16).__dlpack__()
    bits = np.from_dlpack(torch.ones(2, dtype=torch.bfloat16).view(torch.int16))
    assert bits.tolist() == [0x3F80, 0x3F80]


def test_unknown_dlpack_device_names_what_to_install():
    class OnGPU:
        def __dlpack_device__(self):
            return (dlpack.DLDeviceType.kDLOneAPI, 0)

        def __dlpack__(self, **kwargs):
            raise AssertionError("never exported: no backend takes OneAPI memory")

    with pytest.raises(BufferError, match=r"the data lives on kDLOneAPI \(device 0\), and no registered torchplug "
                                          r"backend imports DLPack data from there.*torchplug has no backend for the 'xpu'"):
        torch.from_dlpack(OnGPU())


def test_cuda_backend_declares_cuda_dlpack_memory():
    from torchplug._runtime.backends import registered_backends

    backend = registered_backends().get("cuda")
    if backend is None:
        pytest.skip("torchplug-cuda is not installed")
    assert dlpack.DLDeviceType.kDLCUDA in backend.dlpack_device_types and callable(backend.from_dlpack)
