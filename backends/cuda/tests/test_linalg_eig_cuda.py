"""torch.linalg.eig / eigvals on the cuda backend: the shared cpu kernel runs LAPACK on the host (CuPy has no
general eigensolver) and the results land on the tensor's device, emulated or on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as torch


def _check_on(device: str) -> None:
    a = np.random.default_rng(0).standard_normal((2, 4, 4))
    x = torch.tensor(a, device=device, dtype=torch.float32)
    L, V = torch.linalg.eig(x)
    assert L.device == x.device and V.device == x.device
    assert L.dtype == V.dtype == torch.complex64 and tuple(V.shape) == (2, 4, 4)
    l, v = L.cpu().numpy(), V.cpu().numpy()
    np.testing.assert_allclose(a.astype(np.complex64) @ v, v * l[..., None, :], atol=1e-4)
    values = torch.linalg.eigvals(x.double())
    assert values.device == x.device and values.dtype == torch.complex128
    np.testing.assert_allclose(np.sort_complex(values.cpu().numpy()), np.sort_complex(np.linalg.eigvals(a)),
                               atol=1e-10)
    g = x.double().requires_grad_()
    (torch.linalg.eigvals(g).abs() ** 2).sum().backward()
    assert g.grad.device == x.device and bool(g.grad.isfinite().all())


def test_eig_on_emulated_cuda(emulated):
    _check_on("cuda:1")


def test_eig_on_gpu(gpu):
    _check_on("cuda")
