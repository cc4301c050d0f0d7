"""cpu kernels: matrix products (``mm``, ``bmm``, ``mv``, ``dot``, ``addmm``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._ops import composites as CP
from torchplug._base import dtype as D
from torchplug.library import KernelTable

from torchplug_cpu._blas_policy import SMALL_WORK as _SMALL_WORK  # (absolute: the module is host-only)

from .. import _common as C
from .core import fresh

TABLE = KernelTable("CPU")

_matmul = C.matmul  # np.matmul, small products on one BLAS thread (see _blas_policy)
_small_dot = C.small_dot  # ndarray.dot on one BLAS thread (None where the helpers serve another library)
_wrap = fresh
_DOT = frozenset((D.float32, D.float64, D.complex64, D.complex128))  # the dtypes BLAS multiplies itself

# C++ type names PyTorch prints in some dtype-mismatch messages.
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
    "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}
# dtypes NumPy multiplies slowly or not at all: compute in float32 and round back.
# (float8: torch's cpu mm/addmm take it, through float32 like the half types; bmm does not)
_VIA_FLOAT32 = {np.dtype(D.bfloat16.numpy_dtype), np.dtype(np.float16), *(np.dtype(d.numpy_dtype) for d in D.FLOAT8_DTYPES)}


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype in _VIA_FLOAT32:
        r = _matmul(a.astype(np.float32), b.astype(np.float32))
        with np.errstate(over="ignore"):  # rounding a large product to half gives inf, silently, as in PyTorch
            return r.astype(a.dtype)
    return _matmul(a, b)


def _not_implemented(op: str, dtype: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{op}" not implemented for \'{CP.scalar_type_name(dtype)}\'')


def _check_mm(self, mat2) -> None:
    a, b = self._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
        )
    if self._dtype is not mat2._dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_CPP_NAMES[self._dtype.name]} != "
            f"{_CPP_NAMES[mat2._dtype.name]}"
        )
    if self._dtype is D.bool_ and not _no_products(a.shape[0] * b.shape[1], a.shape[1]):
        raise _not_implemented("addmm_impl_cpu_", self._dtype)


def _no_products(out_numel: int, k: int) -> bool:
    # PyTorch's products return before their dtype dispatch when there is nothing to multiply
    # (an empty result, or zeros for an empty inner dim): bool works then.
    return out_numel == 0 or k == 0


@TABLE.impl("aten::mm")
def mm(self, mat2):
    a, b = self._data, mat2._data
    dt = self._dtype
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0] or dt is not mat2._dtype or dt is D.bool_:
        _check_mm(self, mat2)
        if dt is D.bool_:
            return _wrap(np.zeros((a.shape[0], b.shape[1]), np.bool_))
    if dt in _DOT and _small_dot is not None and 0 < a.size * b.shape[1] < _SMALL_WORK:
        # the lean path (an 8x8 product is mostly set-up): a non-empty result needs no stride fix-up
        return C.wrap(_small_dot(a, b))
    return _wrap(_product(a, b))


@TABLE.impl("aten::bmm")
def bmm(self, mat2):
    a, b = self._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] but got: "
            f"[{b.shape[0]}, {b.shape[1]}]."
        )
    if self._dtype in D.FLOAT8_DTYPES:
        raise _not_implemented("bmm", self._dtype)
    if a.size == 0 or b.size == 0:  # bmm_out_cpu returns zeros (in batch2's dtype) before comparing dtypes
        return _wrap(np.zeros((a.shape[0], a.shape[1], b.shape[2]), mat2._dtype.numpy_dtype))
    if self._dtype is not mat2._dtype:
        raise RuntimeError(
            f"expected scalar type {CP.scalar_type_name(self._dtype)} but found {CP.scalar_type_name(mat2._dtype)}"
        )
    if self._dtype is D.bool_:
        if not _no_products(a.shape[0] * a.shape[1] * b.shape[2], a.shape[2]):
            raise _not_implemented("bmm", self._dtype)
        return _wrap(np.zeros((a.shape[0], a.shape[1], b.shape[2]), np.bool_))
    return _wrap(_product(a, b))


@TABLE.impl("aten::mv")
def mv(self, vec):
    a, v = self._data, vec._data
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {v.ndim}")
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    if self._dtype is not vec._dtype:
        n = CP.scalar_type_name
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {n(vec._dtype)}, {n(self._dtype)}, and {n(vec._dtype)}"
        )
    if self._dtype is D.bool_:
        if not _no_products(a.shape[0], a.shape[1]):
            raise _not_implemented("addmv_impl_cpu", self._dtype)
        return _wrap(np.zeros((a.shape[0],), np.bool_))
    return _wrap(_product(a, v))


@TABLE.impl("aten::dot")
def dot(self, tensor):
    a, b = self._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if self._dtype is not tensor._dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {CP.scalar_type_name(self._dtype)} and "
            f"{CP.scalar_type_name(tensor._dtype)}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same number "
            f"of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
        )
    if self._dtype is D.bool_:
        raise _not_implemented("dot", self._dtype)
    return _wrap(np.asarray(_product(a, b)))


@TABLE.impl("aten::addmm")
def addmm(self, mat1, mat2, beta=1, alpha=1):
    return _wrap(_addmm(self, mat1, mat2, beta, alpha))


def _check_scalar_mul_(dt: D.dtype, scalar: Any) -> None:
    """An in-place multiplication by a Python number refuses a number of a higher kind than the tensor."""
    kind = 0 if isinstance(scalar, bool) else 1 if isinstance(scalar, int) else 3 if isinstance(scalar, complex) else 2
    if kind > dt._category:
        promoted = {1: D.int64, 2: D.get_default_dtype(), 3: D.get_default_complex_dtype()}[kind]
        raise RuntimeError(f"result type {CP.scalar_type_name(promoted)} can't be cast to the desired output type "
                           f"{CP.scalar_type_name(dt)}")


def _addmm(self, mat1, mat2, beta, alpha) -> np.ndarray:
    _check_mm(mat1, mat2)
    if self._dtype is not mat1._dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {CP.scalar_type_name(self._dtype)} and "
            f"{CP.scalar_type_name(mat1._dtype)}"
        )
    n, m = mat1._data.shape[0], mat2._data.shape[1]
    if mat1._data.shape[1] == 0 and n * m and beta != 0:
        _check_scalar_mul_(mat1._dtype, beta)  # addmm_impl_cpu_ with k == 0: result = self, then result.mul_(beta)
    bias = self._data
    if bias.shape != (n, m) and not (bias.ndim == 0 or bias.ndim == 1 and bias.shape[0] in (m, 1)):
        # PyTorch expands self to the product's shape (same errors as expand); a vector or scalar
        # (nn.Linear's bias) broadcasts in NumPy as it would expand.
        bias = CP.expand(self, [n, m])._data
    npdt = mat1._data.dtype
    prod = _product(mat1._data, mat2._data)
    if npdt.kind in "iub":
        alpha, beta = int(alpha), int(beta)
    if alpha != 1:
        prod = prod * np.asarray(alpha).astype(npdt) if npdt.kind in "iu" else prod * alpha
    if beta == 0:
        out = prod
    elif beta == 1:
        # the product is a fresh array: add in place when no promotion is involved
        out = np.add(prod, bias, out=prod) if prod.dtype == bias.dtype else prod + bias
    else:
        out = prod + bias * (np.asarray(beta).astype(npdt) if npdt.kind in "iu" else beta)
    return np.asarray(out, dtype=npdt)


@TABLE.impl("aten::addmm_")
def addmm_(self, mat1, mat2, beta=1, alpha=1):
    if mat1._data.ndim == 2 and mat2._data.ndim == 2:
        want = (mat1._data.shape[0], mat2._data.shape[1])
        if self._data.shape != want:
            raise RuntimeError(
                f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size {list(want)} should match"
            )
    np.copyto(self._data, _addmm(self, mat1, mat2, beta, alpha), casting="unsafe")
    return self


# No direct ``matmul`` kernel: it is CompositeImplicitAutograd, and a backend kernel would hide the
# decomposition from autograd (PyTorch's rule); the composite already reaches dot/mv/mm/bmm here.
