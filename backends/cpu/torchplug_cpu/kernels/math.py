"""cpu kernels: pointwise math beyond the foundation (special functions, sgn, logit, nan_to_num, hypot...).

Table-driven like ``pointwise.py``, whose machinery (opmath for half types, promotion,
broadcast errors) these kernels reuse: each op is a NumPy/SciPy function plus its dtype rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .._common import COMPLEX, FLOATING, HALF, INTEGRAL, Tensor, loud, not_implemented, quiet, wrap
from .pointwise import _result, _sign

special = C.lazy_import(globals(), "special", "scipy", "special")  # imported on first use

TABLE = KernelTable("CPU")

_BOOL = D.bool_
_NP_BOOL = np.dtype(np.bool_)
_INTLIKE = INTEGRAL | {_BOOL}


def _float_dtype(dt: D.dtype) -> D.dtype:
    """Integer and bool inputs compute in the default float dtype."""
    return D.get_default_dtype() if dt in _INTLIKE else dt


# ---- unary, float results ----------------------------------------------------------------------------
def _sinc(x: np.ndarray) -> np.ndarray:
    return np.sinc(x)


def _scaled(factor: float) -> Any:
    def fn(x: np.ndarray) -> np.ndarray:
        return x * np.asarray(factor, x.dtype)

    return fn


def _nie(kernel: str) -> Any:
    return lambda dt: not_implemented(kernel, dt)


def _complex_msg(text: str) -> Any:
    return lambda dt: RuntimeError(text)


def _digamma(x: np.ndarray) -> np.ndarray:
    # PyTorch: digamma(+-0) = -+inf (the limit from the sign's side), negative integers nan
    r = special.psi(x)
    return np.where(x == 0, np.copysign(np.asarray(np.inf, x.dtype), -x), r) if r.size else r


def _lgamma(x: np.ndarray) -> np.ndarray:
    r = special.gammaln(x)
    return np.where(x == -np.inf, np.asarray(np.inf, r.dtype), r) if r.size else r  # PyTorch: lgamma(-inf) = inf


# op -> (function, error for complex inputs or None when complex is supported)
_FLOAT_UNARY: dict[str, tuple[Any, Any]] = {
    "erf": (lambda x: special.erf(x), _nie("erf_vml_cpu")),  # (special is imported on first use)
    "erfc": (lambda x: special.erfc(x), _nie("erfc_vml_cpu")),
    "erfinv": (lambda x: special.erfinv(x), _nie("erfinv_vml_cpu")),
    "lgamma": (_lgamma, _nie("lgamma_vml_cpu")),
    "digamma": (_digamma, _nie("digamma")),
    "deg2rad": (_scaled(math.pi / 180), _complex_msg("deg2rad is not supported for complex tensors.")),
    "rad2deg": (_scaled(180 / math.pi), _complex_msg("rad2deg is not supported for complex tensors.")),
    "sinc": (_sinc, None),
}


def _float_unary(fn: Any, complex_error: Any) -> Any:
    def kernel(self: Tensor) -> Tensor:
        dt = self._dtype
        if dt in COMPLEX and complex_error is not None:
            raise complex_error(dt)
        return _result(_float_dtype(dt), fn, self)

    return kernel


for _name, (_fn, _err) in _FLOAT_UNARY.items():
    TABLE.impl(f"aten::{_name}")(_float_unary(_fn, _err))


@TABLE.impl("aten::logit")
def logit(self: Tensor, eps: float | None = None) -> Tensor:
    dt = self._dtype
    if dt in COMPLEX:
        raise not_implemented("logit_cpu", dt)

    def fn(x: np.ndarray) -> np.ndarray:
        if eps is not None:
            x = np.clip(x, np.asarray(eps, x.dtype), np.asarray(1 - eps, x.dtype))
        return np.log(x / (1 - x))

    return _result(_float_dtype(dt), fn, self)


# ---- unary, dtype-preserving ------------------------------------------------------------------------
def _sgn(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "c":
        return _sign(x)
    mag = np.abs(x)
    return np.where(mag == 0, np.zeros((), x.dtype), x / np.where(mag == 0, 1, mag))


@TABLE.impl("aten::sgn")
def sgn(self: Tensor) -> Tensor:
    if self._dtype in _INTLIKE:
        return wrap(_sign(self._data))
    return _result(self._dtype, _sgn, self)


@TABLE.impl("aten::nan_to_num")
def nan_to_num(self: Tensor, nan: float | None = None, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    dt = self._dtype
    if dt in _INTLIKE:
        return wrap(self._data.copy())
    real = dt.to_real()
    info = D.finfo(real)
    values = (0.0 if nan is None else nan, info.max if posinf is None else posinf, info.min if neginf is None else neginf)

    def fix(x: np.ndarray) -> np.ndarray:
        v_nan, v_pos, v_neg = (np.asarray(v).astype(real.numpy_dtype).astype(x.dtype) for v in values)
        return np.where(np.isnan(x), v_nan, np.where(x == np.inf, v_pos, np.where(x == -np.inf, v_neg, x)))

    if dt in COMPLEX:
        x = self._data
        return wrap((fix(x.real) + 1j * fix(x.imag)).astype(x.dtype))
    return _result(dt, fix, self)


# ---- classification (bool results) ---------------------------------------------------------------------
def _classify(name: str, fn: Any, int_fn: Any, complex_error: Any) -> Any:
    def kernel(self: Tensor) -> Tensor:
        dt = self._dtype
        if dt in COMPLEX:
            raise complex_error
        x = self._data
        if dt in _INTLIKE:
            return wrap(np.asarray(int_fn(x), dtype=_NP_BOOL))
        tok = quiet()
        try:
            return wrap(np.asarray(fn(x if dt not in HALF else x.astype(np.float32)), dtype=_NP_BOOL))
        finally:
            loud(tok)

    kernel.__name__ = name
    return kernel


def _none(x: np.ndarray) -> np.ndarray:
    return np.zeros(x.shape, _NP_BOOL)


def _negative(x: np.ndarray) -> np.ndarray:
    return x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, _NP_BOOL)


TABLE.impl("aten::signbit")(_classify("signbit", np.signbit, _negative,
                                      NotImplementedError("signbit is not implemented for complex tensors.")))
TABLE.impl("aten::isposinf")(_classify("isposinf", lambda x: x == np.inf, _none,
                                       RuntimeError("isposinf does not support complex inputs.")))
TABLE.impl("aten::isneginf")(_classify("isneginf", lambda x: x == -np.inf, _none,
                                       RuntimeError("isneginf does not support complex inputs.")))


# ---- binary -----------------------------------------------------------------------------------------------
def _logaddexp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind != "c":
        return np.logaddexp(x, y)
    big = np.where(x.real >= y.real, x, y)  # log(e^a + e^b) = a + log1p(e^(b - a)), a the larger
    small = np.where(x.real >= y.real, y, x)
    return big + np.log1p(np.exp(small - big))


def _xlogy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(y), np.asarray(np.nan, y.dtype), np.where(x == 0, np.zeros((), x.dtype), x * np.log(y)))


# op -> (function, kernel name for errors, accepted result dtypes, ints/bool compute in float)
_BINARY: dict[str, tuple[Any, str, frozenset[D.dtype], bool]] = {
    "hypot": (np.hypot, "hypot_cpu", FLOATING, False),
    "logaddexp": (_logaddexp, "logaddexp_cpu", FLOATING | COMPLEX, False),
    "logaddexp2": (np.logaddexp2, "logaddexp2_cpu", FLOATING, False),
    "xlogy.Tensor": (_xlogy, "xlogy_cpu", FLOATING, True),
    "copysign.Tensor": (np.copysign, "copysign_cpu", FLOATING, True),
}


def _binary(fn: Any, kname: str, accepted: frozenset[D.dtype], to_float: bool) -> Any:
    def kernel(self: Any, other: Any) -> Tensor:
        dt = C.result_dtype(self, other)
        if to_float:
            dt = _float_dtype(dt)
        if dt not in accepted:
            raise not_implemented(kname, dt)
        return _result(dt, fn, self, other)

    return kernel


for _name, (_fn, _kname, _accepted, _to_float) in _BINARY.items():
    TABLE.impl(f"aten::{_name}")(_binary(_fn, _kname, _accepted, _to_float))


def _heaviside(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.where(x == 0, v, x > 0).astype(np.result_type(x, v))


@TABLE.impl("aten::heaviside")
def heaviside(self: Tensor, values: Tensor) -> Tensor:
    if self._dtype in COMPLEX or values._dtype in COMPLEX:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self._dtype is not values._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _result(self._dtype, _heaviside, self, values)
