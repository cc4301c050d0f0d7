"""The half-normal distribution."""

from __future__ import annotations

import math
from typing import Any

from ._half import FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    """``|X|`` for ``X ~ Normal(0, scale)``."""

    base_family = Normal

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / math.pi)
