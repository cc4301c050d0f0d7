"""cpu kernels: pointwise (elementwise) ops with PyTorch's type promotion, broadcasting and errors.

Every kernel computes in the promoted dtype with NumPy.  float16/bfloat16 are computed in
float32 and rounded once at the end (PyTorch's "opmath"), which also keeps Python-number
operands in float32 precision as PyTorch's cpu kernels do.  Hot ops have a fast path
(``_quick``) for two tensors of one dtype or a float tensor and a Python number.  In-place
kernels for the ops optimizers use write through NumPy's ``out=`` instead of the generic
functional-plus-copy composite, keeping PyTorch's cast and shape checks.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops.composites import check_castable
from torchplug.library import KernelTable

from torchplug_cpu import _parallel as P  # (absolute: one host module; it declines non-NumPy arrays)

from .. import _common as C
from .._common import COMPLEX, F32, FLOATING, HALF, INTEGRAL, Tensor, loud, not_implemented, operand, quiet, wrap

TABLE = KernelTable("CPU")

_BOOL = D.bool_
_NP_BOOL = np.dtype(np.bool_)
_NP_I64 = np.dtype(np.int64)
_INTLIKE = INTEGRAL | {D.bool_}


# ---- shared machinery ---------------------------------------------------------------------------
def _cdt(dt: D.dtype) -> np.dtype:
    """The NumPy dtype a kernel computes in for result dtype ``dt`` (float32 for half types)."""
    return F32 if dt in HALF else dt.numpy_dtype


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, np.ndarray) else ()


def _value_error(err: ValueError, arrays: tuple[Any, ...]) -> Exception:
    """Translate NumPy's broadcasting ValueError into PyTorch's RuntimeError (else keep ``err``)."""
    shapes = [_shape(a) for a in arrays]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return C.broadcast_error(*shapes)
    return err


def _operands(args: tuple[Any, ...], npdt: np.dtype, cdt: np.dtype) -> list[Any]:
    """Each operand cast to ``npdt`` (the result dtype), then to ``cdt`` (the computation dtype).

    NumPy arrays pass through untouched: callers use them for values PyTorch keeps at full
    ("opmath") precision, e.g. the Python scalar in ``half_tensor * 1e5``.
    """
    if npdt is cdt:
        return [a if a.__class__ is np.ndarray else operand(a, cdt) for a in args]
    return [a if a.__class__ is np.ndarray else operand(a, npdt).astype(cdt) for a in args]


def _apply(fn: Any, ops: list[Any], out_npdt: np.dtype) -> Tensor:
    """``fn(*ops)`` with NumPy's floating-point warnings off; the result cast to ``out_npdt``."""
    tok = quiet()
    try:
        r = fn(*ops)
        if r.dtype != out_npdt:
            r = r.astype(out_npdt)
    except ValueError as e:
        raise _value_error(e, ops) from None
    finally:
        loud(tok)
    return wrap(r)


_FLOAT8 = frozenset(D.FLOAT8_DTYPES)
# PyTorch's cpu kernels do no arithmetic in float8 (only casts, copies, views, abs, eq/ne and
# tensor * tensor): the kernel name each raises with, for the NumPy functions computed here.
_FLOAT8_KERNELS: dict[Any, str] = {
    np.add: "add_stub", np.subtract: "add_stub", np.multiply: "mul_cpu_reduced_float", np.negative: "neg_cpu",
    np.exp: "exp_vml_cpu", np.log: "log_vml_cpu", np.sqrt: "sqrt_vml_cpu", np.tanh: "tanh_vml_cpu",
    np.sin: "sin_vml_cpu", np.cos: "cos_vml_cpu", np.true_divide: "div_cpu", np.power: "pow",
}


def _float8_error(fn: Any, dt: D.dtype) -> NotImplementedError:
    name = _FLOAT8_KERNELS.get(fn) or f"{getattr(fn, '__name__', 'kernel').strip('_')}_cpu"
    return not_implemented(name, dt)


def _result(dt: D.dtype, fn: Any, *args: Any) -> Tensor:
    """``fn`` over the operands for result dtype ``dt``.

    float16/bfloat16 operands are rounded to ``dt`` and computed in float32, then rounded once,
    as PyTorch's cpu kernels do.  float8 results raise, as PyTorch's kernels do.
    """
    if dt in _FLOAT8:
        raise _float8_error(fn, dt)
    npdt = dt.numpy_dtype
    return _apply(fn, _operands(args, npdt, F32 if dt in HALF else npdt), npdt)


def _opmath_scalar(dt: D.dtype, other: Any) -> Any:
    """PyTorch's add/sub/mul/div keep a one-element second operand at float32 precision for
    half results (``iter.original_scalar_value<opmath_t>``); others round it to ``dt`` first."""
    if dt in HALF:
        if isinstance(other, Tensor):
            if other._data.size == 1:
                return other._data.astype(F32)
        elif not isinstance(other, np.ndarray):
            return operand(other, F32)
    return other


_PLAIN = frozenset((D.float32, D.float64))  # dtypes NumPy computes exactly like PyTorch with a Python scalar
_C_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INT64 = D.int64  # ...and with a Python int


