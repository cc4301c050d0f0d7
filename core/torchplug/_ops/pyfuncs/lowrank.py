"""``torch.svd_lowrank`` and ``torch.pca_lowrank``: randomized low-rank SVD / PCA (Halko et al. 2009,
Algorithm 5.1), PyTorch's steps and random draws, so a seeded call on the cpu gives torch's factors."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def _torch() -> Any:
    from torchplug._ops.torch_namespace import TORCH

    return TORCH


def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal ``(m, q)`` basis approximating the range of ``A - M`` (subspace iterations)."""
    T = _torch()
    dtype = A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else D.float32
    R = T.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A.matmul(R)
    if M is not None:
        X = X - M.matmul(R)
    Q = T.linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH.matmul(Q)
        if M is not None:
            X = X - M.mH.matmul(Q)
        Q = T.linalg.qr(X).Q
        X = A.matmul(Q)
        if M is not None:
            X = X - M.matmul(Q)
        Q = T.linalg.qr(X).Q
    return Q


def _svd_lowrank(A: Tensor, q: int | None, niter: int | None, M: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    T = _torch()
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # work on the tall matrix
        A = A.mH
        M = M.mH if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = T.linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)`` of a rank-``q`` approximation of ``A - M`` (``A ≈ U diag(S) V^H``), by ``niter`` subspace
    iterations from a random Gaussian start."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, V)``: principal components of the rows of ``A`` (centered unless ``center=False``), rank ``q``
    (default ``min(6, m, n)``)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)


FUNCTIONS: dict[str, Any] = {"svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank}
METHODS: dict[str, Any] = {}
