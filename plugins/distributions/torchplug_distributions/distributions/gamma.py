"""The gamma distribution."""

from __future__ import annotations

from numbers import Number
from typing import Any

import torchplug as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration: Any) -> Any:
    return torch._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Gamma distribution of shape ``concentration`` and inverse scale ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_names = ("concentration", "rate")

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(torch.Size() if scalar else self.concentration.size(), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = torch.Size()) -> Any:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # a draw that underflowed to 0 would have log density -inf
        return value.detach().clamp(min=torch.finfo(value.dtype).tiny) + (value - value.detach())

    def log_prob(self, value: Any) -> Any:
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self) -> Any:
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return torch.igamma(self.concentration, self.rate * value)

    @property
    def _natural_params(self) -> tuple:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())
