"""Small batched linear-algebra helpers for the multivariate distributions."""

from __future__ import annotations

from typing import Any

import torchplug as torch

__all__ = ["batch_mahalanobis", "batch_mv", "solve_lower"]


def batch_mv(bmat: Any, bvec: Any) -> Any:
    """Matrix-vector products broadcast over the leading dims: ``bmat @ bvec``."""
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def solve_lower(tril: Any, rhs: Any) -> Any:
    """``X`` with ``tril @ X = rhs`` for lower-triangular ``tril`` (batch dims broadcast)."""
    return torch.linalg.solve(tril.tril(), rhs)


def batch_mahalanobis(bL: Any, bx: Any) -> Any:
    """The squared Mahalanobis distance ``x^T (L L^T)^-1 x`` for a Cholesky factor ``L``."""
    batch = torch.broadcast_shapes(bL.shape[:-2], bx.shape[:-1])
    n = bx.shape[-1]
    solved = solve_lower(bL.expand(batch + (n, n)), bx.expand(batch + (n,)).unsqueeze(-1)).squeeze(-1)
    return solved.pow(2).sum(-1)
