"""Behaviour the catalog-driven comparisons do not reach: the straight-through one-hot categorical, the
exponential-family (Bregman) KL of two different Wisharts, and Monte Carlo checks of closed-form KLs."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def test_one_hot_straight_through_matches_torch():
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    weights = np.random.default_rng(1).normal(size=(4, 2, 3))
    out = []
    for lib in (tp, torch):
        p = lib.tensor(probs, requires_grad=True)
        d = lib.distributions.OneHotCategoricalStraightThrough(probs=p)
        lib.manual_seed(5)
        y = d.rsample((4,))
        (y * lib.tensor(weights)).sum().backward()
        out.append((y.detach().numpy(), p.grad.numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)


def _spd(rng, n):
    a = rng.normal(size=(2, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_wishart_kl_is_the_expected_log_ratio():
    """KL(p || q) of two Wisharts (through the Bregman divergence of the log normaliser) against a Monte
    Carlo estimate of E_p[log p - log q].  (PyTorch 2.13's value for this pair is negative: its Bregman sum
    reduces the degrees-of-freedom term over the batch dimension.)"""
    D = tp.distributions
    S = tp.tensor(_spd(np.random.default_rng(0), 3))
    p = D.Wishart(tp.tensor([4.0, 5.5], dtype=tp.float64), covariance_matrix=S)
    q = D.Wishart(tp.tensor([4.5, 5.0], dtype=tp.float64), covariance_matrix=S * 1.3)
    kl = D.kl_divergence(p, q)
    assert kl.requires_grad and tuple(kl.shape) == (2,)
    tp.manual_seed(0)
    x = p.sample((40000,))
    log_ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
    se = log_ratio.std(0) / np.sqrt(log_ratio.shape[0])
    assert np.all(np.abs(kl.detach().numpy() - log_ratio.mean(0)) < 5 * se), (kl, log_ratio.mean(0), se)


@pytest.mark.parametrize("make_p,make_q", [
    (lambda D: D.Uniform(tp.tensor([0.1]), tp.tensor([0.7])), lambda D: D.Beta(tp.tensor([2.0]), tp.tensor([3.0]))),
    (lambda D: D.Gamma(tp.tensor([2.5]), tp.tensor([1.5])), lambda D: D.Gumbel(tp.tensor([1.0]), tp.tensor([2.0]))),
    (lambda D: D.Normal(tp.tensor([0.3]), tp.tensor([1.2])), lambda D: D.Laplace(tp.tensor([-0.2]), tp.tensor([0.8]))),
    (lambda D: D.ContinuousBernoulli(tp.tensor([0.3])), lambda D: D.Normal(tp.tensor([0.5]), tp.tensor([0.4]))),
])
def test_cross_family_kl_is_the_expected_log_ratio(make_p, make_q):
    """The cross-family closed forms against Monte Carlo estimates of E_p[log p - log q]."""
    D = tp.distributions
    p, q = make_p(D), make_q(D)
    tp.manual_seed(1)
    x = p.sample((100000,))
    log_ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
    se = log_ratio.std() / np.sqrt(log_ratio.size)
    assert abs(float(D.kl_divergence(p, q)) - log_ratio.mean()) < 5 * se + 1e-12