def _quick(ufunc: Any, self: Any, other: Any) -> Tensor | None:
    """The fast path: two tensors of one dtype, or a float32/64 tensor and a Python int/float.

    Returns None when it does not apply.  Callers exclude the dtypes their op rejects.
    """
    if self.__class__ is Tensor:
        oc = other.__class__
        if oc is Tensor:
            if self._dtype is not other._dtype or self._dtype in _FLOAT8:
                return None
            y = other._data
        elif (oc is float or oc is int) and self._dtype in _PLAIN or oc is int and self._dtype is _INT64:
            y = other
        else:
            return None
        x = self._data
    elif (self.__class__ is float or self.__class__ is int) and other.__class__ is Tensor and other._dtype in _PLAIN:
        x = self
        y = other._data
    else:
        return None
    if x.__class__ is _ndarray and x.size >= _MIN_ITEMS or y.__class__ is _ndarray and y.size >= _MIN_ITEMS:
        r = _threaded(ufunc, x, y)
        if r is not None:
            return r
    tok = quiet()
    try:
        return wrap(ufunc(x, y))
    except ValueError as e:
        raise _value_error(e, (x, y)) from None
    finally:
        loud(tok)


_ndarray = np.ndarray
_MIN_ITEMS = P.MIN_ITEMS
_CQ = C.cquick  # the C fast paths of add, mul and relu (None: not built, or another backend's instance)


def _threaded(ufunc: Any, x: Any, y: Any) -> Tensor | None:
    """``ufunc(x, y)`` for large operands of one shape on the C thread pool, or None."""
    xa = x.__class__ is _ndarray
    ref = x if xa else y
    if P.threads() < 2 or (xa and y.__class__ is _ndarray and y.shape != x.shape):
        return None
    out = np.empty(ref.shape, ref.dtype)
    if xa:
        done = P.binary(ufunc, x, y, out) if y.__class__ is _ndarray else P.binary_scalar(ufunc, x, y, out)
    else:
        done = P.binary_scalar(ufunc, y, x, out, scalar_first=True)
    return wrap(out) if done else None


def _is_bool(x: Any) -> bool:
    return x._dtype is _BOOL if isinstance(x, Tensor) else x.__class__ is bool


def _dtype_of(x: Any) -> D.dtype | None:
    return x._dtype if isinstance(x, Tensor) else None


# ---- unary ----------------------------------------------------------------------------------------
def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return 1 / x


def _exp2(x: np.ndarray) -> np.ndarray:
    return np.exp2(x) if x.dtype.kind != "c" else np.exp(x * np.log(2))


# Ops whose integer/bool inputs compute in the default float dtype.
_FLOAT_UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": _rsqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "tanh": np.tanh, "sigmoid": _sigmoid, "reciprocal": _reciprocal, "log1p": np.log1p,
    "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "exp2": _exp2, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
}


_FLOAT8_UNARY_KERNELS = {"sigmoid": "sigmoid_cpu_reduced_float", "reciprocal": "reciprocal_cpu"}


def _float_unary(fn: Any, name: str) -> Any:
    float8_kernel = _FLOAT8_UNARY_KERNELS.get(name, f"{name}_vml_cpu")

    def kernel(self: Tensor) -> Tensor:
        dt = self._dtype
        if dt in _PLAIN:  # fast path
            x = self._data
            if x.size >= _MIN_ITEMS:
                out = np.empty(x.shape, x.dtype)
                if fn in P.UNARY_OPS:
                    if P.unary(fn, x, out):
                        return wrap(out)
                else:
                    tok = quiet()
                    try:
                        if P.chunked(fn, x, out):  # NumPy's loop on every thread (see _parallel.chunked)
                            return wrap(out)
                    finally:
                        loud(tok)
            tok = quiet()
            try:
                return wrap(fn(x))
            finally:
                loud(tok)
        if dt in _FLOAT8:
            raise not_implemented(float8_kernel, dt)
        if dt not in FLOATING and dt not in COMPLEX:
            dt = D.get_default_dtype()
        return _result(dt, fn, self)

    return kernel


for _name, _fn in _FLOAT_UNARY.items():
    TABLE.impl(f"aten::{_name}")(_float_unary(_fn, _name))


def _same_unary(name: str, fn: Any, *, int_fn: Any = None, bool_error: Any = None, complex_error: Any = None) -> Any:
    """A unary op keeping the dtype; ``int_fn`` for integer inputs (default ``fn``)."""

    def kernel(self: Tensor) -> Tensor:
        dt = self._dtype
        if dt in _PLAIN:  # fast path: float32/64 compute in their own dtype and never warn here
            x = self._data
            if x.size >= _MIN_ITEMS and fn in P.UNARY_OPS:
                out = np.empty(x.shape, x.dtype)
                if P.unary(fn, x, out):
                    return wrap(out)
            return wrap(fn(x))
        if dt is _BOOL and bool_error is not None:
            raise bool_error(dt)
        if dt in COMPLEX and complex_error is not None:
            raise complex_error(dt)
        if int_fn is not None and (dt in INTEGRAL or dt is _BOOL):
            return wrap(int_fn(self._data))
        return _result(dt, fn, self)

    kernel.__name__ = name
    return kernel


def _nie(kernel: str) -> Any:
    return lambda dt: not_implemented(kernel, dt)


def _msg(cls: type, text: str) -> Any:
    return lambda dt: cls(text)


def _copy(x: np.ndarray) -> np.ndarray:
    return x.copy()


def _sign(x: np.ndarray) -> np.ndarray:
    if x.dtype == _NP_BOOL:
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _frac(x: np.ndarray) -> np.ndarray:
    return x - np.trunc(x)


