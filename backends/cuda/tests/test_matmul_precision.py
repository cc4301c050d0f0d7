"""``set_float32_matmul_precision`` / ``backends.cuda.matmul.allow_tf32`` reach the cuda kernels' choice of
cuBLAS compute type: TF32 for 'high', bfloat16 for 'medium', full float32 for 'highest'.

Under emulation the NumPy family records the choice (it computes in float32 regardless); the CuPy
family's call into ``cupy._core._routines_linalg.set_compute_type`` is checked with a stand-in.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as torch
from torchplug_cuda import _matmul_precision


@pytest.fixture
def restore_precision():
    old = torch.get_float32_matmul_precision()
    yield
    torch.set_float32_matmul_precision(old)


class _FakeLinalg:
    """The two names of cupy._core._routines_linalg the backend uses, recording calls."""

    COMPUTE_TYPE_DEFAULT, COMPUTE_TYPE_BF16, COMPUTE_TYPE_TF32 = 1, 6, 7

    def __init__(self) -> None:
        self.calls: list[tuple[object, int]] = []

    def set_compute_type(self, dtype: object, compute_type: int) -> None:
        self.calls.append((np.dtype(dtype), compute_type))


def test_emulated_family_follows_the_flag(emulated, restore_precision):
    a = torch.randn(8, 8, device="cuda")
    assert (a @ a).device.type == "cuda"  # the family exists now
    torch.set_float32_matmul_precision("highest")
    assert _matmul_precision.applied("emulate") == "COMPUTE_TYPE_DEFAULT"
    torch.backends.cuda.matmul.allow_tf32 = True
    assert torch.get_float32_matmul_precision() == "high"
    assert _matmul_precision.applied("emulate") == "COMPUTE_TYPE_TF32"
    torch.set_float32_matmul_precision("medium")
    assert _matmul_precision.applied("emulate") == "COMPUTE_TYPE_BF16"
    torch.backends.cuda.matmul.allow_tf32 = False
    assert _matmul_precision.applied("emulate") == "COMPUTE_TYPE_DEFAULT"
    # emulation computes in float32 whatever the setting
    torch.set_float32_matmul_precision("high")
    np.testing.assert_allclose((a @ a).cpu().numpy(), a.cpu().numpy() @ a.cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_cupy_family_sets_cublas_compute_type_for_float32(restore_precision):
    fake = _FakeLinalg()
    torch.set_float32_matmul_precision("high")
    _matmul_precision.install("cupy-under-test", fake)
    assert fake.calls == [(np.dtype(np.float32), 7)]
    torch.set_float32_matmul_precision("highest")
    torch.set_float32_matmul_precision("medium")
    assert fake.calls[1:] == [(np.dtype(np.float32), 1), (np.dtype(np.float32), 6)]
    with pytest.warns(UserWarning, match="has no effect"):
        torch.set_float32_matmul_precision("fastest")
    assert len(fake.calls) == 3  # an invalid precision changes nothing
    assert _matmul_precision.applied("cupy-under-test") == "COMPUTE_TYPE_BF16"
