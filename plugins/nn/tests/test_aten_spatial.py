"""torch.grid_sampler / grid_sampler_2d / grid_sampler_3d / affine_grid_generator (ATen's int-mode forms of
grid_sample and affine_grid) compared with real torch: values, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

rng = np.random.default_rng(5)
X4, G4 = rng.standard_normal((2, 3, 5, 6)), rng.uniform(-1.1, 1.1, (2, 4, 3, 2))
X5, G5 = rng.standard_normal((1, 2, 3, 4, 5)), rng.uniform(-1.1, 1.1, (1, 2, 3, 2, 3))


# bicubic (2) is 4-D only: its 3-D refusal is in test_errors_match_torch
CASES = [(name, interpolation, padding, align) for name in ("grid_sampler", "grid_sampler_2d", "grid_sampler_3d")
         for interpolation in (0, 1, 2) for padding in (0, 1, 2) for align in (False, True)
         if not (interpolation == 2 and name.endswith("3d"))]


@pytest.mark.parametrize("name, interpolation, padding, align", CASES)
def test_samplers_match_torch(name, interpolation, padding, align):
    x, g = (X5, G5) if name.endswith("3d") else (X4, G4)
    results = []
    for m in (tp, torch):
        xi, gi = m.tensor(x, requires_grad=True), m.tensor(g, requires_grad=True)
        out = getattr(m, name)(xi, gi, interpolation, padding, align)
        (out * out).sum().backward()
        results.append((out.detach().numpy(), xi.grad.numpy(), gi.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_generator_matches_torch(align):
    theta = rng.standard_normal((2, 2, 3))
    ours = tp.affine_grid_generator(tp.tensor(theta), [2, 3, 4, 5], align)
    theirs = torch.affine_grid_generator(torch.tensor(theta), [2, 3, 4, 5], align)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.grid_sampler_2d(m.tensor(X5), m.tensor(G5), 0, 0, False),
    lambda m: m.grid_sampler_3d(m.tensor(X4), m.tensor(G4), 0, 0, False),
    lambda m: m.grid_sampler_3d(m.tensor(X5), m.tensor(G5), 2, 0, False),
    lambda m: m.affine_grid_generator(m.ones(1, 2, 3), [1, 1, 4, 5], None),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value).split(":")[0] == str(theirs.value).split(":")[0]


def test_wrong_theta_shape_is_a_runtime_error_like_torch():
    # torch's operator fails in an internal view (RuntimeError); ours says which shape it expected
    with pytest.raises(RuntimeError):
        torch.affine_grid_generator(torch.ones(1, 3, 3), [1, 1, 4, 5], False)
    with pytest.raises(RuntimeError, match=r"affine_grid_generator\(\): Expected a batch of 2D affine matrices"):
        tp.affine_grid_generator(tp.ones(1, 3, 3), [1, 1, 4, 5], False)