_CK = C.ckernels  # the C kernels (None: not built, or these helpers serve another array library)


def _relu(x: np.ndarray) -> np.ndarray:
    # x < 0 ? 0 : x, as PyTorch's clamp_min(0): -0.0 and NaN pass through unchanged.  (np.maximum(x, 0)
    # answers -0.0 with +0.0 or -0.0 depending on which of NumPy's SIMD loops runs.)  The C kernel is one
    # branch-free pass, on the thread pool when large; np.where is the fallback.
    if _CK is not None and x.dtype in _C_FLOATS and x.flags.c_contiguous:
        out = np.empty(x.shape, x.dtype)
        _CK.unary(4, x, out, x.dtype.itemsize == 8)
        return out
    return np.where(x < 0, x.dtype.type(0), x)


def _square(x: np.ndarray) -> np.ndarray:
    return x * x


_FLOAT8_KERNELS.update({_relu: "clamp_min_scalar_cpu", _square: "pow"})


for _name, _fn in (("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)):
    TABLE.impl(f"aten::{_name}")(_same_unary(
        _name, _fn, int_fn=_copy, bool_error=_nie(f"{_name}_vml_cpu"),
        complex_error=_msg(NotImplementedError, f"{_name} is not supported for complex inputs"),
    ))

TABLE.impl("aten::neg")(_same_unary("neg", np.negative, bool_error=_msg(RuntimeError,
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
    "`~` or `logical_not()` operator instead.")))
TABLE.impl("aten::sign")(_same_unary("sign", _sign, int_fn=_sign, complex_error=_msg(NotImplementedError,
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.")))
_relu_kernel = _same_unary("relu", _relu, bool_error=_msg(RuntimeError, "Boolean inputs not supported for relu"),
                           complex_error=_msg(NotImplementedError, "clamp is not supported for complex types"))
TABLE.impl("aten::relu")(_CQ.Relu(_relu_kernel) if _CQ is not None else _relu_kernel)


@TABLE.impl("aten::abs")
def absolute(self: Tensor) -> Tensor:  # complex -> its real dtype
    dt = self._dtype
    if dt is _BOOL:
        raise not_implemented("abs_cpu", dt)
    if dt in COMPLEX or dt in _FLOAT8:  # (abs is one of the few float8 kernels torch has)
        return wrap(np.abs(self._data))
    x = self._data
    if dt in _PLAIN and x.size >= _MIN_ITEMS:
        out = np.empty(x.shape, x.dtype)
        if P.unary(np.absolute, x, out):
            return wrap(out)
    return _result(dt, np.abs, self)


@TABLE.impl("aten::frac")
def frac(self: Tensor) -> Tensor:
    if self._dtype not in FLOATING:
        raise not_implemented("frac_cpu", self._dtype)
    return _result(self._dtype, _frac, self)


@TABLE.impl("aten::square")
def square(self: Tensor) -> Tensor:
    if self._dtype is _BOOL:  # pow(bool, 2): the int exponent promotes to int64
        return wrap(self._data.astype(_NP_I64))
    x = self._data
    if self._dtype in _PLAIN and x.size >= _MIN_ITEMS:
        out = np.empty(x.shape, x.dtype)
        if P.square(x, out):
            return wrap(out)
    return _result(self._dtype, _square, self)


@TABLE.impl("aten::round")
def round_decimals(self: Tensor, decimals: int | None = None) -> Tensor:
    dt = self._dtype
    if not decimals:
        if dt in INTEGRAL and decimals is None:  # only the plain round passes integers through
            return wrap(self._data.copy())
        if dt not in FLOATING:
            raise not_implemented("round_vml_cpu", dt)
        return _result(dt, np.rint, self)
    if dt not in FLOATING:
        raise not_implemented("round_cpu", dt)
    cdt = _cdt(dt)
    scale = np.asarray(10.0 ** (decimals if decimals > 0 else -decimals), dtype=cdt)
    if decimals > 0:
        return _result(dt, lambda x: np.rint(x * scale) / scale, self)
    return _result(dt, lambda x: np.rint(x / scale) * scale, self)


@TABLE.impl("aten::logical_not")
def logical_not(self: Tensor) -> Tensor:
    tok = quiet()
    try:
        return wrap(np.logical_not(self._data))
    finally:
        loud(tok)


@TABLE.impl("aten::bitwise_not")
def bitwise_not(self: Tensor) -> Tensor:
    dt = self._dtype
    if dt is _BOOL:
        return wrap(np.logical_not(self._data))
    if dt not in INTEGRAL:
        raise not_implemented("bitwise_not_cpu", dt)
    return wrap(np.invert(self._data))


def _classify(fn: Any, int_value: bool) -> Any:
    def kernel(self: Tensor) -> Tensor:
        if self._dtype in FLOATING or self._dtype in COMPLEX:
            tok = quiet()
            try:
                return wrap(fn(self._data))
            finally:
                loud(tok)
        return wrap(np.full(self._data.shape, int_value, dtype=_NP_BOOL))

    return kernel


TABLE.impl("aten::isnan")(_classify(np.isnan, False))
TABLE.impl("aten::isinf")(_classify(np.isinf, False))
TABLE.impl("aten::isfinite")(_classify(np.isfinite, True))


# ---- add / sub / mul / div ------------------------------------------------------------------------
def _check_alpha(dt: D.dtype, alpha: Any) -> None:
    if alpha.__class__ is bool and dt is not _BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if (dt in INTEGRAL or dt is _BOOL) and not isinstance(alpha, (bool, int)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dt not in COMPLEX and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _scaled(dt: D.dtype, alpha: Any) -> Any:
    """``alpha`` as an operand of the computation dtype, checked like PyTorch's Scalar conversion."""
    return C.scalar_to(alpha, dt, _cdt(dt))


def _check_sub(self: Any, other: Any) -> None:
    if _is_bool(self) and _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
            "operator instead."
        )
    if _is_bool(self) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )


def _add_sub(ufunc: Any, self: Any, other: Any, alpha: Any) -> Tensor:
    dt = C.result_dtype(self, other)
    other = _opmath_scalar(dt, other)
    if alpha.__class__ is int and alpha == 1:
        return _result(dt, ufunc, self, other)
    _check_alpha(dt, alpha)
    a = _scaled(dt, alpha)
    return _result(dt, lambda x, y: ufunc(x, y * a), self, other)


def add(self: Any, other: Any, alpha: Any = 1) -> Tensor:
    if alpha.__class__ is int and alpha == 1:
        r = _quick(np.add, self, other)
        if r is not None:
            return r
    return _add_sub(np.add, self, other, alpha)


@TABLE.impl("aten::sub.Tensor")
def sub(self: Any, other: Any, alpha: Any = 1) -> Tensor:
    _check_sub(self, other)
    if alpha.__class__ is int and alpha == 1:
        r = _quick(np.subtract, self, other)
        if r is not None:
            return r
    return _add_sub(np.subtract, self, other, alpha)


def mul(self: Any, other: Any) -> Tensor:
    r = _quick(np.multiply, self, other)
    if r is not None:
        return r
    dt = C.result_dtype(self, other)
    if dt in _FLOAT8 and isinstance(self, Tensor) and isinstance(other, Tensor) and self._dtype is other._dtype:
        return _apply(np.multiply, [self._data, other._data], dt.numpy_dtype)  # torch multiplies float8 tensors
    return _result(dt, np.multiply, self, _opmath_scalar(dt, other))


# add and mul are registered as their C fast paths (_quick without Python frames) where _cquick is built
TABLE.impl("aten::add.Tensor")(_CQ.Binary(np.add, add, alpha=True) if _CQ is not None else add)
TABLE.impl("aten::mul")(_CQ.Binary(np.multiply, mul) if _CQ is not None else mul)


def _int_zero_check(y: Any, x: Any = None) -> None:
    if not np.all(y) and (x is None or np.size(x) != 0):  # nothing divided by an empty x: no error
        raise RuntimeError("ZeroDivisionError")


def _trunc_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iub":
        _int_zero_check(y, x)
        q = np.floor_divide(x, y)
        # floor and trunc differ where the division is inexact and the signs differ
        fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
        return q + fix.astype(q.dtype)
    return np.trunc(x / y)


def _floor_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iub":
        _int_zero_check(y, x)
    return np.floor_divide(x, y)


_ROUNDING = {None: (None, None), "trunc": ("div_trunc_cpu", _trunc_div), "floor": ("div_floor_cpu", _floor_div)}


def _times_reciprocal(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x * (1 / y)


@TABLE.impl("aten::div.Tensor")
def div(self: Any, other: Any, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is None:
        if _dtype_of(self) not in _INTLIKE:
            r = _quick(np.true_divide, self, other)
            if r is not None:
                return r
        dt = C.result_dtype(self, other)
        if dt in INTEGRAL or dt is _BOOL:
            dt = D.get_default_dtype()
        y = _opmath_scalar(dt, other)
        if y is not other:  # PyTorch multiplies by the reciprocal of a half-precision run's scalar
            return _result(dt, _times_reciprocal, self, y)
        return _result(dt, np.true_divide, self, other)
    if rounding_mode not in _ROUNDING:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    kname, fn = _ROUNDING[rounding_mode]
    dt = C.result_dtype(self, other)
    if dt is _BOOL or dt in COMPLEX:
        raise not_implemented(kname, dt)
    return _result(dt, fn, self, other)


@TABLE.impl("aten::floor_divide")
def floor_divide(self: Any, other: Any) -> Tensor:
    return div(self, other, "floor")


# ---- pow --------------------------------------------------------------------------------------------
def _int_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    neg = y < 0
    if not np.any(neg):
        return np.power(x, y)
    r = np.power(x, np.where(neg, 0, y).astype(y.dtype))
    # negative powers: 1 -> 1, -1 -> +-1 by parity, anything else -> 0 (integer division)
    minus_one = np.where(y % 2 == 0, 1, -1)
    alt = np.where(x == 1, 1, np.where(x == -1, minus_one, 0)).astype(r.dtype)
    return np.where(neg, alt, r)


@TABLE.impl("aten::pow.Tensor_Tensor")
def power(self: Any, exponent: Any) -> Tensor:
    if _dtype_of(self) not in _INTLIKE:
        r = _quick(np.power, self, exponent)
        if r is not None:
            return r
    dt = C.result_dtype(self, exponent)
    if dt is _BOOL:
        if exponent.__class__ is bool and isinstance(self, Tensor):  # pow(bool tensor, True/False)
            return wrap(self._data.copy() if exponent else np.ones(self._data.shape, _NP_BOOL))
        raise not_implemented("pow", dt)
    if dt in INTEGRAL:
        if isinstance(exponent, (int, float)) and not isinstance(self, (int, float)) and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        C.scalar_to(exponent, dt)  # a Scalar exponent must fit the result dtype
    if dt in INTEGRAL:
        return _result(dt, _int_pow, self, exponent)
    if dt in HALF and not isinstance(exponent, Tensor):
        exponent = operand(exponent, F32)  # a scalar exponent stays at float32 precision
    return _result(dt, np.power, self, exponent)


# ---- other binary arithmetic ------------------------------------------------------------------------
def _remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        _int_zero_check(y, x)
        return np.remainder(x, y)
    m = np.fmod(x, y)  # PyTorch: fmod, then shift by the divisor when the signs differ
    fix = (m != 0) & ((y < 0) != (m < 0))
    return np.where(fix, m + y, m)


def _fmod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iu":
        _int_zero_check(y, x)
    return np.fmod(x, y)


def _real_binary(name: str, kname: str, fn: Any, *, to_float: bool = False) -> Any:
    """A binary op defined on real dtypes; bool/complex raise PyTorch's not-implemented error."""

    def kernel(self: Any, other: Any) -> Tensor:
        dt = C.result_dtype(self, other)
        if to_float and (dt in INTEGRAL or dt is _BOOL):
            dt = D.get_default_dtype()
        if dt is _BOOL or dt in COMPLEX:
            raise not_implemented(kname, dt)
        return _result(dt, fn, self, other)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::remainder")(_real_binary("remainder", "remainder_cpu", _remainder))
TABLE.impl("aten::fmod")(_real_binary("fmod", "fmod_cpu", _fmod))
TABLE.impl("aten::atan2")(_real_binary("atan2", "atan2_cpu", np.arctan2, to_float=True))


def _minmax(name: str, ufunc: Any) -> Any:
    def kernel(self: Any, other: Any) -> Tensor:
        if _dtype_of(self) not in COMPLEX:
            r = _quick(ufunc, self, other)
            if r is not None:
                return r
        dt = C.result_dtype(self, other)
        if dt in COMPLEX:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return _result(dt, ufunc, self, other)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::maximum")(_minmax("maximum", np.maximum))
TABLE.impl("aten::minimum")(_minmax("minimum", np.minimum))


# ---- comparisons and logical ops ------------------------------------------------------------------
def _compare(name: str, ufunc: Any, ordered: bool) -> Any:
    kname = f"{name}_cpu"

    def kernel(self: Any, other: Any) -> Tensor:
        if not (ordered and _dtype_of(self) in COMPLEX):
            r = _quick(ufunc, self, other)
            if r is not None:
                return r
        dt = C.result_dtype(self, other)
        if ordered and (dt in COMPLEX or dt in _FLOAT8):
            raise not_implemented(kname, dt)
        return _apply(ufunc, _operands((self, other), dt.numpy_dtype, dt.numpy_dtype), _NP_BOOL)

    kernel.__name__ = name
    return kernel


for _name, _fn, _ordered in (("eq", np.equal, False), ("ne", np.not_equal, False), ("lt", np.less, True),
                             ("le", np.less_equal, True), ("gt", np.greater, True), ("ge", np.greater_equal, True)):
    TABLE.impl(f"aten::{_name}.Tensor")(_compare(_name, _fn, _ordered))


def _truth(x: Any) -> Any:
    if isinstance(x, Tensor):
        data = x._data
        return data if data.dtype == _NP_BOOL else data != 0
    return bool(x)


def _logical(name: str, ufunc: Any) -> Any:
    def kernel(self: Any, other: Any) -> Tensor:
        tok = quiet()
        try:
            x, y = _truth(self), _truth(other)
            return wrap(np.asarray(ufunc(x, y), dtype=_NP_BOOL))
        except ValueError as e:
            raise _value_error(e, (x, y)) from None
        finally:
            loud(tok)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::logical_and")(_logical("logical_and", np.logical_and))
TABLE.impl("aten::logical_or")(_logical("logical_or", np.logical_or))
TABLE.impl("aten::logical_xor")(_logical("logical_xor", np.logical_xor))


# ---- bitwise ----------------------------------------------------------------------------------------
def _lshift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    bad = (y < 0) | (y >= bits)  # PyTorch: out-of-range shifts give 0
    return np.where(bad, 0, np.left_shift(x, np.where(bad, 0, y).astype(y.dtype))).astype(x.dtype)


def _rshift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    bad = (y < 0) | (y >= bits)  # PyTorch: out-of-range shifts keep only the sign
    fill = np.right_shift(x, np.asarray(bits - 1, x.dtype)) if x.dtype.kind == "i" else np.zeros((), x.dtype)
    return np.where(bad, fill, np.right_shift(x, np.where(bad, 0, y).astype(y.dtype))).astype(x.dtype)


def _bitwise(name: str, kname: str, fn: Any, allow_bool: bool) -> Any:
    def kernel(self: Any, other: Any) -> Tensor:
        dt = C.result_dtype(self, other)
        if dt not in INTEGRAL and not (allow_bool and dt is _BOOL):
            raise not_implemented(kname, dt)
        return _result(dt, fn, self, other)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::bitwise_and")(_bitwise("bitwise_and", "bitwise_and_cpu", np.bitwise_and, True))
TABLE.impl("aten::bitwise_or")(_bitwise("bitwise_or", "bitwise_or_cpu", np.bitwise_or, True))
TABLE.impl("aten::bitwise_xor")(_bitwise("bitwise_xor", "bitwise_xor_cpu", np.bitwise_xor, True))
TABLE.impl("aten::bitwise_left_shift")(_bitwise("bitwise_left_shift", "lshift_cpu", _lshift, False))
TABLE.impl("aten::bitwise_right_shift")(_bitwise("bitwise_right_shift", "rshift_cpu", _rshift, False))


# ---- where, lerp, addcmul, addcdiv, clamp, masked_fill ------------------------------------------------
@TABLE.impl("aten::where.self")
def where(condition: Any, self: Any, other: Any) -> Tensor:
    if isinstance(condition, Tensor):
        cdt = condition._dtype
        if cdt is not _BOOL and cdt is not D.uint8:
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype {C.torch_name(cdt)}"
            )
        cond = condition._data if cdt is _BOOL else condition._data != 0
    else:
        cond = np.asarray(bool(condition))
    dt = C.result_dtype(self, other)
    npdt = dt.numpy_dtype
    x, y = operand(self, npdt), operand(other, npdt)
    try:
        r = np.where(cond, x, y)
    except ValueError as e:
        raise _value_error(e, (cond, x, y)) from None
    return wrap(r if r.dtype == npdt else r.astype(npdt))


def _lerp(s: np.ndarray, e: np.ndarray, w: np.ndarray) -> np.ndarray:
    diff = e - s
    return np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))


def _lerp_dtype(self: Any, end: Any, weight: Any) -> D.dtype:
    dt = self._dtype if isinstance(self, Tensor) else C.result_dtype(self, end)
    if isinstance(end, Tensor) and end._dtype is not dt:
        raise RuntimeError(f"expected dtype {C.cpp_name(dt)} for `end` but got dtype {C.cpp_name(end._dtype)}")
    if isinstance(weight, Tensor):
        if weight._data.ndim and weight._dtype is not dt:
            raise RuntimeError(f"expected dtype {C.cpp_name(dt)} for `weight` but got dtype {C.cpp_name(weight._dtype)}")
        dt = C.result_dtype(self, end, weight)  # a 0-dim weight takes part in promotion
    if dt not in FLOATING and dt not in COMPLEX:
        raise not_implemented("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", dt)
    return dt


@TABLE.impl("aten::lerp.Tensor")
def lerp(self: Any, end: Any, weight: Any) -> Tensor:
    dt = _lerp_dtype(self, end, weight)
    if dt in HALF and not isinstance(weight, Tensor):
        weight = operand(weight, F32)  # a scalar weight stays at float32 precision
    return _result(dt, _lerp, self, end, weight)


def _addc_dtype(name: str, self: Any, tensor1: Any, tensor2: Any, value: Any) -> tuple[D.dtype, Any]:
    dt = C.result_dtype(self, tensor1, tensor2)
    if name == "addcmul" and dt is _BOOL:
        raise not_implemented("addcmul_cpu_out", dt)
    if name == "addcdiv" and _integral(tensor1) and _integral(tensor2):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    return dt, C.scalar_to(value, dt, _cdt(dt))


def _integral(x: Any) -> bool:
    dt = x._dtype if isinstance(x, Tensor) else C.result_dtype(x)
    return dt in INTEGRAL or dt is _BOOL


@TABLE.impl("aten::addcmul")
def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> Tensor:
    dt, v = _addc_dtype("addcmul", self, tensor1, tensor2, value)
    return _result(dt, lambda s, a, b: s + v * a * b, self, tensor1, tensor2)


@TABLE.impl("aten::addcdiv")
def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> Tensor:
    dt, v = _addc_dtype("addcdiv", self, tensor1, tensor2, value)
    return _result(dt, lambda s, a, b: s + v * a / b, self, tensor1, tensor2)


def _clamp_fn(lo: Any, hi: Any) -> Any:
    def fn(x: np.ndarray, *bounds: np.ndarray) -> np.ndarray:
        i = 0
        if lo is not None:
            x = C.clamp_below(x, bounds[0])
            i = 1
        if hi is not None:
            x = C.clamp_above(x, bounds[i])
        return x

    return fn


def _clamp(self: Tensor, min: Any, max: Any, scalar: bool) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = C.result_dtype(self, min, max)
    if dt in COMPLEX:
        raise NotImplementedError("clamp is not supported for complex types")
    if dt is _BOOL and (scalar or (min is not None and max is not None)):
        which = "clamp" if min is not None and max is not None else "clamp_min" if min is not None else "clamp_max"
        raise not_implemented(f"{which}_scalar_cpu" if scalar else f"{which}_cpu", dt)
    bounds = tuple(b for b in (min, max) if b is not None)
    if scalar:  # the kernel converts each bound to the result dtype with c10's overflow check
        for b in bounds:
            C.scalar_to(b, dt)
    return _result(dt, _clamp_fn(min, max), self, *bounds)


@TABLE.impl("aten::clamp")
def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _clamp(self, min, max, True)


@TABLE.impl("aten::clamp.Tensor")
def clamp_tensor(self: Tensor, min: Tensor | None = None, max: Tensor | None = None) -> Tensor:
    return _clamp(self, min, max, False)


def _mask(mask: Tensor) -> np.ndarray:
    if mask._dtype is not _BOOL:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {C.cpp_name(mask._dtype)}")
    return mask._data


def _fill_value(self: Tensor, value: Any) -> np.ndarray:
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value._data.ndim} "
                "dimension(s)."
            )
        value = value._data.item()
    return C.scalar_to(value, self._dtype)


@TABLE.impl("aten::masked_fill.Scalar", "aten::masked_fill.Tensor")
def masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = _mask(mask)
    v = _fill_value(self, value)
    x = self._data
    try:
        return wrap(np.where(m, v, x))
    except ValueError as e:
        raise _value_error(e, (x, m)) from None


# ---- in-place kernels (the ops optimizers run every step) -----------------------------------------
def _inplace_shape_error(self: Tensor, *others: Any) -> RuntimeError:
    shape = C.broadcast_shape(self._data.shape, *(_shape(o) for o in others))
    return RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(shape)}")


