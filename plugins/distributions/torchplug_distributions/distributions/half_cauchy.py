"""The half-Cauchy distribution."""

from __future__ import annotations

import math
from typing import Any

import torchplug as torch

from ._half import FoldedAtZero
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    """``|X|`` for ``X ~ Cauchy(0, scale)``."""

    base_family = Cauchy

    @property
    def mean(self) -> Any:
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance

    def _as_value(self, value: Any) -> Any:  # torch's HalfCauchy accepts Python numbers here
        return torch.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
