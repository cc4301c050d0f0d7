"""cpu kernels: ``torchplug.linalg`` decompositions and solvers over NumPy's LAPACK (inv, solve, det, slogdet,
cholesky, qr, svd, eigh, eig, ldl, lstsq) and ``vdot``.

Results use PyTorch's layouts: matrices come back batch-contiguous and column-major in the last two
dims (LAPACK's order), as PyTorch's cpu kernels return them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops.composites import scalar_type_name
from torchplug._tensor.tensor import Storage, Tensor, make_tensor
from torchplug.library import KernelTable

from .. import _common as C
from .core import fresh

TABLE = KernelTable("CPU")

_LOW = frozenset((D.float16, D.bfloat16))


def _linalg_error(message: str) -> Exception:
    from torchplug.linalg import LinAlgError

    return LinAlgError(message)


def _check_input(name: str, A: Tensor, *, square: bool = True, what: str = "A") -> np.ndarray:
    """PyTorch's checks for a (batch of) matrix input; returns its array."""
    data = A._data
    if data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    dt = A._dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_type_name(dt)}")
    low = dt in _LOW
    if low and name not in _LOW_PRECISION_KERNEL:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {scalar_type_name(dt)}")
    if square and data.shape[-1] != data.shape[-2]:
        raise RuntimeError(
            f"{name}: {what} must be batches of square matrices, but they are {data.shape[-2]} by {data.shape[-1]} matrices"
        )
    if low:  # these pass PyTorch's checks and fail in its LAPACK kernel's dtype dispatch
        raise C.not_implemented(_LOW_PRECISION_KERNEL[name], dt)
    return data


# Ops whose float16/bfloat16 input PyTorch refuses in the cpu kernel they run, not by an argument check.
_LOW_PRECISION_KERNEL = {
    "linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.cholesky": "cholesky_cpu", "linalg.qr": "geqrf_cpu",
    "linalg.svd": "linalg_svd_cpu", "linalg.eigh": "linalg_eigh_cpu",
}


def _contiguous(arr: Any) -> np.ndarray:
    """A C-contiguous array (keeping 0-dim arrays 0-dim, unlike ``np.ascontiguousarray``)."""
    arr = np.asarray(arr)
    return arr if arr.flags.c_contiguous else arr.copy()


def _column_major(arr: np.ndarray) -> np.ndarray:
    """``arr`` laid out batch-contiguous, column-major in the last two dims (LAPACK's layout)."""
    arr = np.asarray(arr)
    if arr.ndim < 2:
        return _contiguous(arr)
    return np.swapaxes(_contiguous(np.swapaxes(arr, -1, -2)), -1, -2)


def _wrap(arr: np.ndarray, dtype: D.dtype, *, matrix: bool = True) -> Tensor:
    """A fresh tensor of ``dtype``; matrices column-major in their last two dims (a transposed buffer)."""
    arr = np.asarray(arr).astype(dtype.numpy_dtype, copy=False)
    if not matrix or arr.ndim < 2 or arr.size == 0:
        return fresh(_contiguous(arr))
    root = _contiguous(np.swapaxes(arr, -1, -2))
    return make_tensor(np.swapaxes(root, -1, -2), dtype, C.CPU, C.KEYSET, Storage(root.nbytes, C.CPU, root))


def _batches(data: np.ndarray) -> np.ndarray:
    return data.reshape((-1,) + data.shape[-2:])