def _write(ufunc: Any, self: Tensor, y: Any, other: Any) -> Tensor:
    sd = self._data
    tok = quiet()
    try:
        ufunc(sd, y, out=sd, casting="unsafe")
    except ValueError as e:
        err = _value_error(e, (sd, y))
        raise (err if err is not e else _inplace_shape_error(self, y)) from None
    finally:
        loud(tok)
    return self


def _operand_for(self: Tensor, other: Any, alpha: Any = 1) -> Any:
    """``other`` (times ``alpha``) as an operand for writing into ``self``, after PyTorch's checks."""
    dt = C.result_dtype(self, other)
    check_castable(dt, self._dtype)
    cdt = _cdt(dt)
    y = operand(other, cdt)
    if not (alpha.__class__ is int and alpha == 1):
        _check_alpha(dt, alpha)
        y = y * C.scalar_to(alpha, dt, cdt)
    return y


def _blas_axpy() -> dict[np.dtype, Any]:
    """BLAS ``axpy`` (y += a*x, in place) per dtype, or nothing where BLAS is not available for
    this array type (e.g. when these kernels are instantiated for another array library).

    NumPy's own OpenBLAS when it can be reached (``_blas_policy.axpy_kernels``); otherwise SciPy's,
    only while SciPy's BLAS runs one thread: it is a second OpenBLAS beside NumPy's, and two
    thread pools spinning on a small machine made a training step 10x slower (measured on 2
    vCPUs).  ``reset_axpy`` re-decides after ``torchplug.set_num_threads``.
    """
    if np.ndarray is not sys.modules["numpy"].ndarray:  # another array library's instantiation
        return {}
    from torchplug_cpu._blas_policy import axpy_kernels  # (absolute: the module is host-only)

    found = axpy_kernels()  # no second library, no second thread pool
    if found:
        return found
    try:
        from scipy.linalg import blas
        from threadpoolctl import threadpool_info

        scipy_pools = [p for p in threadpool_info() if p.get("user_api") == "blas" and "scipy.libs" in p["filepath"]]
        if any(p["num_threads"] != 1 for p in scipy_pools):
            return {}
        return {np.dtype(np.float32): _scipy_axpy(blas.saxpy), np.dtype(np.float64): _scipy_axpy(blas.daxpy)}
    except Exception:  # noqa: BLE001 - the generic path below still computes the right result
        return {}


