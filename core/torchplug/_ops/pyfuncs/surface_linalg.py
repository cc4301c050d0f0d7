"""Linear-algebra names of the script surface: ``matrix_exp``, ``lu``/``lu_solve``/``lu_unpack``,
``cholesky_solve``/``cholesky_inverse``, ``triangular_solve``, ``nuclear_norm``/``frobenius_norm`` and the
weight-norm helpers ``norm_except_dim``/``_weight_norm``; compositions of existing ops (every backend, and
autograd differentiates them)."""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple
from typing import Any

from torchplug._base import dtype as D
from torchplug._ops.surface import return_types
from torchplug._tensor.tensor import Tensor
from torchplug._ops.torch_namespace import TORCH

__all__ = ["FUNCTIONS", "METHODS"]

for _name, _fields in (("lu_unpack", "P L U"), ("triangular_solve", "solution cloned_coefficient"),
                       ("_lu_with_info", "LU pivots info"), ("geqrf", "a tau")):
    if not hasattr(return_types, _name):
        setattr(return_types, _name, namedtuple(_name, _fields.split()))


def _torch() -> Any:
    return TORCH


def _method(fn: Any) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


# ---- norms ----------------------------------------------------------------------------------------------------
def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of each slice of ``v`` along ``dim``, keeping dims (``dim=-1``: one norm of the whole)."""
    torch = _torch()
    if dim == -1:
        return torch.linalg.vector_norm(v, pow)
    dim = dim % v.dim()
    others = [d for d in builtins.range(v.dim()) if d != dim]
    return torch.linalg.vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm over every dim but ``dim`` (weight normalization)."""
    return v * (g / norm_except_dim(v, 2, dim))


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Sum of the singular values of the matrices over ``dim`` (default the last two dims)."""
    torch = _torch()
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                  "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim) positional form
        dim, keepdim = None, dim
    result = torch.linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else tuple(dim), keepdim=keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


def frobenius_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False, *, out: Tensor | None = None) -> Tensor:
    """The 2-norm of the elements over ``dim``."""
    torch = _torch()
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in "
                  "a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead",
                  UserWarning, stacklevel=2)
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    result = torch.linalg.vector_norm(input, 2, dim=dims, keepdim=keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


# ---- matrix functions -------------------------------------------------------------------------------------------
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(input: Tensor) -> Tensor:
    """The matrix exponential of each square matrix in the last two dims (scaling and squaring with the
    [13/13] Pade approximant, a composition autograd differentiates)."""
    torch = _torch()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{input.shape[-2] if input.dim() >= 2 else 1} by {input.shape[-1] if input.dim() else 1} "
                           "matrices")
    n = input.shape[-1]
    if input.numel() == 0:
        return input.clone()
    if n == 1:
        return input.exp()
    from torchplug._runtime.backends import backend_for

    # the scaling depends on the data; a backend without data (meta) only needs the shapes
    norm = float(input.abs().sum(-2).amax()) if backend_for(input.device.type).has_data else 0.0
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 and math.isfinite(norm) else 0
    a = input / (2 ** s) if s else input
    eye = torch.eye(n, dtype=input.dtype, device=input.device).expand_as(a)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    result = torch.linalg.solve(v - u, v + u)
    for _ in builtins.range(s):
        result = result @ result
    return result


def _lu_factor(a: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Tensor]:
    """LU with partial pivoting (as LAPACK getrf): packed LU, 1-based int32 pivots, int32 info."""
    torch = _torch()
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.clone()
    rows = torch.arange(m, device=a.device)
    pivots = []
    info = torch.zeros(batch, dtype=D.int32, device=a.device)
    for j in builtins.range(k):
        col = lu[..., :, j]
        if pivot:
            below = torch.where(rows >= j, col.abs(), torch.full_like(col.abs(), -1.0))
            p = below.argmax(-1)  # the first largest |a_ij| below the diagonal, as idamax
        else:
            p = torch.full(batch, j, dtype=D.int64, device=a.device)
        pivots.append(p + 1)
        # swap rows j and p (a gather, so autograd sees it)
        perm = rows.expand(*batch, m).clone()
        pj = p.unsqueeze(-1)
        perm = torch.where(rows == j, pj, torch.where(rows == pj, torch.full_like(perm, j), perm))
        lu = lu.gather(-2, perm.unsqueeze(-1).expand(*batch, m, n))
        diag = lu[..., j, j]
        zero = diag == 0
        info = torch.where(zero & (info == 0), torch.full_like(info, j + 1), info)
        safe = torch.where(zero, torch.ones_like(diag), diag)
        below = rows > j
        factors = torch.where(below, lu[..., :, j] / safe.unsqueeze(-1), torch.zeros_like(lu[..., :, j]))
        factors = torch.where(zero.unsqueeze(-1), torch.zeros_like(factors), factors)
        update = factors.unsqueeze(-1) * lu[..., j, :].unsqueeze(-2)
        cols = torch.arange(n, device=a.device)
        update = torch.where(cols > j, update, torch.zeros_like(update))
        lu = lu - update
        # store the multipliers below the diagonal of column j
        colmask = (cols == j) & below.unsqueeze(-1)
        lu = torch.where(colmask, factors.unsqueeze(-1).expand_as(lu), lu)
    piv = torch.stack(pivots, -1).to(D.int32) if pivots else torch.zeros(*batch, 0, dtype=D.int32, device=a.device)
    return lu, piv, info


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out: Any = None) -> Any:
    """Deprecated: the LU factorization ``(A_LU, pivots)`` (``get_infos``: also LAPACK's info per matrix)."""
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
        "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
        "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
        "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
        "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning, stacklevel=2)
    if A.dim() < 2:
        raise RuntimeError(f"torch.lu: Expected tensor with 2 or more dimensions. Got size: {tuple(A.shape)} instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        from torchplug._ops.composites import scalar_type_name

        raise RuntimeError(f'"lu_cpu" not implemented for \'{scalar_type_name(A.dtype)}\'')
    lu_, piv, info = _lu_factor(A, pivot)
    if get_infos:
        return return_types._lu_with_info(lu_, piv, info)
    return lu_, piv


def _apply_pivots(b: Tensor, pivots: Tensor) -> Tensor:
    """``P^T b``: the row swaps ``i <-> pivots[i] - 1`` applied in order."""
    torch = _torch()
    m = b.shape[-2]
    batch = torch.broadcast_shapes(b.shape[:-2], pivots.shape[:-1])
    b = b.expand(*batch, *b.shape[-2:])
    perm = torch.arange(m, device=b.device).expand(*batch, m).clone()
    piv = (pivots.long() - 1).expand(*batch, pivots.shape[-1])
    for i in builtins.range(piv.shape[-1]):
        p = piv[..., i : i + 1]
        pi = perm.gather(-1, p)
        cur = perm[..., i : i + 1]
        perm = perm.scatter(-1, p, cur).scatter(-1, torch.full_like(p, i), pi)
    return b.gather(-2, perm.unsqueeze(-1).expand(*batch, m, b.shape[-1]))


def _unit_lower(lu_: Tensor) -> Tensor:
    torch = _torch()
    n = lu_.shape[-1]
    return lu_.tril(-1) + torch.eye(n, dtype=lu_.dtype, device=lu_.device)


def lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Solve ``A x = b`` from ``A``'s LU factorization (``torch.lu``'s outputs)."""
    torch = _torch()
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
        "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
        "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    if LU_data.shape[-1] != LU_data.shape[-2]:
        raise RuntimeError("linalg.lu_solve: Expected LU to be square")
    y = torch.linalg.solve(_unit_lower(LU_data), _apply_pivots(b, LU_pivots))
    result = torch.linalg.solve(LU_data.triu(), y)
    return result if out is None else out.resize_(result.shape).copy_(result)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True, unpack_pivots: bool = True, *,
              out: Any = None) -> Any:
    """``(P, L, U)`` with ``A = P @ L @ U`` from a packed LU factorization; the parts not asked for are empty."""
    torch = _torch()
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_empty(0)
    if unpack_data:
        L = LU_data[..., :, :k].tril(-1) + torch.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        U = LU_data[..., :k, :].triu()
    else:
        L = U = empty
    if unpack_pivots:
        batch = LU_pivots.shape[:-1]
        eye = torch.eye(m, dtype=LU_data.dtype, device=LU_data.device).expand(*batch, m, m)
        P = _apply_pivots(eye, LU_pivots).mT  # P^T = swaps(I), so A = P L U
    else:
        P = empty
    if out is not None:
        for o, r in zip(out, (P, L, U)):
            o.resize_(r.shape).copy_(r)
        P, L, U = out
    return return_types.lu_unpack(P, L, U)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """Solve ``A X = B`` (``B = input``) given ``A``'s Cholesky factor ``input2`` (lower, or upper)."""
    torch = _torch()
    if input.dim() < 2 or input2.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has " f"{input.dim()} dimensions instead"
                           if input.dim() < 2 else
                           f"u should have at least 2 dimensions, but has {input2.dim()} dimensions instead")
    low = input2.mH if upper else input2
    y = torch.linalg.solve(low.tril(), input)
    result = torch.linalg.solve(low.tril().mH, y)
    return result if out is None else out.resize_(result.shape).copy_(result)


