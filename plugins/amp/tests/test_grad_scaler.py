"""GradScaler over generic ops: scaling, unscaling, skipping steps on inf/NaN, scale updates, state."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import torchplug
from torchplug.amp import GradScaler


class SGD:
    """The optimizer protocol GradScaler needs: ``param_groups`` and ``step()``."""

    def __init__(self, params, lr=0.1):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        self.steps += 1
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.sub_(p.grad * group["lr"])
        return "stepped"


def _param(values):
    return torchplug.tensor(values, dtype=torchplug.float32)


def test_scale_tensors_and_nested_outputs():
    scaler = GradScaler("cpu", init_scale=4.0)
    assert scaler.get_scale() == 4.0
    loss = torchplug.tensor(1.5)
    assert scaler.scale(loss).item() == 6.0
    a, (b, c) = scaled = scaler.scale([torchplug.ones(2), (torchplug.ones(1), torchplug.ones(3))])
    assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
    assert a.tolist() == [4.0, 4.0] and b.tolist() == [4.0] and c.tolist() == [4.0] * 3
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        scaler.scale([1.0])


def test_step_skipped_on_inf_and_scale_backs_off():
    p = _param([1.0, 2.0])
    opt = SGD([p])
    scaler = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scaler.scale(torchplug.tensor(1.0))
    p.grad = torchplug.tensor([float("inf"), 8.0])
    assert scaler.step(opt) is None
    assert opt.steps == 0 and p.tolist() == [1.0, 2.0]
    scaler.update()
    assert scaler.get_scale() == 4.0
    assert scaler.state_dict()["_growth_tracker"] == 0
    p.grad = torchplug.tensor([float("nan"), 1.0])
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 0 and scaler.get_scale() == 2.0
    # clean steps: unscaled grads are used, and the scale grows after growth_interval of them
    for expected_scale in (2.0, 4.0):
        p.grad = torchplug.tensor([2.0, 4.0])
        assert scaler.step(opt) == "stepped"
        scaler.update()
        assert scaler.get_scale() == expected_scale
    np.testing.assert_allclose(p.numpy(), [1.0 - 2 * 0.1 * 1.0, 2.0 - 2 * 0.1 * 2.0], rtol=1e-6)
    assert opt.steps == 2


def test_unscale_then_step_and_errors():
    p = _param([1.0])
    opt = SGD([p])
    scaler = GradScaler("cpu", init_scale=2.0)
    with pytest.raises(AssertionError, match="did not use scaler.scale"):
        scaler.unscale_(opt)
    scaler.scale(torchplug.tensor(1.0))
    p.grad = torchplug.tensor([6.0])
    scaler.unscale_(opt)
    assert p.grad.tolist() == [3.0]
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this optimizer since the last update\(\)."):
        scaler.unscale_(opt)
    scaler.step(opt)
    assert p.grad.tolist() == [3.0]  # not unscaled twice
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last update\(\)."):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)."):
        scaler.unscale_(opt)
    scaler.update()
    p.grad = torchplug.tensor([1.0], dtype=torchplug.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: 0)


def test_update_new_scale_and_state_dict_roundtrip():
    scaler = GradScaler("cpu", init_scale=16.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    assert scaler.state_dict() == {
        "scale": 16.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7, "_growth_tracker": 0,
    }
    scaler.scale(torchplug.tensor(1.0))
    scaler.update(new_scale=0.5)  # the scale may drop below 1
    assert scaler.get_scale() == 0.5
    scaler.update(torchplug.tensor([3.0]))
    assert scaler.get_scale() == 3.0
    other = GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    clone = pickle.loads(pickle.dumps(scaler))
    assert clone.get_scale() == 3.0 and clone.get_growth_factor() == 3.0
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        other.load_state_dict({})
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
        scaler.update()
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        GradScaler("cpu", growth_factor=1.0)


def test_disabled_scaler_passes_through():
    scaler = GradScaler("cpu", enabled=False)
    loss = torchplug.tensor(2.0)
    assert scaler.scale(loss) is loss
    p = _param([1.0])
    p.grad = torchplug.tensor([float("inf")])
    opt = SGD([p])
    assert scaler.step(opt) == "stepped" and opt.steps == 1
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_unavailable_device_warns_and_disables():
    with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."):
        scaler = GradScaler()
    assert not scaler.is_enabled()
    with pytest.warns(UserWarning, match="device type 'meta' is not available"):
        assert not GradScaler("meta").is_enabled()


def test_matches_torch_gradscaler_sequence():
    torch = pytest.importorskip("torch")
    grads = [[1.0, 2.0], [float("inf"), 1.0], [0.5, -0.5], [3.0, 1.0], [float("nan"), 0.0], [1.0, 1.0], [2.0, 2.0]]
    results = {}
    for mod in (torch, torchplug):
        p = mod.tensor([1.0, -1.0])
        opt = SGD([p])
        scaler = (torch.amp.GradScaler if mod is torch else GradScaler)("cpu", init_scale=1024.0, growth_interval=2)
        trace = []
        for g in grads:
            scaler.scale(mod.tensor(1.0))
            p.grad = mod.tensor(g) * scaler.get_scale()
            scaler.unscale_(opt)
            unscaled = p.grad.tolist()
            scaler.step(opt)
            scaler.update()
            trace.append((unscaled, scaler.get_scale(), scaler.state_dict()["_growth_tracker"], p.tolist(), opt.steps))
        results[mod.__name__] = trace
    np.testing.assert_equal(results["torchplug"], results["torch"])