def _scipy_axpy(fn: Any) -> Any:
    def axpy(alpha: float, x: np.ndarray, y: np.ndarray) -> None:
        if fn(x, y, a=alpha) is not y:  # BLAS wrote a copy: cannot happen for contiguous y
            raise AssertionError("axpy did not update its output in place")

    return axpy


def reset_axpy() -> None:
    """Forget the axpy decision (the BLAS thread counts changed)."""
    global _AXPY
    _AXPY = None


_AXPY: dict[np.dtype, Any] | None = None


def _axpy(self: Tensor, other: Tensor, alpha: Any) -> Tensor | None:
    """``self += alpha * other`` in one pass when both are contiguous and of one float dtype (optimizer
    updates): no temporary for ``alpha * other``.  The C kernel's ``axpy`` where it is built, else one
    BLAS call.  None: use the generic path."""
    global _AXPY
    sd, od = self._data, other._data
    if not (sd.flags.c_contiguous and od.flags.c_contiguous and sd.shape == od.shape and sd.flags.writeable):
        return None
    dt = sd.dtype
    if _CK is not None and dt in _C_FLOATS and od.dtype is dt:
        # one C pass (threaded when large; fused multiply-add where the CPU has FMA, as PyTorch's kernel):
        # no ctypes set-up, which was most of a small parameter's update
        try:
            _CK.axpy(od, sd, alpha, dt is _C_FLOATS[1])
        except ValueError:  # other partly overlaps self: the generic path buffers it
            return None
        return self
    if _AXPY is None:
        _AXPY = _blas_axpy()
    fn = _AXPY.get(sd.dtype)
    if fn is None or sd.size == 0:
        return None
    fn(alpha, od.reshape(-1), sd.reshape(-1))
    return self