def cholesky_inverse(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``A^-1`` from ``A``'s Cholesky factor (``A = L L^H``, or ``U^H U`` with ``upper``)."""
    torch = _torch()
    if input.dim() < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError("A must be batches of square matrices")
    factor = input.triu() if upper else input.tril()
    inv = torch.linalg.inv(factor)
    result = inv @ inv.mH if upper else inv.mH @ inv
    return result if out is None else out.resize_(result.shape).copy_(result)


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False,
                     *, out: Any = None) -> Any:
    """Deprecated: solve ``A X = b`` for triangular ``A``; ``(solution, cloned_coefficient)``."""
    torch = _torch()
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    tri = A.triu() if upper else A.tril()
    if unitriangular:
        n = A.shape[-1]
        tri = tri - tri.diagonal(dim1=-2, dim2=-1).diag_embed() + torch.eye(n, dtype=A.dtype, device=A.device)
    if transpose:
        tri = tri.mT
    solution = torch.linalg.solve(tri, b)
    coefficient = A.clone()
    if out is not None:
        for o, r in zip(out, (solution, coefficient)):
            o.resize_(r.shape).copy_(r)
        solution, coefficient = out
    return return_types.triangular_solve(solution, coefficient)


# ---- Householder QR (LAPACK's geqrf/orgqr/ormqr conventions) ------------------------------------------------------
def _check_float(name: str, a: Tensor) -> None:
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        from torchplug._ops.composites import scalar_type_name

        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{scalar_type_name(a.dtype)}\'')


