"""The von Mises (circular normal) distribution."""

from __future__ import annotations

import math
from typing import Any

import torchplug as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1-9.8.4: polynomial approximations of I0 and I1 (relative error below 2e-7), for
# x < 3.75 in (x / 3.75)^2 and for x >= 3.75 of sqrt(x) exp(-x) I_n(x) in 3.75 / x
_COEF_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3])
_COEF_LARGE = ([0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                0.1787654e-1, -0.420059e-2])


def _eval_poly(y: Any, coef: list) -> Any:
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x: Any, order: int = 0) -> Any:
    """log I_order(x) for x > 0, order 0 or 1."""
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc: Any, concentration: Any, proposal_r: Any, x: Any) -> Any:
    """Best & Fisher's (1979) rejection sampler: rounds of three uniforms per element until all accept."""
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not bool(done.all()):
        u = torch.rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """Von Mises distribution on the circle, of mean direction ``loc`` (radians) and ``concentration``."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_names = ("loc", "concentration")

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return log_prob - math.log(2 * math.pi) - _log_modified_bessel_fn(self.concentration, order=0)

    def _proposal_r(self, kappa: Any) -> Any:
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        # for tiny kappa the closed form cancels; its expansion is 1 / kappa + kappa
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape: Any = torch.Size()) -> Any:
        """Draws in float64 (the rejection test is unstable in float32), returned in the parameters' dtype."""
        shape = self._extended_shape(sample_shape)
        loc, kappa = self.loc.double(), self.concentration.double()
        with torch.no_grad():
            x = torch.empty(shape, dtype=loc.dtype, device=loc.device)
            return _rejection_sample(loc, kappa, self._proposal_r(kappa), x).to(self.loc.dtype)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        """The circular variance ``1 - I1(k) / I0(k)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
