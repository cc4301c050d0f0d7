"""Dropout modules: identity in eval mode, scale by 1/(1-p) in training."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _fn = "dropout"

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)


class Dropout(_DropoutNd):
    _fn = "dropout"


class Dropout1d(_DropoutNd):
    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    _fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    """Dropout that keeps zero mean and unit variance (for SELU networks)."""

    def forward(self, input: Any) -> Any:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input: Any) -> Any:
        return F.feature_alpha_dropout(input, self.p, self.training)
