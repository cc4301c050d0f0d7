"""The generalized Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import torchplug as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto distribution of ``loc``, ``scale`` and shape ``concentration`` (xi): the cdf is
    ``1 - (1 + xi z) ** (-1 / xi)``, ``z = (x - loc) / scale`` (``1 - exp(-z)`` for xi = 0)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True
    _expand_names = ("loc", "scale", "concentration")

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def _xi(self) -> tuple:
        """(xi with zeros replaced by 1, mask of xi == 0): the xi = 0 limit is computed separately."""
        zero = self.concentration == 0
        return torch.where(zero, torch.ones_like(self.concentration), self.concentration), zero

    def rsample(self, sample_shape: Any = torch.Size()) -> Any:
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi, zero = self._xi()
        log_density = torch.where(zero, -z, -(1 + 1 / xi) * torch.log1p(xi * z))
        inside = (z >= 0) & ((self.concentration >= 0) | (z <= -1 / xi))
        return torch.where(inside, log_density - self.scale.log(), -math.inf)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = ((value - self.loc) / self.scale).clamp(min=0)
        xi, zero = self._xi()
        log_sf = torch.where(zero, -z, -torch.log1p(xi * z) / xi)
        return (-torch.expm1(log_sf)).clamp(max=1)

    def icdf(self, value: Any) -> Any:
        xi, zero = self._xi()
        log1m = torch.log1p(-value)
        # (scale / xi first, in the parameters' dtype: torch's rounding to the last bit)
        return torch.where(zero, self.loc - self.scale * log1m, self.loc + (self.scale / xi) * torch.expm1(-xi * log1m))

    @property
    def mean(self) -> Any:
        mean = self.loc + self.scale / (1 - self.concentration)
        return torch.where(self.concentration < 1, mean, math.inf)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        xi = self.concentration
        variance = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return torch.where(xi < 0.5, variance, math.inf)

    def entropy(self) -> Any:
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        xi, _ = self._xi()
        upper = torch.where(self.concentration < 0, self.loc - self.scale / xi, math.inf)
        return constraints.interval(self.loc, upper)
