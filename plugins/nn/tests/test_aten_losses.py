"""The losses torch has at the top level (torch.cosine_embedding_loss, ctc_loss...): ATen's int ``reduction``
(and the bindings' unreduced default), values, gradients and argument errors compared with real torch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
X, Y, Z = (rng.standard_normal((4, 5)) for _ in range(3))
SIGN4 = np.where(rng.random(4) > 0.5, 1.0, -1.0)
SIGN45 = np.where(rng.random((4, 5)) > 0.5, 1.0, -1.0)
RATE = rng.random((4, 5)) * 4
LOGITS = rng.standard_normal((12, 3, 6))
TARGETS = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [5, 5, 2, 1]])

CALLS = {
    "cosine_embedding_loss": lambda m, T, *r: m.cosine_embedding_loss(T(X), T(Y), T(SIGN4), 0.2, *r),
    "margin_ranking_loss": lambda m, T, *r: m.margin_ranking_loss(T(X), T(Y), T(SIGN45), 0.1, *r),
    "hinge_embedding_loss": lambda m, T, *r: m.hinge_embedding_loss(T(X), T(SIGN45), 0.5, *r),
    "triplet_margin_loss": lambda m, T, *r: m.triplet_margin_loss(T(X), T(Y), T(Z), 0.7, 1.5, 1e-6, True, *r),
    "triplet_margin_loss_nonpositive_margin": lambda m, T, *r: m.triplet_margin_loss(T(X), T(Y), T(Z), -0.2, 2.0,
                                                                                      1e-6, False, *r),
    "poisson_nll_loss": lambda m, T, *r: m.poisson_nll_loss(T(X), T(RATE), True, True, 1e-8, *(r or (0,))),
    "poisson_nll_loss_rates": lambda m, T, *r: m.poisson_nll_loss(T(RATE) + 0.1, T(RATE), False, False, 1e-8,
                                                                   *(r or (0,))),
    "ctc_loss": lambda m, T, *r: m.ctc_loss(T(LOGITS).log_softmax(2), m.tensor(TARGETS), [12, 11, 12], [4, 2, 3],
                                            0, *r),
    "ctc_loss_tensor_lengths": lambda m, T, *r: m.ctc_loss(T(LOGITS).log_softmax(2), m.tensor(TARGETS),
                                                           m.tensor([12, 11, 12]), m.tensor([4, 2, 3]), 0, *r),
}


@pytest.mark.parametrize("reduction", [(), (0,), (1,), (2,), (5,)], ids=["default", "none", "mean", "sum", "other"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_and_gradients_match_torch(name, reduction):
    results = []
    for m in (tp, torch):
        leaves = []

        def T(a, m=m):
            t = m.tensor(a, requires_grad=True)
            leaves.append(t)
            return t

        out = CALLS[name](m, T, *reduction)
        out.sum().backward()
        results.append((out, leaves[0].grad))
    (ours, g_ours), (theirs, g_theirs) = results
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_ours.numpy(), g_theirs.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m: m.cosine_embedding_loss(m.tensor(X), m.tensor(Y), m.tensor(SIGN4), reduction="mean"),
    lambda m: m.cosine_embedding_loss(m.tensor(X), m.tensor(Y), m.tensor(SIGN4), reduction=None),
    lambda m: m.hinge_embedding_loss(m.tensor(X), m.tensor(SIGN45), margin="x"),
    lambda m: m.cosine_embedding_loss(m.tensor(X), m.tensor(Y), m.tensor(SIGN45)),
    lambda m: m.triplet_margin_loss(m.tensor(X), m.tensor(Y), m.tensor(Z)[0]),
    lambda m: m.margin_ranking_loss(m.tensor(X), m.tensor(Y), m.tensor(SIGN4)),
    lambda m: m.poisson_nll_loss(m.tensor(X), m.tensor(RATE)),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    mine, ref = str(ours.value), str(theirs.value)
    assert mine.split(":")[0] == ref.split(":")[0] or mine.split("(")[0] == ref.split("(")[0]


def test_names_come_from_the_nn_plugin():
    from torchplug._plugins.exposure import EXPOSED

    for name in ("cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
                 "poisson_nll_loss", "ctc_loss"):
        assert getattr(tp, name) is EXPOSED[name][0] and EXPOSED[name][1] == "nn"
