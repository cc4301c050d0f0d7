"""``torchplug.utils.checkpoint`` on the cuda device (emulated): the recomputation draws the forward's
dropout masks from the device's own generator, for both variants, on the device of the inputs."""

from __future__ import annotations

import pytest

import torchplug as torch
from torchplug.utils.checkpoint import checkpoint, get_device_states, set_device_states


def _dropout_grads(device, how, preserve=True):
    x = torch.linspace(-1, 1, 32, device=device).reshape(4, 8).requires_grad_()

    def fn(t):
        return torch.nn.functional.dropout(t, 0.5).sin()

    torch.cuda.manual_seed_all(1)
    if how == "plain":
        y = fn(x)
    else:
        y = checkpoint(fn, x, use_reentrant=how == "reentrant", preserve_rng_state=preserve)
    torch.cuda.manual_seed_all(7)  # the recomputation must not draw from the ambient device stream
    y.sum().backward()
    return x.grad.cpu()


@pytest.mark.parametrize("device", ["cuda:0", "cuda:1"])
@pytest.mark.parametrize("how", ["non_reentrant", "reentrant"])
def test_dropout_masks_repeat_on_the_device(emulated, device, how):
    plain = _dropout_grads(device, "plain")
    assert torch.equal(_dropout_grads(device, how), plain)
    assert not torch.equal(_dropout_grads(device, how, preserve=False), plain)


def test_device_states_round_trip(emulated):
    x = torch.ones(2, device="cuda:1")
    devices, states = get_device_states(x, torch.ones(2), 3)
    assert devices == [1] and len(states) == 1
    with torch.cuda.device(1):
        first = torch.rand(4, device="cuda:1").cpu()
    set_device_states(devices, states, device_type="cuda")
    with torch.cuda.device(1):
        assert torch.equal(torch.rand(4, device="cuda:1").cpu(), first)