def _batch_prefix(data: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if data.ndim > 2 else ""


def _first_zero_pivot(a: np.ndarray) -> int:
    """LAPACK getrf's ``info``: the 1-based index of the first exactly-zero pivot of LU with partial pivoting."""
    a = np.array(a, dtype=np.result_type(a.dtype, np.float64) if a.dtype.kind != "c" else np.complex128)
    a = np.array(a, dtype=a.dtype)
    n = a.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        if p != j:
            a[[j, p]] = a[[p, j]]
        a[j + 1 :, j] /= a[j, j]
        a[j + 1 :, j + 1 :] -= np.outer(a[j + 1 :, j], a[j, j + 1 :])
    return 0


def _singular_batch(data: np.ndarray) -> tuple[int, int]:
    """(batch index, pivot index) of the first singular matrix in ``data``."""
    for i, m in enumerate(_batches(data)):
        info = _first_zero_pivot(m.astype(m.dtype))
        if info:
            return i, info
    return 0, 0


# ---- inverse and solve ------------------------------------------------------------------------------------
@TABLE.impl("aten::linalg_inv")
def linalg_inv(A):
    data = _check_input("linalg.inv", A)
    if data.size == 0:
        return _wrap(np.empty(data.shape), A._dtype)
    try:
        out = np.linalg.inv(data)
    except np.linalg.LinAlgError:
        out = None
    if out is None or not np.all(np.isfinite(out)) and np.all(np.isfinite(data)):
        batch, info = _singular_batch(data)
        if info:
            raise _linalg_error(
                f"linalg.inv: {_batch_prefix(data, batch)}The diagonal element {info} is zero, the inversion could not "
                "be completed because the input matrix is singular."
            ) from None
        if out is None:
            out = np.linalg.pinv(data)
    return _wrap(out, A._dtype)


@TABLE.impl("aten::linalg_solve")
def linalg_solve(A, B, left=True):
    a = _check_input("linalg.solve", A)
    b = B._data
    if B._dtype is not A._dtype:
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {scalar_type_name(A._dtype)} "
            f"and B of type {scalar_type_name(B._dtype)} instead"
        )
    vector = b.ndim == 1 or (left and b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    if not left:
        bm = np.swapaxes(bm, -1, -2)
        a = np.swapaxes(a, -1, -2)
    n = a.shape[-1]
    if bm.shape[-2] != n:
        eq = "AX = B" if left else "XA = B"
        shown = (b.shape[-2], b.shape[-1]) if not vector else (b.shape[-1], 1)
        if not left:
            shown = (b.shape[-2], b.shape[-1])
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and {shown[0]}x{shown[1]})"
        )
    batch = C.broadcast_shape(a.shape[:-2], bm.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    b_b = np.broadcast_to(bm, batch + bm.shape[-2:])
    if a_b.size == 0 or b_b.size == 0:
        x = np.zeros(batch + bm.shape[-2:], a.dtype)
    else:
        try:
            x = np.linalg.solve(a_b, b_b)
        except np.linalg.LinAlgError:
            index, _ = _singular_batch(a_b)
            prefix = f"(Batch element {index}): " if a_b.ndim > 2 else ""
            raise _linalg_error(
                f"torch.linalg.solve: {prefix}The solver failed because the input matrix is singular."
            ) from None
    if vector:
        # PyTorch's layout: the batches are the columns of one (n, batch) result, n the slowest dim.
        root = _contiguous(np.moveaxis(x[..., 0], -1, 0).astype(A._dtype.numpy_dtype))
        return make_tensor(np.moveaxis(root, 0, -1), A._dtype, C.CPU, C.KEYSET, Storage(root.nbytes, C.CPU, root))
    if not left:
        return _wrap(np.swapaxes(x, -1, -2), A._dtype, matrix=False)
    return _wrap(x, A._dtype)


# ---- determinants -----------------------------------------------------------------------------------------
@TABLE.impl("aten::linalg_det")
def linalg_det(A):
    data = _check_input("linalg.det", A)
    if data.shape[-1] == 0:
        return _wrap(np.ones(data.shape[:-2]), A._dtype, matrix=False)
    return _wrap(np.linalg.det(data), A._dtype, matrix=False)


@TABLE.impl("aten::linalg_slogdet")
def linalg_slogdet(A):
    data = _check_input("linalg.slogdet", A)
    if data.shape[-1] == 0:
        sign, logabs = np.ones(data.shape[:-2]), np.zeros(data.shape[:-2])
    else:
        sign, logabs = np.linalg.slogdet(data)
    real = {"complex64": D.float32, "complex128": D.float64}.get(A._dtype.name, A._dtype)
    return _wrap(sign, A._dtype, matrix=False), _wrap(logabs, real, matrix=False)


# ---- decompositions ------------------------------------------------------------------------------------------
@TABLE.impl("aten::linalg_cholesky")
def linalg_cholesky(self, upper=False):
    data = _check_input("linalg.cholesky", self)
    if data.size == 0:
        return _wrap(np.empty(data.shape), self._dtype)
    try:
        low = np.linalg.cholesky(data)
    except np.linalg.LinAlgError:
        low = None
    if low is None or not np.all(np.isfinite(low)):
        index, order = _not_positive_definite(data)
        raise _linalg_error(
            f"linalg.cholesky: {_batch_prefix(data, index)}The factorization could not be completed because the input "
            f"is not positive-definite (the leading minor of order {order} is not positive-definite)."
        )
    out = np.swapaxes(low, -1, -2).conj() if upper else low
    return _wrap(out, self._dtype)


def _not_positive_definite(data: np.ndarray) -> tuple[int, int]:
    """(batch index, order of the first leading minor that is not positive-definite)."""
    for i, m in enumerate(_batches(data)):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                return i, k
    return 0, data.shape[-1]


@TABLE.impl("aten::linalg_qr")
def linalg_qr(A, mode="reduced"):
    if mode not in ("reduced", "r", "complete"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    data = _check_input("linalg.qr", A, square=False)
    m, n = data.shape[-2:]
    k = min(m, n)
    batch = data.shape[:-2]
    if data.size == 0:
        q_cols = m if mode == "complete" else k
        q = np.broadcast_to(np.eye(m, q_cols), batch + (m, q_cols)) if m else np.empty(batch + (m, q_cols))
        r = np.zeros(batch + ((m if mode == "complete" else k), n))
    else:
        q, r = np.linalg.qr(data, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        return _wrap(np.empty((0,)), A._dtype, matrix=False), _wrap(r, A._dtype)
    return _wrap(q, A._dtype), _wrap(r, A._dtype)


def _real(dtype: D.dtype) -> D.dtype:
    return {"complex64": D.float32, "complex128": D.float64}.get(dtype.name, dtype)


def _check_driver(driver: Any) -> None:
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.")


@TABLE.impl("aten::linalg_svd")
def linalg_svd(A, full_matrices=True, driver=None):
    _check_driver(driver)
    data = _check_input("linalg.svd", A, square=False)
    m, n = data.shape[-2:]
    k = min(m, n)
    batch = data.shape[:-2]
    if data.size == 0:
        ur, vr = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, ur), batch + (m, ur))
        vh = np.broadcast_to(np.eye(vr, n), batch + (vr, n))
        s = np.empty(batch + (k,))
    else:
        u, s, vh = np.linalg.svd(data, full_matrices=full_matrices)
    return _wrap(u, A._dtype), _wrap(s, _real(A._dtype), matrix=False), _wrap(vh, A._dtype)


@TABLE.impl("aten::linalg_svdvals")
def linalg_svdvals(A, driver=None):
    _check_driver(driver)
    data = _check_input("linalg.svd", A, square=False)
    k = min(data.shape[-2:])
    if data.size == 0:
        return _wrap(np.empty(data.shape[:-2] + (k,)), _real(A._dtype), matrix=False)
    return _wrap(np.linalg.svd(data, compute_uv=False), _real(A._dtype), matrix=False)


def _check_uplo(uplo: str) -> str:
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")
    return uplo.upper()


def _check_eigh(name: str, self: Tensor) -> np.ndarray:
    if not (self._dtype.is_floating_point or self._dtype.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(self._dtype)}'")
    return _check_input("linalg.eigh", self)


@TABLE.impl("aten::linalg_eigh")
def linalg_eigh(self, UPLO="L"):
    uplo = _check_uplo(UPLO)
    data = _check_eigh("linalg_eigh_cpu", self)
    if data.size == 0:
        w, v = np.empty(data.shape[:-1]), np.empty(data.shape)
    else:
        w, v = np.linalg.eigh(data, UPLO=uplo)
    return _wrap(w, _real(self._dtype), matrix=False), _wrap(v, self._dtype)


@TABLE.impl("aten::linalg_eigvalsh")
def linalg_eigvalsh(self, UPLO="L"):
    uplo = _check_uplo(UPLO)
    data = _check_eigh("linalg_eigh_cpu", self)
    if data.size == 0:
        return _wrap(np.empty(data.shape[:-1]), _real(self._dtype), matrix=False)
    return _wrap(np.linalg.eigvalsh(data, UPLO=uplo), _real(self._dtype), matrix=False)


# ---- general eigenproblem -----------------------------------------------------------------------------------
_COMPLEX_OF = {"float32": D.complex64, "float64": D.complex128, "complex64": D.complex64, "complex128": D.complex128}


def eig_checks(name: str, dtype: D.dtype, size: tuple[int, ...]) -> D.dtype:
    """PyTorch's checks of ``linalg.eig``/``eigvals`` (shared with meta), in its order; returns the result dtype."""
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(dtype)}")
    if len(size) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if size[-1] != size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {size[-2]} by {size[-1]} "
                           "matrices")
    if dtype.name not in _COMPLEX_OF:  # float16/bfloat16 pass the checks and fail in the LAPACK kernel's dispatch
        raise C.not_implemented("linalg_eig_out_cpu", dtype)
    return _COMPLEX_OF[dtype.name]


