"""meta kernels for ``torchplug.linalg`` primitives and ``vdot``: PyTorch's checks, shapes and (column-major) layouts."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_LOW = (D.float16, D.bfloat16)


def _check(name: str, A: C.Tensor, *, square: bool = True) -> tuple[int, ...]:
    size = C.shape(A)
    if len(size) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    dt = A._dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {C.scalar_type_name(dt)}")
    if dt in _LOW:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {C.scalar_type_name(dt)}")
    if square and size[-1] != size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {size[-2]} by {size[-1]} matrices")
    return size


def _prod(size: tuple[int, ...]) -> int:
    out = 1
    for s in size:
        out *= s
    return out


def _real(dtype: D.dtype) -> D.dtype:
    return {"complex64": D.float32, "complex128": D.float64}.get(dtype.name, dtype)


def _matrix(size: tuple[int, ...], dtype: D.dtype) -> C.Tensor:
    """A batch of matrices laid out column-major (LAPACK's layout, as PyTorch returns them)."""
    size = tuple(size)
    if len(size) < 2:
        return C.new(size, dtype)
    r, c = size[-2:]
    batch = C.contiguous_strides(size[:-2] + (c, r))
    return C.new(size, dtype, batch[:-2] + (1, max(r, 1)))


@TABLE.impl("aten::linalg_inv")
def linalg_inv(A: C.Tensor) -> C.Tensor:
    return _matrix(_check("linalg.inv", A), A._dtype)


@TABLE.impl("aten::linalg_solve")
def linalg_solve(A: C.Tensor, B: C.Tensor, left: bool = True) -> C.Tensor:
    a = _check("linalg.solve", A)
    b = C.shape(B)
    if B._dtype is not A._dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {C.scalar_type_name(A._dtype)} "
            f"and B of type {C.scalar_type_name(B._dtype)} instead"
        )
    n = a[-1]
    vector = len(b) == 1 or (left and len(b) == len(a) - 1 and b == a[:-1])
    bm = b + (1,) if vector else b
    if not left:
        bm = bm[:-2] + (bm[-1], bm[-2])
    if bm[-2] != n:
        eq = "AX = B" if left else "XA = B"
        shown = (b[-1], 1) if vector else (b[-2], b[-1])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {shown[0]}x{shown[1]})")
    batch = C.broadcast_shapes(a[:-2], bm[:-2])
    if vector:
        # PyTorch solves all batches as the columns of one (n, batch) system: n is the slowest dim.
        inner = C.contiguous_strides(batch)
        return C.new(batch + (n,), A._dtype, tuple(inner) + (max(1, _prod(batch)),))
    if not left:
        return C.new(batch + (bm[-1], n), A._dtype)
    return _matrix(batch + (n, bm[-1]), A._dtype)


@TABLE.impl("aten::linalg_det")
def linalg_det(A: C.Tensor) -> C.Tensor:
    return C.new(_check("linalg.det", A)[:-2], A._dtype)


@TABLE.impl("aten::linalg_slogdet")
def linalg_slogdet(A: C.Tensor) -> tuple[C.Tensor, C.Tensor]:
    batch = _check("linalg.slogdet", A)[:-2]
    return C.new(batch, A._dtype), C.new(batch, _real(A._dtype))


@TABLE.impl("aten::linalg_cholesky")
def linalg_cholesky(self: C.Tensor, upper: bool = False) -> C.Tensor:
    return _matrix(_check("linalg.cholesky", self), self._dtype)


@TABLE.impl("aten::linalg_qr")
def linalg_qr(A: C.Tensor, mode: str = "reduced") -> tuple[C.Tensor, C.Tensor]:
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    size = _check("linalg.qr", A, square=False)
    batch, (m, n) = size[:-2], size[-2:]
    k = min(m, n)
    r_rows = m if mode == "complete" else k
    q = C.new((0,), A._dtype) if mode == "r" else _matrix(batch + (m, m if mode == "complete" else k), A._dtype)
    return q, _matrix(batch + (r_rows, n), A._dtype)


def _check_driver(driver: Any) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.")


@TABLE.impl("aten::linalg_svd")
def linalg_svd(A: C.Tensor, full_matrices: bool = True, driver: str | None = None) -> tuple[C.Tensor, C.Tensor, C.Tensor]:
    _check_driver(driver)
    size = _check("linalg.svd", A, square=False)
    batch, (m, n) = size[:-2], size[-2:]
    k = min(m, n)
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    # torch's meta Vh is row-major (its cpu kernel returns it column-major); meta follows torch's meta.
    return (_matrix(batch + (m, u_cols), A._dtype), C.new(batch + (k,), _real(A._dtype)),
            C.new(batch + (v_rows, n), A._dtype))


@TABLE.impl("aten::linalg_svdvals")
def linalg_svdvals(A: C.Tensor, driver: str | None = None) -> C.Tensor:
    _check_driver(driver)
    size = _check("linalg.svd", A, square=False)
    return C.new(size[:-2] + (min(size[-2:]),), _real(A._dtype))


def _eigh(self: C.Tensor, UPLO: str) -> tuple[int, ...]:
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{C.scalar_type_name(self._dtype)}'")
    return _check("linalg.eigh", self)


