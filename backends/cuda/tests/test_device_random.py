"""Random numbers on the cuda device are drawn by the device kernels (NumPy's generator under
emulation, CuPy's on a GPU), seeded from the device's torchplug.Generator."""

from __future__ import annotations

import pytest

import torchplug as torch
from torchplug_cuda import _device_random, _kernels


def test_device_kernels_replace_the_shared_ones(emulated):
    impls = _kernels.impls_for("emulate")
    for op in _device_random.OPS:
        assert impls[op].__module__ == _device_random.__name__, op


def test_seed_and_state_round_trip(emulated):
    torch.cuda.manual_seed(1234)
    state = torch.cuda.get_rng_state()
    first = [torch.rand(64, device="cuda"), torch.randn(3, 5, device="cuda"), torch.randint(0, 9, (20,), device="cuda")]
    torch.cuda.set_rng_state(state)
    again = [torch.rand(64, device="cuda"), torch.randn(3, 5, device="cuda"), torch.randint(0, 9, (20,), device="cuda")]
    for a, b in zip(first, again):
        assert torch.equal(a.cpu(), b.cpu())
    assert not torch.equal(first[0].cpu(), torch.rand(64, device="cuda").cpu())


def test_explicit_generator(emulated):
    g = torch.Generator(device="cuda").manual_seed(7)
    a = torch.empty(100, device="cuda").normal_(generator=g)
    g.manual_seed(7)
    assert torch.equal(a.cpu(), torch.empty(100, device="cuda").normal_(generator=g).cpu())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_distributions_have_their_moments(emulated, dtype):
    dt = getattr(torch, dtype)
    n = 200_000
    u = torch.empty(n, device="cuda", dtype=dt).uniform_(-2.0, 3.0).float()
    assert -2.0 <= u.min().item() and u.max().item() < 3.0 and abs(u.mean().item() - 0.5) < 0.03
    z = torch.empty(n, device="cuda", dtype=dt).normal_(1.0, 2.0).float()
    assert abs(z.mean().item() - 1.0) < 0.03 and abs(z.std().item() - 2.0) < 0.03
    e = torch.empty(n, device="cuda", dtype=dt).exponential_(4.0).float()
    assert e.min().item() >= 0 and abs(e.mean().item() - 0.25) < 0.01
    b = torch.empty(n, device="cuda", dtype=dt).bernoulli_(0.3).float()
    assert set(b.unique().tolist()) == {0.0, 1.0} and abs(b.mean().item() - 0.3) < 0.01
    gm = torch.empty(n, device="cuda", dtype=dt).geometric_(0.25).float()
    assert gm.min().item() >= 1 and abs(gm.mean().item() - 4.0) < 0.1


def test_integers_and_bernoulli_tensor(emulated):
    r = torch.randint(-3, 5, (10_000,), device="cuda")
    assert r.dtype == torch.int64 and r.min().item() == -3 and r.max().item() == 4
    p = torch.tensor([0.0, 1.0, 0.5], device="cuda").expand(4000, 3).contiguous()
    draws = torch.bernoulli(p)
    assert draws[:, 0].sum().item() == 0 and draws[:, 1].sum().item() == 4000
    assert abs(draws[:, 2].mean().item() - 0.5) < 0.05


def test_invalid_arguments_raise_pytorchs_errors(emulated):
    with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range"):
        torch.empty(3, device="cuda").uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.empty(3, device="cuda").normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in"):
        torch.empty(3, device="cuda").bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        torch.empty(3, device="cuda", dtype=torch.int64).random_(5, 2)