def _host_eig(data: Any, vectors: bool) -> tuple[Any, Any]:
    """LAPACK's geev through NumPy, on the host (CuPy has no general eigensolver; the emulated and cupy kernel
    families bind ``np`` to their array module, which takes the host results back)."""
    import numpy as host

    values = data.get() if hasattr(data, "get") else data
    if vectors:
        w, v = host.linalg.eig(values)
        return np.asarray(w), np.asarray(v)
    return np.asarray(host.linalg.eigvals(values)), None


@TABLE.impl("aten::linalg_eig")
def linalg_eig(self):
    """Eigenvalues and (unit 2-norm) right eigenvectors of a general square matrix, complex, in LAPACK's order."""
    out = eig_checks("linalg.eig", self._dtype, tuple(self._data.shape))
    data = self._data
    if data.size and not bool(np.isfinite(data).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if data.size == 0:
        w, v = np.empty(data.shape[:-1]), np.empty(data.shape)
    else:
        w, v = _host_eig(data, True)
    return _wrap(w, out, matrix=False), _wrap(v, out)


@TABLE.impl("aten::linalg_eigvals")
def linalg_eigvals(self):
    """Eigenvalues of a general square matrix, complex, in LAPACK's order.  As torch, infs and NaNs are not refused:
    the matrices holding them get NaN eigenvalues (torch passes them to LAPACK, whose result is unspecified)."""
    out = eig_checks("linalg.eigvals", self._dtype, tuple(self._data.shape))
    data = self._data
    if data.size == 0:
        return _wrap(np.empty(data.shape[:-1]), out, matrix=False)
    finite = np.isfinite(data).all(axis=(-2, -1))
    if bool(finite.all()):
        return _wrap(_host_eig(data, False)[0], out, matrix=False)
    values = np.full(data.shape[:-1], complex("nan+nanj"), dtype=out.numpy_dtype)
    if finite.any():
        values[finite] = _host_eig(data[finite], False)[0]
    return _wrap(values, out, matrix=False)


# ---- LDL (Bunch-Kaufman) ---------------------------------------------------------------------------------------
_LDL_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _lapack(dtype: D.dtype, hermitian: bool, routine: str) -> Any:
    """SciPy's LAPACK ``?sytrf``/``?sytrs`` (``?hetrf``/``?hetrs`` for complex Hermitian), run on the host."""
    from scipy.linalg import lapack

    kind = "he" if hermitian and dtype.is_complex else "sy"
    return getattr(lapack, f"{_LDL_PREFIX[dtype.name]}{kind}{routine}")


def _host(data: Any) -> Any:
    """``data`` as a host NumPy array (the cuda families' arrays come back from the device)."""
    import numpy as host

    return host.asarray(data.get() if hasattr(data, "get") else data)


def ldl_checks(name: str, dtype: D.dtype, size: tuple[int, ...]) -> None:
    """PyTorch's checks of ``linalg.ldl_factor_ex``'s input (shared with meta)."""
    if len(size) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if size[-1] != size[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {size[-2]} by {size[-1]} "
                           "matrices")
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {scalar_type_name(dtype)}")
    if dtype.name not in _LDL_PREFIX:
        raise C.not_implemented("ldl_factor_kernel_cpu", dtype)


@TABLE.impl("aten::linalg_ldl_factor_ex")
def linalg_ldl_factor_ex(self, hermitian=False, check_errors=False):
    """The Bunch-Kaufman factorization as LAPACK's ``?sytrf`` packs it: ``L`` and ``D`` in the lower triangle,
    1-based int32 pivots (negative for 2x2 blocks), int32 info (k > 0: ``D[k-1, k-1]`` is exactly zero)."""
    data = self._data
    ldl_checks("torch.linalg.ldl_factor_ex", self._dtype, tuple(data.shape))
    import numpy as host

    n = data.shape[-1]
    batches = _host(data).reshape((-1, n, n))
    ld = host.zeros_like(batches)
    pivots = host.zeros(batches.shape[:-1], dtype=host.int32)
    info = host.zeros(batches.shape[:1], dtype=host.int32)
    if n:
        sytrf = _lapack(self._dtype, hermitian, "trf")
        for i, a in enumerate(batches):
            factor, piv, code = sytrf(a, lower=1)
            ld[i], pivots[i], info[i] = host.tril(factor), piv, code
    if check_errors and info.size and int(info.max()) > 0:
        first = int(host.argmax(info > 0))
        raise _linalg_error(f"torch.linalg.ldl_factor_ex: {_batch_prefix(data, first)}The factorization could not be "
                            f"completed because the input is singular: D[{info[first] - 1}, {info[first] - 1}] is "
                            "exactly zero.")
    batch = data.shape[:-2]
    return (_wrap(np.asarray(ld.reshape(data.shape)), self._dtype),
            _wrap(np.asarray(pivots.reshape(batch + (n,))), D.int32, matrix=False),
            _wrap(np.asarray(info.reshape(batch)), D.int32, matrix=False))


def ldl_solve_checks(LD: Any, pivots: Any, B: Any) -> tuple[int, ...]:
    """PyTorch's checks of ``linalg.ldl_solve`` (shared with meta); returns the broadcast batch shape."""
    ld, b = tuple(LD.shape), tuple(B.shape)
    if len(b) < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(len(b), 1)}, "
                         f"{max(len(b), 1) - 1}], but got -2)")
    if len(ld) < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor LD must have at least 2 dimensions.")
    if ld[-1] != ld[-2]:
        raise RuntimeError(f"torch.linalg.ldl_solve: LD must be batches of square matrices, but they are {ld[-2]} by "
                           f"{ld[-1]} matrices")
    if b[-2] != ld[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {ld[-2]} by "
                           f"{ld[-1]} but each b matrix is {b[-2]} by {b[-1]}")
    if B._dtype is not LD._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{scalar_type_name(B._dtype)} and A of type {scalar_type_name(LD._dtype)} instead.")
    if pivots._dtype not in (D.int32, D.int64):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {scalar_type_name(pivots._dtype)}")
    if tuple(pivots.shape) != ld[:-1]:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    import numpy as host

    return tuple(host.broadcast_shapes(ld[:-2], b[:-2]))


