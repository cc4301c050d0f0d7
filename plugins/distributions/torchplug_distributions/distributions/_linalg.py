"""Linear-algebra helpers the distributions need beyond ``torchplug.linalg``.

``torch.linalg.solve_triangular`` and ``torch.linalg.cholesky_ex`` are not torchplug ops yet; these
composites give the same values and gradients.  Remove them once the core has the ops.
"""

from __future__ import annotations

from typing import Any

import torchplug as torch

__all__ = ["solve_triangular", "cholesky_ok"]


def solve_triangular(A: Any, B: Any, *, upper: bool) -> Any:
    """``X`` with ``A @ X = B`` for triangular ``A`` (only its ``upper``/lower triangle is read)."""
    native = getattr(torch.linalg, "solve_triangular", None)
    if native is not None:
        return native(A, B, upper=upper)
    # masking the ignored triangle keeps the gradient of A on the triangle that was read
    return torch.linalg.solve(A.triu() if upper else A.tril(), B)


def cholesky_ok(value: Any) -> Any:
    """Bool tensor over the batch: True where ``value`` has a Cholesky factor (``cholesky_ex(value).info == 0``)."""
    native = getattr(torch.linalg, "cholesky_ex", None)
    if native is not None:
        return native(value).info.eq(0)
    batch = value.shape[:-2]
    flat = value.reshape((-1,) + tuple(value.shape[-2:]))
    ok = []
    for matrix in flat:  # a failed factorization raises: ask one matrix at a time
        try:
            factor = torch.linalg.cholesky(matrix)
            ok.append(bool(factor.isfinite().all()))
        except RuntimeError:
            ok.append(False)
    return torch.tensor(ok, dtype=torch.bool, device=value.device).reshape(batch)