def _binary_inplace(ufunc: Any, with_alpha: bool) -> Any:
    def kernel(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        oc = other.__class__
        if alpha.__class__ is int and alpha == 1:
            if oc is Tensor and other._dtype is self._dtype:
                if self._dtype in _FLOAT8 and ufunc is not np.multiply:  # torch: float8 tensors only multiply
                    raise _float8_error(ufunc, self._dtype)
                return _write(ufunc, self, other._data, other)
            if (oc is float or oc is int) and self._dtype in _PLAIN:
                return _write(ufunc, self, other, other)
        elif (with_alpha and oc is Tensor and other._dtype is self._dtype and self._dtype in _PLAIN
              and (alpha.__class__ is float or alpha.__class__ is int)):
            done = _axpy(self, other, alpha)
            if done is not None:
                return done
        return _write(ufunc, self, _operand_for(self, other, alpha), other)

    return kernel


TABLE.impl("aten::add_.Tensor")(_binary_inplace(np.add, True))
TABLE.impl("aten::mul_")(_binary_inplace(np.multiply, False))


@TABLE.impl("aten::sub_.Tensor")
def sub_(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    _check_sub(self, other)
    return _write(np.subtract, self, _operand_for(self, other, alpha), other)


def _copy_result(self: Tensor, result: Tensor) -> Tensor:
    """The generic in-place tail: PyTorch's shape and cast checks, then write ``result`` into ``self``."""
    if result._data.shape != self._data.shape:
        raise RuntimeError(
            f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(result._data.shape)}"
        )
    check_castable(result._dtype, self._dtype)
    np.copyto(self._data, result._data, casting="unsafe")
    return self


@TABLE.impl("aten::div_.Tensor")
def div_(self: Tensor, other: Any, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is None and (self._dtype in FLOATING or self._dtype in COMPLEX):
        return _write(np.true_divide, self, _operand_for(self, other), other)
    return _copy_result(self, div(self, other, rounding_mode))


def _cast_write(self: Tensor, dt: D.dtype, fn: Any, *args: Any) -> Tensor:
    """Compute ``fn`` for result dtype ``dt`` and write it into ``self`` (checks first)."""
    check_castable(dt, self._dtype)
    cdt = _cdt(dt)
    ops = tuple(operand(a, cdt) for a in args)
    tok = quiet()
    try:
        r = fn(*ops)
    except ValueError as e:
        raise _value_error(e, ops) from None
    finally:
        loud(tok)
    if r.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape {list(r.shape)}")
    if r.dtype != cdt:
        r = r.astype(dt.numpy_dtype)  # e.g. complex abs -> real, round-trip through the result dtype
    np.copyto(self._data, r, casting="unsafe")
    return self


def _addc_fast(combine: Any, self: Tensor, tensor1: Any, tensor2: Any, value: Any) -> Tensor | None:
    """addcmul_/addcdiv_ on float32/64 tensors of one dtype with a Python number: no temporaries
    beyond NumPy's own, same evaluation order as PyTorch (``self + (value * t1) op t2``)."""
    dt = self._dtype
    vc = value.__class__
    if (dt not in _PLAIN or tensor1.__class__ is not Tensor or tensor2.__class__ is not Tensor
            or tensor1._dtype is not dt or tensor2._dtype is not dt or not (vc is float or vc is int)):
        return None
    sd, a, b = self._data, tensor1._data, tensor2._data
    tok = quiet()
    try:
        t = combine(np.multiply(a, value), b)
        np.add(sd, t, out=sd)
    except ValueError as e:
        err = _value_error(e, (sd, a, b))
        raise (err if err is not e else _inplace_shape_error(self, a, b)) from None
    finally:
        loud(tok)
    return self


@TABLE.impl("aten::addcmul_")
def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> Tensor:
    r = _addc_fast(np.multiply, self, tensor1, tensor2, value)
    if r is not None:
        return r
    dt, v = _addc_dtype("addcmul", self, tensor1, tensor2, value)
    return _cast_write(self, dt, lambda s, a, b: s + v * a * b, self, tensor1, tensor2)


@TABLE.impl("aten::addcdiv_")
def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: Any = 1) -> Tensor:
    r = _addc_fast(np.true_divide, self, tensor1, tensor2, value)
    if r is not None:
        return r
    dt, v = _addc_dtype("addcdiv", self, tensor1, tensor2, value)
    return _cast_write(self, dt, lambda s, a, b: s + v * a / b, self, tensor1, tensor2)


@TABLE.impl("aten::lerp_.Tensor")
def lerp_(self: Tensor, end: Any, weight: Any) -> Tensor:
    wc = weight.__class__
    if self._dtype in _PLAIN and end.__class__ is Tensor and end._dtype is self._dtype and (wc is float or wc is int):
        sd, e = self._data, end._data
        tok = quiet()
        try:
            diff = np.subtract(e, sd)
            if -0.5 < weight < 0.5:
                diff *= weight
                np.add(sd, diff, out=sd)
            else:
                diff *= 1 - weight
                np.subtract(e, diff, out=sd)
        except ValueError:
            raise _inplace_shape_error(self, e) from None
        finally:
            loud(tok)
        return self
    return _cast_write(self, _lerp_dtype(self, end, weight), _lerp, self, end, weight)


@TABLE.impl("aten::clamp_")
def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    return _copy_result(self, clamp(self, min, max))


@TABLE.impl("aten::masked_fill_.Scalar", "aten::masked_fill_.Tensor")
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = _mask(mask)
    v = _fill_value(self, value)
    try:
        np.copyto(self._data, v, where=m)
    except ValueError as e:
        err = _value_error(e, (self._data, m))
        raise (err if err is not e else _inplace_shape_error(self, m)) from None
    return self
