"""``torchplug.utils.checkpoint`` compared with torch: same outputs and gradients as without checkpointing,
dropout masks repeated in the recomputation, keyword arguments, checkpoint_sequential, warnings and errors."""

import warnings

import numpy as np
import pytest

import torchplug as tp
from torchplug.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _model(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))


def _run(lib, how):
    m = _model(lib)
    x = lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    lib.manual_seed(1)
    if how == "plain":
        y = m(x)
    elif how == "reentrant":
        y = lib.utils.checkpoint.checkpoint(m, x.requires_grad_(), use_reentrant=True)
    elif how == "non_reentrant":  # no input requires grad: parameters still get gradients
        y = lib.utils.checkpoint.checkpoint(m, x, use_reentrant=False)
    else:
        y = lib.utils.checkpoint.checkpoint_sequential(m, 3, x, use_reentrant=False)
    y.pow(2).sum().backward()
    return np.asarray(y.detach().tolist()), [np.asarray(p.grad.tolist()) for p in m.parameters()]


@pytest.mark.parametrize("how", ["reentrant", "non_reentrant", "sequential"])
def test_checkpoint_gives_the_plain_results_as_torch(how):
    import torch.utils.checkpoint  # noqa: F401

    ref_y, ref_g = _run(torch, "plain")
    for lib in (tp, torch):
        y, grads = _run(lib, how)
        np.testing.assert_allclose(y, ref_y, rtol=1e-5, atol=1e-6)
        for g, r in zip(grads, ref_g):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)


def test_keyword_arguments_and_errors_as_torch():
    a = tp.ones(2, requires_grad=True)
    z = checkpoint(lambda t, scale=1.0: t * scale, a, scale=3.0, use_reentrant=False)
    z.sum().backward()
    assert z.tolist() == [3.0, 3.0] and a.grad.tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale=1.0: t * scale, a, scale=3.0, use_reentrant=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda t: t * 2, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = checkpoint(lambda t: t * 2, a, use_reentrant=False)
    assert out.requires_grad
