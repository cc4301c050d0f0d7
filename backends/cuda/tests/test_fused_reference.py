"""The fused kernels' NumPy references agree with torch on the CPU (so the GPU test, kernel vs
reference, checks against PyTorch's semantics).  Runs without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from torchplug_cuda import fused

torch = pytest.importorskip("torch")
rng = np.random.default_rng(0)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_reference(log):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    expected = (torch.log_softmax if log else torch.softmax)(torch.from_numpy(x), -1).numpy()
    np.testing.assert_allclose(fused.softmax_reference(x, log), expected, rtol=1e-5, atol=1e-6)


def test_log_softmax_nll_reference():
    x = rng.standard_normal((6, 4)).astype(np.float32)
    t = np.array([0, 3, -100, 1, 2, 3])
    loss, _ = fused.log_softmax_nll_reference(x, t)
    expected = torch.nn.functional.cross_entropy(torch.from_numpy(x), torch.from_numpy(t)).item()
    assert abs(float(loss) - expected) < 1e-5


def test_layer_norm_reference():
    x = rng.standard_normal((3, 8)).astype(np.float32)
    w, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    y, mean, rstd = fused.layer_norm_reference(x, w, b)
    ey, emean, erstd = torch.native_layer_norm(torch.from_numpy(x), [8], torch.from_numpy(w), torch.from_numpy(b), 1e-5)
    np.testing.assert_allclose(y, ey.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean, emean.numpy().reshape(-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, erstd.numpy().reshape(-1), rtol=1e-5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_reference(approximate):
    x = rng.standard_normal(50).astype(np.float32) * 3
    expected = torch.nn.functional.gelu(torch.from_numpy(x), approximate=approximate).numpy()
    np.testing.assert_allclose(fused.gelu_reference(x, approximate), expected, rtol=1e-5, atol=1e-6)


def test_adam_reference_matches_torch_adam():
    p0 = rng.standard_normal(10).astype(np.float32)
    grads = [rng.standard_normal(10).astype(np.float32) for _ in range(3)]
    p, m, v = p0.copy(), np.zeros(10, np.float32), np.zeros(10, np.float32)
    tp = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    opt = torch.optim.Adam([tp], lr=0.01, weight_decay=0.1)
    for step, g in enumerate(grads, 1):
        fused.adam_step_reference(p, g, m, v, step, 0.01, 0.9, 0.999, 1e-8, 0.1)
        tp.grad = torch.from_numpy(g.copy())
        opt.step()
    np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sgd_momentum_reference_matches_torch_sgd():
    p0 = rng.standard_normal(10).astype(np.float32)
    grads = [rng.standard_normal(10).astype(np.float32) for _ in range(3)]
    p, buf = p0.copy(), np.zeros(10, np.float32)
    tp = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    opt = torch.optim.SGD([tp], lr=0.1, momentum=0.9, weight_decay=0.01)
    for i, g in enumerate(grads):
        fused.sgd_momentum_reference(p, g, buf, 0.1, 0.9, 0.0, 0.01, first=i == 0)
        tp.grad = torch.from_numpy(g.copy())
        opt.step()
    np.testing.assert_allclose(p, tp.detach().numpy(), rtol=1e-5, atol=1e-6)
