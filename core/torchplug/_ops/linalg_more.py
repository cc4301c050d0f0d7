"""More of ``torchplug.linalg``: ``matrix_exp``, ``householder_product``, ``solve_triangular``, ``solve_ex``, the
LU family (``lu_factor``, ``lu_factor_ex``, ``lu``, ``lu_solve``), ``tensorinv``, ``tensorsolve``, ``vander`` and
``cond``, each a composition of existing ops (every backend runs them, autograd differentiates them), with
PyTorch's signatures, named results and argument checks."""

from __future__ import annotations

import math
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A as _aten
from torchplug._ops.linalg import _named, _out
from torchplug._ops.pyfuncs.surface_linalg import _apply_pivots, _lu_factor, _unit_lower, orgqr
from torchplug._ops.pyfuncs.surface_linalg import matrix_exp as _matrix_exp
from torchplug._ops.torch_namespace import TORCH
from torchplug._tensor.tensor import Tensor

__all__ = ["matrix_exp", "householder_product", "solve_triangular", "solve_ex", "lu_factor", "lu_factor_ex", "lu",
           "lu_solve", "tensorinv", "tensorsolve", "vander", "cond", "cholesky_ex", "eig", "eigvals", "ldl_factor_ex", "ldl_factor", "ldl_solve"]

_LU_FACTOR = _named("linalg_lu_factor", "LU pivots")
_LU_FACTOR_EX = _named("linalg_lu_factor_ex", "LU pivots info")
_LU = _named("linalg_lu", "P L U")
_SOLVE_EX = _named("linalg_solve_ex", "result info")
_CHOLESKY_EX = _named("linalg_cholesky_ex", "L info")
_EIG = _named("linalg_eig", "eigenvalues eigenvectors")
_LDL_FACTOR_EX = _named("linalg_ldl_factor_ex", "LD pivots info")
_LDL_FACTOR = _named("linalg_ldl_factor", "LD pivots")


def _check_square(name: str, A: Tensor) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")


def _eig_out(name: str, result: Any, out: Any, fields: tuple[str, ...]) -> Any:
    """``out=`` of eig/eigvals: torch's own cast message (it names the result), then the shared writer."""
    if out is not None:
        for target, got, field in zip(out if isinstance(out, (tuple, list)) else (out,),
                                      result if isinstance(result, tuple) else (result,), fields):
            if not D.can_cast(got.dtype, target.dtype):
                raise RuntimeError(f"torch.linalg.{name}: Expected {field} to be safely castable from "
                                   f"{D.scalar_type_name(got.dtype)} dtype, but got {field} with dtype "
                                   f"{D.scalar_type_name(target.dtype)}")
    return _out(result, out)


def eig(A: Tensor, *, out: Any = None) -> Any:
    """``(eigenvalues, eigenvectors)`` of a (batch of) general square matrix: complex results (complex64 for
    float32 input), eigenvectors of unit 2-norm in the columns, in LAPACK's order (not sorted)."""
    return _eig_out("eig", _EIG(*_aten.linalg_eig(A)), out, ("eigenvalues", "eigenvectors"))


def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of a (batch of) general square matrix, complex, in LAPACK's order (differentiable: the
    backward computes the eigenvectors, as torch's ``eigvals`` does through ``eig``)."""
    values = _aten.linalg_eigvals(A)
    return _eig_out("eigvals", values, out, ("eigenvalues",))


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    """``(LD, pivots, info)``: the Bunch-Kaufman LDL factorization of a symmetric (``hermitian``: Hermitian)
    matrix read from its lower triangle, packed as LAPACK's ``?sytrf``, with LAPACK's info (k > 0: the block
    diagonal ``D`` is singular at k, raised as an error with ``check_errors``).  Not differentiable (as torch)."""
    return _out(_LDL_FACTOR_EX(*_aten.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=check_errors)), out)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out: Any = None) -> Any:
    """``(LD, pivots)`` of :func:`ldl_factor_ex`; a singular ``D`` raises :class:`LinAlgError`."""
    from torchplug._ops.linalg import LinAlgError

    from torchplug._runtime.backends import backend_for

    LD, pivots, info = _aten.linalg_ldl_factor_ex(A, hermitian=hermitian, check_errors=False)
    # (a backend without data, meta, has no info to check)
    if info.numel() and backend_for(info.device.type).has_data and bool((info > 0).any()):
        flat = info.reshape(-1)
        first = int((flat > 0).nonzero()[0, 0])
        k = int(flat[first]) - 1
        prefix = f"(Batch element {first}): " if A.dim() > 2 else ""
        raise LinAlgError(f"torch.linalg.ldl_factor: {prefix}The factorization could not be completed because the "
                          f"input is singular: D[{k}, {k}] is exactly zero.")
    return _out(_LDL_FACTOR(LD, pivots), out)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False, out: Tensor | None = None) -> Tensor:
    """The solution ``X`` of ``A X = B`` from :func:`ldl_factor`'s ``(LD, pivots)`` (batches broadcast)."""
    return _out(_aten.linalg_ldl_solve(LD, pivots, B, hermitian=hermitian), out)


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential of each square matrix (``torch.matrix_exp``)."""
    return _matrix_exp(A)


def householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first n columns of the product of Householder matrices ``H_1 ... H_k`` (``torch.orgqr``)."""
    return _out(orgqr(A, tau), out)