@TABLE.impl("aten::linalg_ldl_solve")
def linalg_ldl_solve(LD, pivots, B, hermitian=False):
    """Solve ``A X = B`` from ``A``'s packed LDL factorization (LAPACK's ``?sytrs``), batches broadcast."""
    batch = ldl_solve_checks(LD, pivots, B)
    if LD._dtype.name not in _LDL_PREFIX:
        raise C.not_implemented("ldl_solve_kernel_cpu", LD._dtype)
    import numpy as host

    n, k = LD._data.shape[-1], B._data.shape[-1]
    ld = host.broadcast_to(_host(LD._data), batch + (n, n)).reshape((-1, n, n))
    piv = host.broadcast_to(_host(pivots._data), batch + (n,)).reshape((-1, n)).astype(host.int32)
    b = host.broadcast_to(_host(B._data), batch + (n, k)).reshape((-1, n, k))
    out = host.array(b, copy=True)
    if n and k:
        sytrs = _lapack(LD._dtype, hermitian, "trs")
        for i in range(out.shape[0]):
            out[i] = sytrs(ld[i], piv[i], b[i], lower=1)[0]
    return _wrap(np.asarray(out.reshape(batch + (n, k))), B._dtype)


# ---- least squares ------------------------------------------------------------------------------------------
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq_checks(self: Tensor, b: Tensor, driver: Any) -> tuple[bool, str]:
    """PyTorch's checks (shared with meta); returns (b is a vector, driver)."""
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if self._dtype is not b._dtype:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
            f"{scalar_type_name(self._dtype)} and other's dtype {scalar_type_name(b._dtype)}"
        )
    if self.dim() < 2:
        raise RuntimeError(f"torch.linalg.lstsq: input must have at least 2 dimensions.")
    dt = self._dtype
    if not (dt.is_floating_point or dt.is_complex) or dt in _LOW:
        raise RuntimeError(
            f"torch.linalg.lstsq: Expected a floating point or complex tensor as input. Got {scalar_type_name(dt)}"
        )
    vector = b.dim() == 1 or (b.dim() == self.dim() - 1 and tuple(b.shape) == tuple(self.shape[:-1]))
    if (b.shape[-1] if vector else b.shape[-2]) != self.shape[-2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if vector
            else "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
        )
    return vector, driver or "gelsy"


