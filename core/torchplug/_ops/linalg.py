"""The implementation behind ``torchplug.linalg``: PyTorch's linear-algebra namespace (decompositions, solvers, norms) over the aten table."""

from __future__ import annotations

import math
from typing import Any

from torchplug._ops import composites_linalg as _CL
from torchplug._dispatch.aten import A as _aten
from torchplug._ops.surface import return_types
from torchplug._ops.composites import check_castable, resize_output
from torchplug._tensor.tensor import Tensor

__all__ = [
    "LinAlgError", "inv", "inv_ex", "solve", "det", "slogdet", "cholesky", "qr", "svd", "svdvals", "eigh",
    "eigvalsh", "norm", "vector_norm", "matrix_norm", "pinv", "matrix_rank", "lstsq", "cross", "multi_dot",
    "matrix_power", "vecdot", "diagonal", "matmul",
]


class LinAlgError(RuntimeError):
    """A numerical failure of a linear-algebra routine (singular or non positive-definite input)."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"  # PyTorch's class name (torch._C._LinAlgError)


def _named(name: str, fields: str) -> Any:
    from collections import namedtuple

    if not hasattr(return_types, name):
        setattr(return_types, name, namedtuple(name, fields.split()))
    return getattr(return_types, name)


_SLOGDET = _named("linalg_slogdet", "sign logabsdet")
_QR = _named("linalg_qr", "Q R")
_SVD = _named("linalg_svd", "U S Vh")
_EIGH = _named("linalg_eigh", "eigenvalues eigenvectors")
_LSTSQ = _named("linalg_lstsq", "solution residuals rank singular_values")
_INV_EX = _named("linalg_inv_ex", "inverse info")


def _out(result: Any, out: Any) -> Any:
    """Write ``result`` (a tensor or tuple of tensors) into ``out`` with PyTorch's cast check and resize."""
    if out is None:
        return result
    pairs = zip(out, result) if isinstance(result, tuple) else [(out, result)]
    for o, r in pairs:
        check_castable(r.dtype, o.dtype)
        resize_output(o, r.shape)
        _aten.copy_(o, r)
    return type(result)(*out) if isinstance(result, tuple) else out


def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of a (batch of) square matrix; singular input raises :class:`LinAlgError`."""
    return _out(_aten.linalg_inv(A), out)


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:
    """``inv`` that reports singular matrices in ``info`` (0 = success) instead of raising, unless ``check_errors``."""
    from torchplug._tensor.creation import tensor

    try:
        result = _aten.linalg_inv(A)
        info = _aten.zeros(list(A.shape[:-2]), dtype=_int32(), device=A.device)
    except LinAlgError as exc:
        if check_errors:
            raise
        text = str(exc)
        pivot = int(text.split("The diagonal element ")[1].split(" ")[0])
        result = _aten.full(list(A.shape), math.nan, dtype=A.dtype, device=A.device)
        info = tensor(pivot, dtype=_int32(), device=A.device).expand(list(A.shape[:-2])).clone()
    return _out(_INV_EX(result, info), out)


def _int32() -> Any:
    from torchplug._base import dtype as D

    return D.int32


def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """The solution X of ``A X = B`` (``X A = B`` when ``left=False``)."""
    return _out(_aten.linalg_solve(A, B, left=left), out)


def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The determinant of a (batch of) square matrix."""
    return _out(_aten.linalg_det(A), out)


def slogdet(A: Tensor, *, out: Any = None) -> Any:
    """``(sign, logabsdet)`` of the determinant, stable for large or tiny determinants."""
    return _out(_SLOGDET(*_aten.linalg_slogdet(A)), out)


def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """The Cholesky factor of a Hermitian positive-definite matrix (lower, or upper with ``upper=True``)."""
    return _out(_aten.linalg_cholesky(A, upper=upper), out)


def qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:
    """The QR decomposition (``mode`` = 'reduced', 'complete' or 'r')."""
    return _out(_QR(*_aten.linalg_qr(A, mode)), out)


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None, out: Any = None) -> Any:
    """The singular value decomposition ``A = U diag(S) Vh``."""
    return _out(_SVD(*_aten.linalg_svd(A, full_matrices, driver=driver)), out)


def svdvals(A: Tensor, *, driver: str | None = None, out: Tensor | None = None) -> Tensor:
    """The singular values, in descending order."""
    return _out(_aten.linalg_svdvals(A, driver=driver), out)


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, read from its ``UPLO`` triangle."""
    return _out(_EIGH(*_aten.linalg_eigh(A, UPLO)), out)


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """Eigenvalues (ascending) of a Hermitian matrix."""
    return _out(_aten.linalg_eigvalsh(A, UPLO), out)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all elements when None)."""
    return _out(_CL.vector_norm(x, ord, dim, keepdim, dtype), out)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:
    """A matrix norm: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2 over the two dims ``dim``."""
    if isinstance(ord, str):
        result = _aten["linalg_matrix_norm.str_ord"](A, ord, list(dim), keepdim, dtype=dtype)
    else:
        result = _aten.linalg_matrix_norm(A, ord, list(dim), keepdim, dtype=dtype)
    return _out(result, out)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
         out: Tensor | None = None) -> Tensor:
    """A vector or matrix norm, depending on ``ord`` and ``dim`` (PyTorch's rules)."""
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(ord, str):
        result = _aten["linalg_norm.ord_str"](A, ord, dim, keepdim, dtype=dtype)
    else:
        result = _aten.linalg_norm(A, ord, dim, keepdim, dtype=dtype)
    return _out(result, out)


def pinv(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, rcond: Any = None,
         out: Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse (singular values below ``max(atol, rtol * largest)`` are dropped)."""
    if rcond is not None:
        rtol = rcond
    return _out(_aten["linalg_pinv.atol_rtol_float"](A, atol=_float(atol), rtol=_float(rtol), hermitian=hermitian), out)


def matrix_rank(A: Tensor, *, atol: Any = None, rtol: Any = None, hermitian: bool = False, tol: Any = None,
                out: Tensor | None = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)``."""
    if tol is not None:
        atol, rtol = tol, 0.0
    return _out(_aten["linalg_matrix_rank.atol_rtol_float"](A, atol=_float(atol), rtol=_float(rtol),
                                                       hermitian=hermitian), out)


def _float(v: Any) -> Any:
    if isinstance(v, Tensor):
        return float(v.item())
    return None if v is None else float(v)


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> Any:
    """The least-squares solution of ``A X = B`` with residuals, rank and singular values (driver-dependent)."""
    return _LSTSQ(*_aten.linalg_lstsq(A, B, rcond, driver=driver))


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim``."""
    return _out(_aten.linalg_cross(input, other, dim=dim), out)


def multi_dot(tensors: Any, *, out: Tensor | None = None) -> Tensor:
    """The product of a chain of matrices (the first and last may be vectors)."""
    return _out(_aten.linalg_multi_dot(list(tensors)), out)


def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """``A`` to the integer power ``n`` (negative powers invert)."""
    return _out(_aten.linalg_matrix_power(A, n), out)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The dot product of vectors along ``dim`` (conjugating ``x``), with broadcasting."""
    if x.dtype.is_complex:
        x = _CL._conj(x)
    return _out(_aten.sum(_aten.mul(x, y), [dim]), out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of a batch of matrices (a view)."""
    return _aten.diagonal(A, offset, dim1, dim2)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Alias of :func:`torchplug.matmul`."""
    return _out(_aten.matmul(input, other), out)

