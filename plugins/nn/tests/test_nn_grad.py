"""``nn.grad`` (conv input/weight gradients) compared with torch and with autograd."""

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_input_and_weight_grads_as_torch(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 4) + (7,) * n).astype(np.float32)
    w = rng.standard_normal((6, 2) + (3,) * n).astype(np.float32)
    kw = dict(stride=2, padding=1, dilation=1, groups=2)
    conv_t = getattr(torch.nn.functional, f"conv{n}d")
    go = rng.standard_normal(tuple(conv_t(torch.tensor(x), torch.tensor(w), **kw).shape)).astype(np.float32)
    ours_in = getattr(tp.nn.grad, f"conv{n}d_input")(x.shape, tp.tensor(w), tp.tensor(go), **kw)
    ours_w = getattr(tp.nn.grad, f"conv{n}d_weight")(tp.tensor(x), w.shape, tp.tensor(go), **kw)
    ref_in = getattr(torch.nn.grad, f"conv{n}d_input")(x.shape, torch.tensor(w), torch.tensor(go), **kw)
    ref_w = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), w.shape, torch.tensor(go), **kw)
    np.testing.assert_allclose(np.asarray(ours_in.tolist()), ref_in.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(ours_w.tolist()), ref_w.numpy(), rtol=1e-4, atol=1e-4)


def test_functional_grad_is_nn_grad():
    assert tp.nn.functional.grad is tp.nn.grad
