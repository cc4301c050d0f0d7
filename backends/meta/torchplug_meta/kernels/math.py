"""meta kernels for the math ops beyond the foundation: pointwise special functions and binary math,
reductions, scans, sorting/selection, quantiles, histc; data-dependent ops (unique, bincount) raise.

Dtype rules and checks mirror the cpu kernels (``torchplug_cpu.kernels.math`` / ``reduction2``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .pointwise import result

TABLE = KernelTable("Meta")

_INT, _FLOAT = 1, 2


def _nie(kernel: str, dt: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{C.scalar_type_name(dt)}\'')


def _float(dt: D.dtype) -> D.dtype:
    return D.get_default_dtype() if D.category(dt) < _FLOAT else dt


# ---- pointwise ------------------------------------------------------------------------------------------
def _complex_error(kind: str, text: str) -> Callable[[D.dtype], Exception]:
    if kind == "nie":
        return lambda dt: _nie(text, dt)
    cls = NotImplementedError if kind == "NotImplementedError" else RuntimeError
    return lambda dt: cls(text)


# op -> (result dtype rule, error for complex inputs or None)
_UNARY: dict[str, tuple[Callable[[D.dtype], D.dtype], Any]] = {
    "erf": (_float, _complex_error("nie", "erf_vml_cpu")),
    "erfc": (_float, _complex_error("nie", "erfc_vml_cpu")),
    "erfinv": (_float, _complex_error("nie", "erfinv_vml_cpu")),
    "lgamma": (_float, _complex_error("nie", "lgamma_vml_cpu")),
    "digamma": (_float, _complex_error("nie", "digamma")),
    "deg2rad": (_float, _complex_error("RuntimeError", "deg2rad is not supported for complex tensors.")),
    "rad2deg": (_float, _complex_error("RuntimeError", "rad2deg is not supported for complex tensors.")),
    "sinc": (_float, None),
    "logit": (_float, _complex_error("nie", "logit_cpu")),
    "sgn": (lambda dt: dt, None),
    "nan_to_num": (lambda dt: dt, None),
    "signbit": (lambda dt: D.bool_, _complex_error("NotImplementedError", "signbit is not implemented for complex tensors.")),
    "isposinf": (lambda dt: D.bool_, _complex_error("RuntimeError", "isposinf does not support complex inputs.")),
    "isneginf": (lambda dt: D.bool_, _complex_error("RuntimeError", "isneginf does not support complex inputs.")),
}


def _unary(rule: Callable[[D.dtype], D.dtype], complex_error: Any) -> Callable[..., Any]:
    def kernel(self: C.Tensor, *options: Any) -> C.Tensor:
        dt = self._dtype
        if complex_error is not None and dt.is_complex:
            raise complex_error(dt)
        size = self._data.shape
        return C.new(size, rule(dt), C.elementwise_strides(size, (self,)))

    return kernel


for _name, (_rule, _err) in _UNARY.items():
    TABLE.add(f"aten::{_name}", _unary(_rule, _err))

_FLOATING = (D.float16, D.bfloat16, D.float32, D.float64)
# op -> (kernel name for errors, complex accepted, ints/bool compute in float)
_BINARY: dict[str, tuple[str, bool, bool]] = {
    "hypot": ("hypot_cpu", False, False), "logaddexp": ("logaddexp_cpu", True, False),
    "logaddexp2": ("logaddexp2_cpu", False, False), "xlogy.Tensor": ("xlogy_cpu", False, True),
    "copysign.Tensor": ("copysign_cpu", False, True),
}


def _binary(kname: str, complex_ok: bool, to_float: bool) -> Callable[..., Any]:
    def kernel(self: Any, other: Any) -> C.Tensor:
        dt = C.result_dtype(self, other)
        if to_float:
            dt = _float(dt)
        if dt not in _FLOATING and not (complex_ok and dt.is_complex):
            raise _nie(kname, dt)
        return result([self, other], dt)

    return kernel


for _name, (_kname, _cplx, _to_float) in _BINARY.items():
    TABLE.add(f"aten::{_name}", _binary(_kname, _cplx, _to_float))


@TABLE.impl("aten::heaviside")
def heaviside(self: C.Tensor, values: C.Tensor) -> C.Tensor:
    if self._dtype.is_complex or values._dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return result([self, values], self._dtype)


# ---- reductions --------------------------------------------------------------------------------------------
def _reduced(self: C.Tensor, dim: Any, keepdim: bool) -> tuple[int, ...]:
    size = C.shape(self)
    return C.reduced_shape(size, C.reduce_dims(dim, len(size)), keepdim)


@TABLE.impl("aten::logsumexp")
def logsumexp(self: C.Tensor, dim: Any, keepdim: bool = False) -> C.Tensor:
    return C.new(_reduced(self, dim, keepdim), _float(self._dtype))


@TABLE.impl("aten::linalg_vector_norm")
def vector_norm(self: C.Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> C.Tensor:
    dt = self._dtype
    if D.category(dt) < _FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {C.scalar_type_name(dt)}")
    if dtype is not None:
        if D.category(dtype) < _FLOAT:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {C.scalar_type_name(dtype)}")
        if dt.is_complex != dtype.is_complex:
            kind = "complex" if dt.is_complex else "real"
            raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {C.scalar_type_name(dtype)}")
        dt = dtype
    p = float(ord.real if isinstance(ord, complex) else ord)
    size = C.shape(self)
    if (p < 0 or p == float("inf")) and 0 in size:
        raise RuntimeError("linalg.vector_norm cannot compute the norm on an empty tensor because the operation does "
                           "not have an identity")
    return C.new(_reduced(self, dim, keepdim), dt.to_real())


@TABLE.impl("aten::nansum")
def nansum(self: C.Tensor, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> C.Tensor:
    if self._dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    out = dtype or (D.int64 if D.category(self._dtype) < _FLOAT else self._dtype)
    return C.new(_reduced(self, dim, keepdim), out)


def _cumulative(self: C.Tensor, dim: int, dtype: D.dtype | None = None) -> C.Tensor:
    size = C.shape(self)
    C.wrap_dim(dim, len(size))
    return C.new(size, dtype or (D.int64 if D.category(self._dtype) < _FLOAT else self._dtype))


TABLE.add("aten::cumsum", _cumulative)
TABLE.add("aten::cumprod", _cumulative)


def _pair(size: tuple[int, ...], dtype: D.dtype) -> tuple[C.Tensor, C.Tensor]:
    return C.new(size, dtype), C.new(size, D.int64)


def _scan_extreme(name: str) -> Callable[..., Any]:
    def kernel(self: C.Tensor, dim: int) -> tuple[C.Tensor, C.Tensor]:
        size = C.shape(self)
        C.wrap_dim(dim, len(size))
        if self._dtype.is_complex and size and 0 not in size:
            raise _nie(f"{name}_cpu", self._dtype)
        return _pair(size, self._dtype)

    return kernel


TABLE.add("aten::cummax", _scan_extreme("cummax"))
TABLE.add("aten::cummin", _scan_extreme("cummin"))


@TABLE.impl("aten::sort")
def sort(self: C.Tensor, dim: int = -1, descending: bool = False, stable: bool | None = False) -> tuple[C.Tensor, C.Tensor]:
    size = C.shape(self)
    C.wrap_dim(dim, len(size))
    if self._dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    strides = C.elementwise_strides(size, (self,))  # like empty_like(self): a dense input keeps its layout
    return C.new(size, self._dtype, strides), C.new(size, D.int64, strides)


@TABLE.impl("aten::topk")
def topk(self: C.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[C.Tensor, C.Tensor]:
    size = list(C.shape(self))
    d = C.wrap_dim(dim, len(size))
    if not 0 <= k <= (size[d] if size else 1):
        raise RuntimeError("selected index k out of range")
    if self._dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if size:
        size[d] = k
    return _pair(tuple(size), self._dtype)


def _dim_reduced(self: C.Tensor, dim: int, keepdim: bool, name: str | None) -> tuple[int, ...]:
    size = C.shape(self)
    d = C.wrap_dim(dim, len(size))
    if name is not None and size and size[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return C.reduced_shape(size, C.reduce_dims(dim, len(size)), keepdim)


@TABLE.impl("aten::kthvalue")
def kthvalue(self: C.Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[C.Tensor, C.Tensor]:
    size = C.shape(self)
    d = C.wrap_dim(dim, len(size))
    if not 1 <= k <= (size[d] if size else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self._dtype.is_complex and size:
        raise _nie("kthvalue_cpu", self._dtype)
    return _pair(_dim_reduced(self, dim, keepdim, None), self._dtype)


def _median_all(self: C.Tensor) -> C.Tensor:
    if self._dtype.is_complex:
        raise _nie("median_cpu", self._dtype)
    return C.new((), self._dtype)


def _median_dim(self: C.Tensor, dim: int, keepdim: bool = False) -> tuple[C.Tensor, C.Tensor]:
    if self._dtype.is_complex:
        raise _nie("median_out", self._dtype)
    return _pair(_dim_reduced(self, dim, keepdim, "median"), self._dtype)


for _name in ("median", "nanmedian"):
    TABLE.add(f"aten::{_name}", _median_all)
    TABLE.add(f"aten::{_name}.dim", _median_dim)


@TABLE.impl("aten::mode")
def mode(self: C.Tensor, dim: int = -1, keepdim: bool = False) -> tuple[C.Tensor, C.Tensor]:
    size = _dim_reduced(self, dim, keepdim, "mode")
    if self._dtype.is_complex and C.shape(self) and 0 not in C.shape(self):
        raise _nie("mode_cpu", self._dtype)
    return _pair(size, self._dtype)


def _quantile(self: C.Tensor, q: C.Tensor, dim: int | None = None, keepdim: bool = False, interpolation: str = "linear") -> C.Tensor:
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(
            f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
        )
    size = C.shape(self)
    if 0 in size:
        raise RuntimeError("quantile() input tensor must be non-empty")
    qsize = C.shape(q)
    if len(qsize) > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self._dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._dtype is not self._dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if dim is None:
        rest = (1,) * len(size) if keepdim else ()
    else:
        rest = C.reduced_shape(size, C.reduce_dims(dim, len(size)), keepdim)
    return C.new(qsize + rest, self._dtype)


TABLE.add("aten::quantile", _quantile)
TABLE.add("aten::nanquantile", _quantile)


@TABLE.impl("aten::histc")
def histc(self: C.Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> C.Tensor:
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    if D.category(self._dtype) != _FLOAT:
        raise _nie("histogram_cpu", self._dtype)
    return C.new((bins,), self._dtype)


# ---- data-dependent output shapes: like PyTorch's meta tensors, these cannot run -----------------------------
def _data_dependent(name: str) -> Callable[..., Any]:
    def kernel(*args: Any) -> Any:
        raise NotImplementedError(
            f"aten::{name}: the output shape depends on the data, which meta tensors do not have"
        )

    return kernel


for _name in ("_unique2", "unique_dim", "unique_consecutive", "bincount"):
    TABLE.add(f"aten::{_name}", _data_dependent(_name))