def _triangular(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    tri = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        tri = tri - tri.diagonal(dim1=-2, dim2=-1).diag_embed() + TORCH.eye(n, dtype=A.dtype, device=A.device)
    return tri


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False,
                     out: Tensor | None = None) -> Tensor:
    """Solve ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``; only the triangle ``upper`` names
    is read (and its diagonal taken as ones with ``unitriangular``)."""
    if A.dim() < 2 or B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor "
                           f"{'A' if A.dim() < 2 else 'B'} must have at least 2 dimensions.")
    tri = _triangular(A, upper, unitriangular)
    result = TORCH.linalg.solve(tri, B) if left else TORCH.linalg.solve(tri.mT, B.mT).mT
    return _out(result, out)


def _zero_info(A: Tensor) -> Tensor:
    return TORCH.zeros(A.shape[:-2], dtype=D.int32, device=A.device)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out: Any = None) -> Any:
    """``(result, info)``: :func:`torchplug.linalg.solve` and LAPACK's info (0: solved; a singular ``A`` raises)."""
    return _out(_SOLVE_EX(TORCH.linalg.solve(A, B, left=left), _zero_info(A)), out)


def _cholesky_info(A: Tensor) -> Tensor:
    """LAPACK potrf's info per matrix: the order of the first leading minor that is not positive-definite
    (0: none), from a column-by-column factorization of every matrix of the batch at once."""
    n = A.shape[-1]
    L = TORCH.zeros_like(A)
    info = _zero_info(A)
    for j in range(n):
        row = L[..., j, :j]
        d = A[..., j, j].real - (row.abs() ** 2).sum(-1)
        failed = ~(d > 0) & (info == 0)
        info = TORCH.where(failed, TORCH.full_like(info, j + 1), info)
        ljj = TORCH.where(d > 0, d, TORCH.ones_like(d)).sqrt().to(A.dtype)
        col = (A[..., j:, j] - L[..., j:, :j].matmul(row.conj().unsqueeze(-1)).squeeze(-1)) / ljj.unsqueeze(-1)
        L = L.clone()
        L[..., j:, j] = col
    return info


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out: Any = None) -> Any:
    """``(L, info)``: the Cholesky factor and LAPACK's info (k > 0: the leading minor of order k is not
    positive-definite, and ``L`` is not meaningful; raised as an error with ``check_errors``)."""
    from torchplug._ops.linalg import LinAlgError

    try:
        factor = TORCH.linalg.cholesky(A, upper=upper)
    except LinAlgError as exc:
        message = str(exc).replace("linalg.cholesky:", "linalg.cholesky_ex:", 1)
        if check_errors:
            raise LinAlgError(message) from None
        info = _cholesky_info(A)
        ok = (info == 0).unsqueeze(-1).unsqueeze(-1)
        safe = TORCH.where(ok, A, TORCH.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand_as(A))
        factor = TORCH.where(ok, TORCH.linalg.cholesky(safe, upper=upper), TORCH.zeros_like(A))
        return _out(_CHOLESKY_EX(factor, info), out)
    return _out(_CHOLESKY_EX(factor, _zero_info(A)), out)