@TABLE.impl("aten::linalg_eigh")
def linalg_eigh(self: C.Tensor, UPLO: str = "L") -> tuple[C.Tensor, C.Tensor]:
    size = _eigh(self, UPLO)
    return C.new(size[:-1], _real(self._dtype)), _matrix(size, self._dtype)


@TABLE.impl("aten::linalg_eigvalsh")
def linalg_eigvalsh(self: C.Tensor, UPLO: str = "L") -> C.Tensor:
    return C.new(_eigh(self, UPLO)[:-1], _real(self._dtype))


def _eig(name: str, self: C.Tensor) -> tuple[tuple[int, ...], D.dtype]:
    """torch's checks of ``linalg.eig``/``eigvals`` in its order; the size and the (complex) result dtype."""
    size, dt = C.shape(self), self._dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {C.scalar_type_name(dt)}")
    if len(size) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if size[-1] != size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {size[-2]} by {size[-1]} "
                           "matrices")
    complex_of = {"float32": D.complex64, "float64": D.complex128, "complex64": D.complex64,
                  "complex128": D.complex128}
    if dt.name not in complex_of:  # torch's meta gives complex32, a dtype torchplug does not have
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{C.scalar_type_name(dt)}'")
    return size, complex_of[dt.name]


@TABLE.impl("aten::linalg_eig")
def linalg_eig(self: C.Tensor) -> tuple[C.Tensor, C.Tensor]:
    size, dt = _eig("linalg.eig", self)
    return C.new(size[:-1], dt), C.new(size, dt)  # row-major, as torch's meta (its cpu kernel: column-major)


@TABLE.impl("aten::linalg_eigvals")
def linalg_eigvals(self: C.Tensor) -> C.Tensor:
    size, dt = _eig("linalg.eigvals", self)
    return C.new(size[:-1], dt)


@TABLE.impl("aten::linalg_ldl_factor_ex")
def linalg_ldl_factor_ex(self: C.Tensor, hermitian: bool = False, check_errors: bool = False) -> tuple[C.Tensor, ...]:
    size, dt = C.shape(self), self._dtype
    if len(size) < 2:
        raise RuntimeError("torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions.")
    if size[-1] != size[-2]:
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are "
                           f"{size[-2]} by {size[-1]} matrices")
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got "
                           f"{C.scalar_type_name(dt)}")
    return _matrix(size, dt), C.new(size[:-1], D.int32), C.new(size[:-2], D.int32)


@TABLE.impl("aten::linalg_ldl_solve")
def linalg_ldl_solve(LD: C.Tensor, pivots: C.Tensor, B: C.Tensor, hermitian: bool = False) -> C.Tensor:
    ld, b = C.shape(LD), C.shape(B)
    if len(b) < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(len(b), 1)}, "
                         f"{max(len(b), 1) - 1}], but got -2)")
    if len(ld) < 2 or ld[-1] != ld[-2] or b[-2] != ld[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {ld[-2]} by "
                           f"{ld[-1]} but each b matrix is {b[-2]} by {b[-1]}")
    return _matrix(C.broadcast_shapes(ld[:-2], b[:-2]) + b[-2:], B._dtype)


@TABLE.impl("aten::linalg_lstsq")
def linalg_lstsq(self: C.Tensor, b: C.Tensor, rcond: float | None = None, driver: str | None = None) -> tuple[C.Tensor, ...]:
    if driver is not None and driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if self._dtype is not b._dtype:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
            f"{C.scalar_type_name(self._dtype)} and other's dtype {C.scalar_type_name(b._dtype)}"
        )
    a = C.shape(self)
    if len(a) < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    bs = C.shape(b)
    vector = len(bs) == 1 or (len(bs) == len(a) - 1 and bs == a[:-1])
    if (bs[-1] if vector else bs[-2]) != a[-2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if vector
            else "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
        )
    driver = driver or "gelsy"
    m, n = a[-2:]
    k = 1 if vector else bs[-1]
    batch = C.broadcast_shapes(a[:-2], (bs[:-1] if vector else bs[:-2]))
    real = _real(self._dtype)
    rows = max(m, n)
    base = C.contiguous_strides(batch + (k, rows))
    if vector:
        solution = C.new(batch + (n,), self._dtype)
    else:
        solution = C.new(batch + (n, k), self._dtype, base[:-2] + (1, rows))
    rank = C.new((0,) if driver == "gels" else batch, D.int64)
    sv = C.new(batch + (min(m, n),), real) if driver in ("gelsd", "gelss") else C.new((0,), real)
    # Residuals exist only for full-rank tall problems: a data-dependent fact; meta reports none.
    return solution, C.new((0,), real), rank, sv


@TABLE.impl("aten::vdot")
def vdot(self: C.Tensor, other: C.Tensor) -> C.Tensor:
    if self.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.dim()}D and {other.dim()}D tensors")
    if self._dtype is not other._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {C.scalar_type_name(self._dtype)} and "
            f"{C.scalar_type_name(other._dtype)}"
        )
    n, n2 = self.numel(), other.numel()
    if n != n2:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{n2}] to have the same number of elements, "
            f"but got {n} and {n2} elements respectively"
        )
    return C.new((), self._dtype)
