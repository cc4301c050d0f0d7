"""kl_divergence against torch for every pair of catalog distributions of one shape (registered pairs give
equal values, unregistered ones NotImplementedError in both), and register_kl's dispatch rules."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import torchplug as tp
from catalog import CASES, build

torch = pytest.importorskip("torch")


def _groups():
    """Catalog cases grouped by (batch_shape, event_shape), float64 only."""
    groups: dict = {}
    for case in CASES:
        if any(isinstance(v, np.ndarray) and v.dtype != np.float64 for v in case[2].values()):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = build(torch, case[1], case[2], case[3])
        groups.setdefault((tuple(r.batch_shape), tuple(r.event_shape)), []).append(case)
    return groups


PAIRS = [(p, q) for cases in _groups().values() for p, q in itertools.product(cases, repeat=2)]


@pytest.mark.parametrize("p,q", PAIRS, ids=[f"{p[0]}-{q[0]}" for p, q in PAIRS])
def test_kl_divergence_matches_torch(p, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp, rq = build(torch, *p[1:]), build(torch, *q[1:])
        dp, dq = build(tp, *p[1:]), build(tp, *q[1:])
        try:
            ref = torch.distributions.kl_divergence(rp, rq)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                tp.distributions.kl_divergence(dp, dq)
            return
        mine = tp.distributions.kl_divergence(dp, dq)
    assert tuple(mine.shape) == tuple(ref.shape)
    assert mine.requires_grad == ref.requires_grad  # (Wishart's goes through autograd, in torch too)
    np.testing.assert_allclose(mine.detach().numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-8, equal_nan=True)


def test_kl_of_distribution_with_itself_is_zero():
    d = tp.distributions.MultivariateNormal(tp.zeros(3, dtype=tp.float64), tp.eye(3, dtype=tp.float64) * 2)
    assert abs(float(tp.distributions.kl_divergence(d, d))) < 1e-12


def test_register_kl_most_specific_and_ambiguous():
    D = tp.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return tp.full(p.batch_shape, 42.0)

    p, q = MyNormal(tp.zeros(2), tp.ones(2)), D.Normal(tp.zeros(2), tp.ones(2))
    assert D.kl_divergence(p, q).tolist() == [42.0, 42.0]
    # the reverse pair still dispatches to the Normal-Normal rule
    assert D.kl_divergence(q, q).tolist() == [0.0, 0.0]


def test_kl_unregistered_pair_error():
    D = tp.distributions
    with pytest.raises(NotImplementedError, match="^No KL\\(p \\|\\| q\\) is implemented for p type Laplace and q type Cauchy$"):
        D.kl_divergence(D.Laplace(tp.zeros(1), tp.ones(1)), D.Cauchy(tp.zeros(1), tp.ones(1)))


def test_kl_gradients_match_torch():
    vals = dict(loc=np.array([0.3, -1.0]), scale=np.array([1.5, 0.7]), loc2=np.array([0.0, 0.5]), scale2=np.array([1.0, 2.0]))
    grads = []
    for lib in (tp, torch):
        leaves = {k: lib.tensor(v, requires_grad=True) for k, v in vals.items()}
        kl = lib.distributions.kl_divergence(lib.distributions.Normal(leaves["loc"], leaves["scale"]),
                                             lib.distributions.Normal(leaves["loc2"], leaves["scale2"]))
        kl.sum().backward()
        grads.append({k: v.grad.numpy() for k, v in leaves.items()})
    for k in vals:
        np.testing.assert_allclose(grads[0][k], grads[1][k], rtol=1e-10)