def geqrf(input: Tensor, *, out: Any = None) -> Any:
    """The QR factorization in LAPACK's packed form: ``a`` holds R on and above the diagonal and the
    Householder vectors below it; ``tau`` their scalars (``Q = H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H``)."""
    torch = _torch()
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_float("geqrf", input)
    m, n = input.shape[-2], input.shape[-1]
    k = min(m, n)
    a = input.clone()
    rows = torch.arange(m, device=a.device)
    cols = torch.arange(n, device=a.device)
    taus = []
    for j in builtins.range(k):
        col = a[..., :, j]
        alpha = col[..., j]
        below = torch.where(rows > j, col, torch.zeros_like(col))
        xnorm = torch.linalg.vector_norm(below, dim=-1)
        real_alpha = alpha.real if alpha.is_complex() else alpha
        # dlarfg/zlarfg: no reflection when x is zero (and alpha real); else beta = -sign(Re alpha) ||(alpha, x)||
        skip = (xnorm == 0) & ((alpha.imag == 0) if alpha.is_complex() else torch.ones_like(xnorm, dtype=D.bool_))
        norm = torch.sqrt(alpha.abs().pow(2) + xnorm.pow(2))
        beta = -torch.where(real_alpha >= 0, norm, -norm)
        safe_beta = torch.where(skip, torch.ones_like(beta), beta)
        tau = torch.where(skip, torch.zeros_like(alpha), (safe_beta.to(alpha.dtype) - alpha) / safe_beta)
        scale = torch.where(skip, torch.ones_like(alpha), alpha - safe_beta.to(alpha.dtype))
        v = torch.where(rows > j, below / scale.unsqueeze(-1), torch.zeros_like(col))
        v = torch.where(rows == j, torch.ones_like(col), v)
        # apply H^H = I - conj(tau) v v^H to the columns right of j
        w = (v.conj().unsqueeze(-1) * a).sum(-2)
        update = tau.conj().unsqueeze(-1).unsqueeze(-1) * v.unsqueeze(-1) * w.unsqueeze(-2)
        a = a - torch.where(cols > j, update, torch.zeros_like(update))
        new_col = torch.where(rows == j, torch.where(skip, alpha, beta.to(alpha.dtype)).unsqueeze(-1),
                              torch.where(rows > j, v, col))
        a = torch.where(cols == j, new_col.unsqueeze(-1), a)
        taus.append(tau)
    tau = torch.stack(taus, -1) if taus else a.new_zeros(*a.shape[:-2], 0)
    if out is not None:
        for o, r in zip(out, (a, tau)):
            o.resize_(r.shape).copy_(r)
        a, tau = out
    return return_types.geqrf(a, tau)


