"""KL divergences between different families: ``KL(p || q) = -H(p) - E_p[log q(x)]``, where ``E_p[log q]``
only needs a few expectations under ``p`` (its first two moments, ``E[log x]``, ``E[log(1 - x)]``, its
moment generating function).  Where ``p``'s support is not inside ``q``'s, the divergence is infinite."""

from __future__ import annotations

import math
from typing import Any, Callable

import torchplug as torch

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant

__all__ = ["register_cross_kl"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _uniform_e_log(a: Any, b: Any) -> Any:
    # E[log x] for x ~ U(a, b), 0 <= a < b: (b log b - a log a) / (b - a) - 1 (with 0 log 0 = 0)
    return (torch.xlogy(b, b) - torch.xlogy(a, a)) / (b - a) - 1


def _e_x(p: Any) -> Any:
    return p.mean


def _e_x2(p: Any) -> Any:
    if isinstance(p, Pareto):
        return p.alpha * p.scale.pow(2) / (p.alpha - 2)
    if isinstance(p, Uniform):
        return (p.low.pow(2) + p.low * p.high + p.high.pow(2)) / 3
    return p.variance + p.mean.pow(2)


def _e_log(p: Any) -> Any:
    if isinstance(p, Beta):
        return torch.digamma(p.concentration1) - torch.digamma(p.concentration1 + p.concentration0)
    if isinstance(p, Exponential):
        return -euler_constant - p.rate.log()
    if isinstance(p, Gamma):
        return torch.digamma(p.concentration) - p.rate.log()
    if isinstance(p, Pareto):
        return p.scale.log() + p.alpha.reciprocal()
    if isinstance(p, Uniform):
        return _uniform_e_log(p.low, p.high)
    raise NotImplementedError


def _e_log1m(p: Any) -> Any:
    if isinstance(p, Beta):
        return torch.digamma(p.concentration0) - torch.digamma(p.concentration1 + p.concentration0)
    return _uniform_e_log(1 - p.high, 1 - p.low)  # Uniform


def _mgf(p: Any, t: Any) -> Any:
    """E[exp(t x)]."""
    if isinstance(p, Exponential):
        return p.rate / (p.rate - t)
    if isinstance(p, Gamma):
        return (p.rate / (p.rate - t)).pow(p.concentration)
    if isinstance(p, Normal):
        return torch.exp(p.loc * t + 0.5 * p.scale.pow(2) * t.pow(2))
    return (torch.exp(t * p.high) - torch.exp(t * p.low)) / (t * (p.high - p.low))  # Uniform


# E_p[log q(x)] for each family q, from p's expectations
def _cross_exponential(p: Any, q: Any) -> Any:
    return q.rate.log() - q.rate * _e_x(p)


def _cross_gamma(p: Any, q: Any) -> Any:
    return (torch.xlogy(q.concentration, q.rate) + (q.concentration - 1) * _e_log(p) - q.rate * _e_x(p)
            - torch.lgamma(q.concentration))


def _cross_normal(p: Any, q: Any) -> Any:
    sq = _e_x2(p) - 2 * q.loc * _e_x(p) + q.loc.pow(2)  # E[(x - loc)^2]
    return -q.scale.log() - _HALF_LOG_2PI - sq / (2 * q.scale.pow(2))


def _cross_gumbel(p: Any, q: Any) -> Any:
    e_exp = torch.exp(q.loc / q.scale) * _mgf(p, -q.scale.reciprocal())  # E[exp(-(x - loc) / scale)]
    return -q.scale.log() - (_e_x(p) - q.loc) / q.scale - e_exp


def _cross_laplace(p: Any, q: Any) -> Any:
    # p normal: E|x - m| = s sqrt(2/pi) exp(-d^2 / 2 s^2) + d erf(d / (s sqrt 2)), d = mean - m
    d, s = p.loc - q.loc, p.scale
    e_abs = s * math.sqrt(2 / math.pi) * torch.exp(-d.pow(2) / (2 * s.pow(2))) + d * torch.erf(d / (s * math.sqrt(2)))
    return -(2 * q.scale).log() - e_abs / q.scale


def _cross_beta(p: Any, q: Any) -> Any:
    lbeta = torch.lgamma(q.concentration1) + torch.lgamma(q.concentration0) \
        - torch.lgamma(q.concentration1 + q.concentration0)
    return (q.concentration1 - 1) * _e_log(p) + (q.concentration0 - 1) * _e_log1m(p) - lbeta


def _cross_pareto(p: Any, q: Any) -> Any:
    return q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * _e_log(p)


def _cross_continuous_bernoulli(p: Any, q: Any) -> Any:
    # log q(x) = x log(p) + (1 - x) log(1 - p) + log C(p), linear in x
    return _e_x(p) * (q.probs.log() - torch.log1p(-q.probs)) + torch.log1p(-q.probs) + q._cont_bern_log_norm()


def _cross_uniform(p: Any, q: Any) -> Any:
    return -(q.high - q.low).log()


def _cross_poisson(p: Any, q: Any) -> Any:
    return p.probs * q.rate.log() - q.rate  # p Bernoulli: log q(0) = -rate, log q(1) = log rate - rate


_CROSS = {Exponential: _cross_exponential, Gamma: _cross_gamma, Normal: _cross_normal, Gumbel: _cross_gumbel,
          Laplace: _cross_laplace, Beta: _cross_beta, Pareto: _cross_pareto, Uniform: _cross_uniform,
          ContinuousBernoulli: _cross_continuous_bernoulli,
          Poisson: _cross_poisson}


def _outside(p: Any, q: Any) -> Any:
    """Where p's support is not inside q's (then the divergence is infinite), or None."""
    if isinstance(p, Uniform):
        if isinstance(q, (Exponential, Gamma)):
            return p.low < 0
        if isinstance(q, (Beta, ContinuousBernoulli)):
            return (p.low < 0) | (p.high > 1)
        if isinstance(q, Pareto):
            return p.low < q.scale
    if isinstance(p, (Beta, ContinuousBernoulli)) and isinstance(q, Uniform):
        return (q.low > 0) | (q.high < 1)
    return None


def _finite(p: Any, q: Any) -> Any:
    cross = next(fn for family, fn in _CROSS.items() if isinstance(q, family))
    result = -p.entropy() - cross(p, q)
    outside = _outside(p, q)
    return result if outside is None else torch.where(outside, math.inf, result)


def _infinite(p: Any, q: Any) -> Any:
    return torch.full_like(p.mean, math.inf)


# p's support is wider than q's: infinite
_INFINITE = [(Normal, q) for q in (Beta, Exponential, Gamma, Pareto, Uniform)] \
    + [(Laplace, q) for q in (Beta, Exponential, Gamma, Pareto, Uniform)] \
    + [(Gumbel, q) for q in (Beta, Exponential, Gamma, Pareto, Uniform)] \
    + [(Exponential, Beta), (Exponential, Pareto), (Exponential, Uniform), (Gamma, Beta), (Gamma, Pareto),
       (Gamma, Uniform), (Pareto, Beta), (Pareto, Uniform), (Beta, Pareto), (Poisson, Bernoulli),
       (Poisson, Binomial)] \
    + [(p, ContinuousBernoulli) for p in (Exponential, Gamma, Gumbel, Laplace, Normal, Pareto)] \
    + [(ContinuousBernoulli, Pareto)]
_FINITE = [(Bernoulli, Poisson), (Beta, Exponential), (Beta, Gamma), (Beta, Normal), (Beta, Uniform),
           (Exponential, Gamma), (Exponential, Gumbel), (Exponential, Normal), (Gamma, Exponential),
           (Gamma, Gumbel), (Gamma, Normal), (Gumbel, Normal), (Laplace, Normal), (Normal, Gumbel),
           (Normal, Laplace), (Pareto, Exponential), (Pareto, Gamma), (Pareto, Normal)] \
    + [(Uniform, q) for q in (Beta, ContinuousBernoulli, Exponential, Gamma, Gumbel, Normal, Pareto)] \
    + [(ContinuousBernoulli, q) for q in (ContinuousBernoulli, Exponential, Normal, Uniform)] \
    + [(Beta, ContinuousBernoulli)]


def register_cross_kl(register_kl: Callable) -> None:
    """Register every cross-family pair with ``register_kl``."""
    for p, q in _INFINITE:
        register_kl(p, q)(_infinite)
    for p, q in _FINITE:
        register_kl(p, q)(_finite)
