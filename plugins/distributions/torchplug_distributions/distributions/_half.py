"""The common body of the "half" distributions: ``|X|`` for ``X`` symmetric about zero."""

from __future__ import annotations

import math
from typing import Any

import torchplug as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["FoldedAtZero"]


class FoldedAtZero(TransformedDistribution):
    """``|X|`` for ``X ~ base_family(0, scale)``: the density doubles on ``[0, inf)``.

    Subclasses name ``base_family`` (a location-scale distribution symmetric about its location) and the
    moments that folding changes.
    """

    base_family: Any = None
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(self.base_family(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return super().expand(batch_shape, _instance=self._get_checked_instance(type(self), _instance))

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.scale)

    def _as_value(self, value: Any) -> Any:
        return value

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = self._as_value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)
