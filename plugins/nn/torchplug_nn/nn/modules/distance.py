"""``CosineSimilarity`` and ``PairwiseDistance`` layers."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance between the rows of ``x1`` and ``x2`` (``eps`` added to the difference)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