def _householder_full(a: Tensor, tau: Tensor) -> Tensor:
    """``H_1 ... H_k`` (m x m) from packed Householder vectors (the strictly lower part of ``a``'s columns)."""
    torch = _torch()
    m = a.shape[-2]
    k = tau.shape[-1]
    eye = torch.eye(m, dtype=a.dtype, device=a.device)
    q = eye.expand(*a.shape[:-2], m, m)
    rows = torch.arange(m, device=a.device)
    for i in builtins.range(k):
        v = torch.where(rows > i, a[..., :, i], torch.zeros_like(a[..., :, i]))
        v = torch.where(rows == i, torch.ones_like(v), v)
        h = eye - tau[..., i, None, None] * (v.unsqueeze(-1) @ v.conj().unsqueeze(-2))
        q = q @ h
    return q


def orgqr(input: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first ``n`` columns of ``Q = H_1 ... H_k`` from :func:`geqrf`'s output (``linalg.householder_product``)."""
    if input.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    _check_float("orgqr", input)
    result = _householder_full(input, tau)[..., : input.shape[-1]]
    return result if out is None else out.resize_(result.shape).copy_(result)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False, *,
          out: Tensor | None = None) -> Tensor:
    """``Q @ other`` (or ``other @ Q``, with ``Q^H`` if ``transpose``) for ``Q`` given by :func:`geqrf`'s output."""
    if input3.dim() != input.dim():
        raise RuntimeError("torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {input3.dim()} and input.ndim is equal to {input.dim()}")
    _check_float("ormqr", input)
    q = _householder_full(input, input2)
    if transpose:
        q = q.mH
    result = q @ input3 if left else input3 @ q
    return result if out is None else out.resize_(result.shape).copy_(result)


FUNCTIONS: dict[str, Any] = {
    "norm_except_dim": norm_except_dim, "_weight_norm": _weight_norm, "nuclear_norm": nuclear_norm,
    "frobenius_norm": frobenius_norm, "matrix_exp": matrix_exp, "lu": lu, "lu_solve": lu_solve,
    "lu_unpack": lu_unpack, "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "triangular_solve": triangular_solve, "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
}

METHODS: dict[str, Any] = {
    name: _method(FUNCTIONS[name]) for name in (
        "matrix_exp", "lu", "lu_solve", "cholesky_solve", "cholesky_inverse", "triangular_solve", "geqrf", "orgqr",
        "ormqr")
}