def _check_lu_input(name: str, A: Tensor) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{tuple(A.shape)} instead")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out: Any = None) -> Any:
    """``(LU, pivots, info)``: the packed LU factorization with partial pivoting, 1-based int32 pivots, and
    LAPACK's info (k > 0: U[k-1, k-1] is exactly zero; raised as an error with ``check_errors``)."""
    _check_lu_input("lu_factor_ex", A)
    lu_, piv, info = _lu_factor(A, pivot)
    if check_errors and bool((info > 0).any()):
        k = int(info.max())
        raise RuntimeError(f"torch.linalg.lu_factor_ex: U[{k},{k}] is zero and using it on lu_solve would result in "
                          "a division by zero. If you still want to perform the factorization, consider calling "
                          "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _out(_LU_FACTOR_EX(lu_, piv, info), out)


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """``(LU, pivots)``: the packed LU factorization; a singular matrix raises (use ``lu_factor_ex`` to get info)."""
    _check_lu_input("lu_factor", A)
    lu_, piv, info = _lu_factor(A, pivot)
    if bool((info > 0).any()):
        k = int(info.max())
        raise RuntimeError(f"torch.linalg.lu_factor: U[{k},{k}] is zero and using it on lu_solve would result in a "
                          "division by zero. If you still want to perform the factorization, consider calling "
                          "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return _out(_LU_FACTOR(lu_, piv), out)


def lu(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """``(P, L, U)`` with ``A = P @ L @ U`` (``L`` unit lower triangular, ``U`` upper triangular)."""
    _check_lu_input("lu", A)
    lu_, piv, _ = _lu_factor(A, pivot)
    P, L, U = TORCH.lu_unpack(lu_, piv)
    return _out(_LU(P, L, U), out)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: Tensor | None = None) -> Tensor:
    """Solve ``A X = B`` from ``A``'s ``lu_factor`` (``adjoint``: ``A^H X = B``; ``left=False``: ``X A = B``)."""
    if LU.dim() < 2 or LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError("linalg.lu_solve: Expected LU to be square")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _out(lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH, out)
    lower, upper = _unit_lower(LU), LU.triu()
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        result = TORCH.linalg.solve(upper, TORCH.linalg.solve(lower, _apply_pivots(B, pivots)))
    else:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        y = TORCH.linalg.solve(lower.mH, TORCH.linalg.solve(upper.mH, B))
        n = LU.shape[-1]
        eye = TORCH.eye(n, dtype=LU.dtype, device=LU.device).expand(*pivots.shape[:-1], n, n)
        result = _apply_pivots(eye, pivots).mT @ y
    return _out(result, out)


def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``A`` seen as a linear map from its last dims to its first ``ind`` dims."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape = list(A.shape[:ind])
    in_shape = list(A.shape[ind:])
    rows = math.prod(out_shape)
    cols = math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse = TORCH.linalg.inv(A.reshape(rows, cols))
    return _out(inverse.reshape(in_shape + out_shape), out)


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *, out: Tensor | None = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) == B`` (``dims``: dims of ``A`` moved to the end first)."""
    if dims is not None:
        nd = A.dim()
        moved = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in moved] + moved)
    result_shape = list(A.shape[B.dim():])
    n = math.prod(result_shape)
    if math.prod(A.shape[:B.dim()]) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {math.prod(A.shape[:B.dim()])}")
    result = TORCH.linalg.solve(A.reshape(n, n), B.reshape(n))
    return _out(result.reshape(result_shape), out)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of ``x`` along a new last dim: ``x ** 0, x ** 1, ..., x ** (N - 1)``."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else int(N)
    if n <= 1:
        if n < 1:
            raise RuntimeError("N must be greater than 1.")
        return TORCH.ones_like(x).unsqueeze(-1)
    x = x.to(TORCH.promote_types(x.dtype, D.int64)) if not (x.dtype.is_floating_point or x.dtype.is_complex) else x
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)  # as PyTorch: one cumulative product
    return TORCH.cat([TORCH.ones_like(powers[..., :1]), powers], -1)


def cond(A: Tensor, p: Any = None, *, out: Tensor | None = None) -> Tensor:
    """The condition number of ``A`` in the ``p`` norm (``None``/2: ratio of extreme singular values)."""
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p in (None, 2, -2):
        s = TORCH.linalg.svdvals(A)
        result = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _out(result, out)
    _check_square("cond", A)
    result = TORCH.linalg.matrix_norm(A, p) * TORCH.linalg.matrix_norm(TORCH.linalg.inv(A), p)
    return _out(result, out)
