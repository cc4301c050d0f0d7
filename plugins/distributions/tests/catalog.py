"""The distributions under test: one entry per case, built alike in torchplug and torch from NumPy parameters.

Each entry is ``(id, class name or builder(distributions module, params), params, kwargs)``; ``params`` maps argument names to NumPy arrays (float64)
or Python numbers, so the same values reach both libraries.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CASES", "build", "to_lib"]

_R = np.random.default_rng(1234)


def _pos(*shape, lo=0.5, hi=3.0):
    return _R.uniform(lo, hi, shape)


def _unit(*shape, lo=0.1, hi=0.9):
    return _R.uniform(lo, hi, shape)


def _real(*shape):
    return _R.normal(size=shape)


def _spd(batch, n):
    a = _R.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(batch, n):
    return np.linalg.cholesky(_spd(batch, n))


CASES = [
    ("normal", "Normal", {"loc": _real(3), "scale": _pos(3)}, {}),
    ("normal_scalar", "Normal", {"loc": 0.5, "scale": 2.0}, {}),
    ("lognormal", "LogNormal", {"loc": _real(2, 3), "scale": _pos(2, 3)}, {}),
    ("halfnormal", "HalfNormal", {"scale": _pos(3)}, {}),
    ("bernoulli_probs", "Bernoulli", {"probs": _unit(4)}, {}),
    ("bernoulli_logits", "Bernoulli", {"logits": _real(4)}, {}),
    ("binomial", "Binomial", {"total_count": 10.0, "probs": _unit(3)}, {}),
    ("binomial_logits", "Binomial", {"total_count": np.array([3.0, 7.0, 12.0]), "logits": _real(3)}, {}),
    ("categorical", "Categorical", {"probs": _unit(2, 4)}, {}),
    ("categorical_logits", "Categorical", {"logits": _real(3, 5)}, {}),
    ("onehot", "OneHotCategorical", {"probs": _unit(2, 4)}, {}),
    ("multinomial", "Multinomial", {"total_count": 6, "probs": _unit(2, 4)}, {}),
    ("uniform", "Uniform", {"low": _real(3) - 2, "high": _real(3) + 2}, {}),
    ("beta", "Beta", {"concentration1": _pos(3), "concentration0": _pos(3)}, {}),
    ("gamma", "Gamma", {"concentration": _pos(3), "rate": _pos(3)}, {}),
    ("chi2", "Chi2", {"df": _pos(3, lo=1.0, hi=5.0)}, {}),
    ("dirichlet", "Dirichlet", {"concentration": _pos(2, 3)}, {}),
    ("exponential", "Exponential", {"rate": _pos(3)}, {}),
    ("laplace", "Laplace", {"loc": _real(3), "scale": _pos(3)}, {}),
    ("cauchy", "Cauchy", {"loc": _real(3), "scale": _pos(3)}, {}),
    ("halfcauchy", "HalfCauchy", {"scale": _pos(3)}, {}),
    ("poisson", "Poisson", {"rate": _pos(3, lo=0.5, hi=8.0)}, {}),
    ("geometric", "Geometric", {"probs": _unit(3)}, {}),
    ("geometric_logits", "Geometric", {"logits": _real(3)}, {}),
    ("studentt", "StudentT", {"df": _pos(3, lo=2.5, hi=6.0), "loc": _real(3), "scale": _pos(3)}, {}),
    ("mvn_cov", "MultivariateNormal", {"loc": _real(2, 3), "covariance_matrix": _spd((2,), 3)}, {}),
    ("mvn_tril", "MultivariateNormal", {"loc": _real(3), "scale_tril": _tril((), 3)}, {}),
    ("mvn_prec", "MultivariateNormal", {"loc": _real(3), "precision_matrix": _spd((), 3)}, {}),
    ("lowrank_mvn", "LowRankMultivariateNormal",
     {"loc": _real(2, 3), "cov_factor": _real(2, 3, 2), "cov_diag": _pos(2, 3)}, {}),
    ("relaxed_bernoulli", "RelaxedBernoulli", {"temperature": np.array(0.7), "probs": _unit(3)}, {}),
    ("relaxed_onehot", "RelaxedOneHotCategorical", {"temperature": np.array(0.7), "probs": _unit(2, 3)}, {}),
    ("gumbel", "Gumbel", {"loc": _real(3), "scale": _pos(3)}, {}),
    ("weibull", "Weibull", {"scale": _pos(3), "concentration": _pos(3)}, {}),
    ("pareto", "Pareto", {"scale": _pos(3), "alpha": _pos(3, lo=2.5, hi=5.0)}, {}),
    ("vonmises", "VonMises", {"loc": _real(3), "concentration": _pos(3)}, {}),
    ("negbinomial", "NegativeBinomial", {"total_count": _pos(3), "probs": _unit(3)}, {}),
    ("contbernoulli", "ContinuousBernoulli", {"probs": _unit(3, lo=0.2, hi=0.45)}, {}),
    ("logisticnormal", "LogisticNormal", {"loc": _real(3), "scale": _pos(3)}, {}),
    ("kumaraswamy", "Kumaraswamy", {"concentration1": _pos(3), "concentration0": _pos(3)}, {}),
    ("fishersnedecor", "FisherSnedecor", {"df1": _pos(3, lo=3, hi=8), "df2": _pos(3, lo=5, hi=9)}, {}),
    ("wishart", "Wishart", {"df": np.array([4.0, 5.5]), "covariance_matrix": _spd((2,), 3)}, {}),
    ("inversegamma", "InverseGamma", {"concentration": _pos(3, lo=2.5, hi=4), "rate": _pos(3)}, {}),
    ("generalizedpareto", "GeneralizedPareto", # torch compares concentration with a float32 zero: float32 parameters
     {k: v.astype(np.float32) for k, v in {"loc": _real(3), "scale": _pos(3), "concentration": _unit(3, lo=-0.3, hi=0.3)}.items()}, {}),
    ("lkjcholesky", "LKJCholesky", {"dim": 3, "concentration": _pos(2)}, {}),
    # composed distributions: built by a function of the library
    ("independent", lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1), {"loc": _real(2, 3), "scale": _pos(2, 3)}, {}),
    ("mixture", lambda D, p: D.MixtureSameFamily(D.Categorical(logits=p["logits"]), D.Normal(p["loc"], p["scale"])),
     {"logits": _real(2, 4), "loc": _real(2, 4), "scale": _pos(2, 4)}, {}),
    ("mixture_mvn", lambda D, p: D.MixtureSameFamily(
        D.Categorical(probs=p["probs"]), D.Independent(D.Normal(p["loc"], p["scale"]), 1)),
     {"probs": _unit(3), "loc": _real(3, 2), "scale": _pos(3, 2)}, {}),
    ("transformed", lambda D, p: D.TransformedDistribution(
        D.Normal(p["loc"], p["scale"]), [D.transforms.AffineTransform(1.0, 2.0), D.transforms.ExpTransform()]),
     {"loc": _real(3), "scale": _pos(3)}, {}),
    ("transformed_sigmoid", lambda D, p: D.TransformedDistribution(
        D.Uniform(p["low"], p["high"]), D.transforms.SigmoidTransform()),
     {"low": _real(3) - 2, "high": _real(3) + 2}, {}),
]


def to_lib(lib, value):
    """A NumPy parameter as a tensor of ``lib`` of its dtype (numbers stay numbers)."""
    if isinstance(value, np.ndarray):
        return lib.tensor(value, dtype=getattr(lib, value.dtype.name))
    return value


def build(lib, cls_name, params, kwargs=None, **extra):
    """``lib.distributions.<cls_name>(**params)`` with the parameters converted for ``lib``."""
    args = {k: to_lib(lib, v) for k, v in params.items()}
    if callable(cls_name):
        return cls_name(lib.distributions, args)
    return getattr(lib.distributions, cls_name)(**args, **(kwargs or {}), **extra)
