"""The geometric distribution: the number of failures before the first success."""

from __future__ import annotations

from typing import Any

import torchplug as torch

from . import constraints
from ._params import probs_or_logits
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """Failures before the first success of Bernoulli trials with success probability ``probs``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_names = ("probs", "logits", "_param")

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        scalar = probs_or_logits(self, probs, logits)
        super().__init__(torch.Size() if scalar else self._param.size(), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Any = torch.Size()) -> Any:
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            # inverse cdf of a uniform draw, kept away from log(0)
            u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0  # 0 * log(0) counts as 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Any:
        return torch.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") \
            / self.probs
