"""The example op-library plugin, installed from its own pyproject: end to end."""

import os
import subprocess
import sys
from importlib import metadata
from math import erf, sqrt

import numpy as np
import pytest

import torchplug as torch
from torchplug.library import opcheck

pytest.importorskip("torchplug_fused_ops", reason="install it: pip install -e plugins/examples/fused_ops")
from torchplug_fused_ops import bias_gelu, rms_norm  # noqa: E402


def gelu_ref(v: np.ndarray) -> np.ndarray:
    return 0.5 * v * (1.0 + np.vectorize(erf)(v / sqrt(2.0)))


def rng(seed=0):
    return np.random.default_rng(seed)


def test_installed_as_a_distribution_with_an_entry_point():
    eps = [ep for ep in metadata.entry_points(group="torchplug.plugins") if ep.name == "fused_ops"]
    assert eps and eps[0].value == "torchplug_fused_ops"
    assert eps[0].dist.metadata["Name"] == "torchplug-fused-ops"
    record = torch.plugins.get_plugin("fused_ops")
    assert record.status == "loaded", record.reason
    assert {"bias_gelu", "bias_gelu_backward", "rms_norm"} <= set(torch.ops.fused)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-6), (np.float64, 1e-12)])
def test_cpp_bias_gelu_matches_numpy(dtype, tol):
    x = rng().standard_normal((5, 7)).astype(dtype)
    b = rng(1).standard_normal(7).astype(dtype)
    out = torch.ops.fused.bias_gelu(torch.from_numpy(x), torch.from_numpy(b))
    assert out.dtype == (torch.float32 if dtype == np.float32 else torch.float64)
    np.testing.assert_allclose(out.numpy(), gelu_ref(x + b), rtol=tol * 10, atol=tol)


def test_bias_gelu_matches_torch_gelu():
    real = pytest.importorskip("torch")
    x = rng().standard_normal((3, 4, 6)).astype(np.float32)
    b = rng(1).standard_normal(6).astype(np.float32)
    expected = real.nn.functional.gelu(real.from_numpy(x) + real.from_numpy(b)).numpy()
    np.testing.assert_allclose(bias_gelu(torch.from_numpy(x), torch.from_numpy(b)).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_bias_gelu_gradients_match_torch():
    real = pytest.importorskip("torch")
    x = rng().standard_normal((4, 6))
    b = rng(1).standard_normal(6)
    xt, bt = torch.tensor(x, requires_grad=True), torch.tensor(b, requires_grad=True)
    xr, br = real.tensor(x, requires_grad=True), real.tensor(b, requires_grad=True)
    g = rng(2).standard_normal((4, 6))
    (bias_gelu(xt, bt) * torch.tensor(g)).sum().backward()
    (real.nn.functional.gelu(xr + br) * real.tensor(g)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(bt.grad.numpy(), br.grad.numpy(), rtol=1e-10)


def test_rms_norm_matches_torch_and_autocasts():
    real = pytest.importorskip("torch")
    x = rng().standard_normal((3, 8))
    w = rng(1).standard_normal(8)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    xr, wr = real.tensor(x, requires_grad=True), real.tensor(w, requires_grad=True)
    out, ref = rms_norm(xt, wt, 1e-5), real.nn.functional.rms_norm(xr, (8,), wr, eps=1e-5)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), wr.grad.numpy(), rtol=1e-9)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert rms_norm(xt.detach().to(torch.bfloat16), wt.detach().to(torch.bfloat16)).dtype == torch.float32


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_opcheck_passes(requires_grad, dtype):
    x = torch.randn(3, 5, dtype=dtype, requires_grad=requires_grad)
    b = torch.randn(5, dtype=dtype, requires_grad=requires_grad)
    w = torch.randn(5, dtype=dtype, requires_grad=requires_grad)
    for op, args in ((bias_gelu, (x, b)), (rms_norm, (x, w, 1e-6)),
                     (torch.ops.fused.bias_gelu_backward.default, (torch.randn(3, 5, dtype=dtype), x.detach(), b.detach()))):
        result = opcheck(op, args)
        assert {k: v for k, v in result.items() if k != "test_aot_dispatch_dynamic"} == {
            "test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS", "test_faketensor": "SUCCESS"}


def test_meta_and_memory_estimate_of_a_training_step():
    with torch.device("meta"):
        x = torch.empty(64, 128)
        b = torch.empty(128, requires_grad=True)
        w = torch.empty(128, requires_grad=True)
    out = rms_norm(bias_gelu(x, b), w)
    assert out.device.type == "meta" and tuple(out.shape) == (64, 128)
    with pytest.raises(RuntimeError, match="bias must be 1-D"):
        bias_gelu(x, torch.empty(3, device="meta"))

    def step(x, b, w):
        rms_norm(bias_gelu(x, b), w).sum().backward()

    peak = torch.utils.memory_estimate(step, torch.empty(64, 128), torch.empty(128, requires_grad=True),
                                       torch.empty(128, requires_grad=True))
    assert peak >= 3 * 64 * 128 * 4  # input + two activations at least, all counted without data


def test_training_a_model_that_uses_the_ops():
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc1 = nn.Linear(d, 2 * d, bias=False)
            self.bias = nn.Parameter(torch.zeros(2 * d))
            self.fc2 = nn.Linear(2 * d, d)
            self.norm_weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return rms_norm(self.fc2(bias_gelu(self.fc1(x), self.bias)), self.norm_weight)

    torch.manual_seed(0)
    model = nn.Sequential(Block(8), nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(64, 8)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert model[0].bias.grad is not None and model[0].norm_weight.grad is not None


def _run(code: str, **env):
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)


def test_blocking_the_plugin_removes_its_ops():
    code = ("import torchplug as torch\n"
            "print(sorted(torch.ops.fused))\n"
            "print(torch.plugins.get_plugin('fused_ops').status)\n"
            "try:\n    torch.ops.fused.bias_gelu\nexcept AttributeError as e:\n    print('AttributeError', e)\n")
    loaded = _run(code)
    assert "['bias_gelu', 'bias_gelu_backward', 'rms_norm']" in loaded.stdout, loaded.stderr
    blocked = _run(code, TORCHPLUG_BLOCK_PLUGINS="fused_ops")
    lines = blocked.stdout.splitlines()
    assert lines[0] == "[]" and lines[1] == "blocked", blocked.stderr
    assert "AttributeError" in lines[2] and "not blocked" in lines[2]


def test_doctor_shows_the_ops_with_provenance():
    out = _run("from torchplug.__main__ import main; main([])").stdout
    assert "fused_ops" in out and "torchplug-fused-ops" in out
    line = next(line for line in out.splitlines() if "fused::bias_gelu " in line)
    assert "plugin 'fused_ops' (torchplug-fused-ops" in line and "CPU" in line and "Meta" in line
    blocked = _run("from torchplug.__main__ import main; main([])", TORCHPLUG_BLOCK_PLUGINS="fused_ops").stdout
    assert "fused::bias_gelu" not in blocked and "blocked by TORCHPLUG_BLOCK_PLUGINS" in blocked