@TABLE.impl("aten::linalg_lstsq")
def linalg_lstsq(self, b, rcond=None, driver=None):
    vector, driver = lstsq_checks(self, b, driver)
    a = self._data
    bm = b._data[..., None] if vector else b._data
    m, n = a.shape[-2:]
    batch = C.broadcast_shape(a.shape[:-2], bm.shape[:-2])
    a_b = np.broadcast_to(a, batch + a.shape[-2:])
    b_b = np.broadcast_to(bm, batch + bm.shape[-2:])
    k = bm.shape[-1]
    real = _real(self._dtype)
    if rcond is None:
        rcond = float(np.finfo(real.numpy_dtype).eps) * max(m, n)
    flat_a = a_b.reshape((-1, m, n))
    flat_b = b_b.reshape((-1, m, k))
    sols, ranks, svals, resids = [], [], [], []
    for am, bmat in zip(flat_a, flat_b):
        x, res, rank, sv = np.linalg.lstsq(am, bmat, rcond=rcond if driver != "gels" else None)
        sols.append(x)
        ranks.append(rank)
        svals.append(sv)
        resids.append(res)
    count = len(sols)
    sol = np.stack(sols).reshape(batch + (n, k)) if count else np.zeros(batch + (n, k))
    # PyTorch's solution is the top n rows of a max(m, n)-row column-major buffer.
    rows = max(m, n)
    buf = np.zeros(batch + (rows, k), dtype=self._dtype.numpy_dtype)
    buf[..., :n, :] = sol
    solution = _column_major(buf)[..., :n, :]
    if vector:
        solution = solution[..., 0]
    empty = np.empty((0,), dtype=real.numpy_dtype)
    rank = np.asarray(ranks, np.int64).reshape(batch) if count else np.zeros(batch, np.int64)
    if driver == "gels":
        rank_out = np.empty((0,), np.int64)
    else:
        rank_out = rank
    if driver in ("gelsd", "gelss"):
        sv_out = np.stack(svals).reshape(batch + (min(m, n),)) if count else np.zeros(batch + (min(m, n),))
    else:
        sv_out = empty
    residuals = empty
    full_rank = count and all(r == n for r in ranks)
    if m > n and driver != "gelsy" and full_rank:
        resid = np.stack([np.sum(np.abs(bb - aa @ xx) ** 2, axis=-2) for aa, bb, xx in zip(flat_a, flat_b, sols)])
        residuals = resid.reshape(batch + (k,))
    out_sol = fresh(np.asarray(solution, dtype=self._dtype.numpy_dtype)) if solution.ndim >= 1 else fresh(solution)
    return (
        out_sol,
        fresh(_contiguous(np.asarray(residuals, dtype=real.numpy_dtype))),
        fresh(_contiguous(rank_out)),
        fresh(_contiguous(np.asarray(sv_out, dtype=real.numpy_dtype))),
    )


# ---- vdot -----------------------------------------------------------------------------------------------------
@TABLE.impl("aten::vdot")
def vdot(self, other):
    a, b = self._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if self._dtype is not other._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {scalar_type_name(self._dtype)} and "
            f"{scalar_type_name(other._dtype)}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same number "
            f"of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
        )
    if self._dtype is D.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if self._dtype in _LOW:
        return fresh(np.asarray(np.vdot(a.astype(np.float32), b.astype(np.float32))).astype(a.dtype))
    return fresh(np.asarray(np.vdot(a, b)).astype(a.dtype))
