"""The negative binomial distribution."""

from __future__ import annotations

from typing import Any

import torchplug as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from ._params import BinaryParams
from .utils import broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParams, Distribution):
    """Successes (each of probability ``probs``) before ``total_count`` failures; drawn as a Poisson of
    gamma-distributed rate."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_names = ("total_count", "probs", "logits", "_param")

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name = "probs" if probs is not None else "logits"
        self.total_count, param = broadcast_all(total_count, probs if probs is not None else logits)
        self.total_count = self.total_count.type_as(param)
        setattr(self, name, param)
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / torch.sigmoid(-self.logits)

    @property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = torch.Size()) -> Any:
        with torch.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)  # the gamma draws come first
            return torch.poisson(rate)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = torch.nn.functional.logsigmoid
        log_unnormalized_prob = self.total_count * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                             + torch.lgamma(self.total_count))
        # total_count = value = 0 is the point mass at 0
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization
