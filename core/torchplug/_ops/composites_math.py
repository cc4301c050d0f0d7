"""Math composites: pointwise and reduction ops written once in terms of other ops (every backend gets them).

Registered by ``register_core`` next to ``_composites.COMPOSITES``; a backend may still register
a faster direct kernel for any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import out_kernel, scalar_type_name
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._tensor.tensor import Tensor

__all__ = ["COMPOSITES", "register"]

_BOOL, _INT, _FLOAT = 0, 1, 2


def _dtype_of(x: Any) -> D.dtype:
    if isinstance(x, Tensor):
        return x._dtype
    return D.bool_ if isinstance(x, bool) else D.int64 if isinstance(x, int) else D.complex128 if isinstance(x, complex) else D.float64


# ---- pointwise --------------------------------------------------------------------------------------
def positive(self: Tensor) -> Tensor:
    if self._dtype is D.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def float_power(self: Any, exponent: Any) -> Tensor:
    """``pow`` computed in double (complex double when either operand is complex)."""
    dt = D.complex128 if _dtype_of(self).is_complex or _dtype_of(exponent).is_complex else D.float64
    if isinstance(self, Tensor) and self._dtype is not dt:
        self = A._to_copy(self, dtype=dt)
    if isinstance(exponent, Tensor) and exponent._dtype is not dt:
        exponent = A._to_copy(exponent, dtype=dt)
    return A.pow(self, exponent)


def _clamp_one(which: str) -> Callable[..., Tensor]:
    other = "maximum" if which == "min" else "minimum"

    def kernel(self: Tensor, bound: Any) -> Tensor:
        if isinstance(bound, Tensor):
            dt = D.promote_types(self._dtype, bound._dtype)
            if dt.is_complex:  # (a number bound reaches clamp, which raises its own complex error)
                raise NotImplementedError(f'"{other}_cpu" not implemented for \'{scalar_type_name(dt)}\'')
            return A["clamp.Tensor"](self, *((bound, None) if which == "min" else (None, bound)))
        return A.clamp(self, *((bound, None) if which == "min" else (None, bound)))

    kernel.__name__ = f"clamp_{which}"
    return kernel


def isclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    # PyTorch's isclose (ATen TensorCompare.cpp), op for op
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{scalar_type_name(self._dtype)} did not match {scalar_type_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_num(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_num(atol)}")
    close = A.eq(self, other)
    if equal_nan and (self._dtype.is_floating_point or self._dtype.is_complex):
        close = A.logical_or(close, A.logical_and(A.isnan(self), A.isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    if self._dtype is D.bool_:  # bool compares in the default float dtype; integers in their own
        dt = D.get_default_dtype()
        self, other = A._to_copy(self, dtype=dt), A._to_copy(other, dtype=dt)
    allowed = A.add(A.abs(A.mul(other, rtol)), atol)
    actual = A.abs(A.sub(self, other))
    return A.logical_or(close, A.logical_and(A.isfinite(actual), A.le(actual, allowed)))


def _num(x: float) -> str:
    """C++'s default float formatting of a whole number (``-1`` not ``-1.0``)."""
    return str(int(x)) if float(x).is_integer() else repr(x)


def allclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(A.all(isclose(self, other, rtol, atol, equal_nan)).item())


def equal(self: Tensor, other: Tensor) -> bool:
    if self._device != other._device:
        raise RuntimeError(
            f"Expected all tensors to be on the same device, but found at least two devices, {self._device} and "
            f"{other._device}!"
        )
    if tuple(self.shape) != tuple(other.shape):
        return False
    return bool(A.all(A.eq(self, other)).item())


# ---- reductions -------------------------------------------------------------------------------------
def nanmean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if D.category(self._dtype) < _FLOAT:
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{scalar_type_name(self._dtype)}"
        )
    count = A.sum(A.logical_not(A.isnan(self)), dim, keepdim)
    return A.div(A.nansum(self, dim, keepdim, dtype=dtype), count)


def count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    return A.sum(A.ne(self, 0), dim)


def _with_mean(which: str) -> Callable[..., tuple[Tensor, Tensor]]:
    def kernel(self: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        if D.category(self._dtype) < _FLOAT:
            raise RuntimeError(f"{which}_mean only support floating point and complex dtypes")
        spread = A[which](self, dim, correction=correction, keepdim=keepdim)
        return spread, A.mean(self, dim, keepdim)

    kernel.__name__ = f"{which}_mean"
    return kernel


def aminmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        _no_complex_aminmax(self)
        return A.amin(self, [], keepdim), A.amax(self, [], keepdim)
    d = dim + max(self.dim(), 1) if dim < 0 else dim
    if self.dim() and 0 <= d < self.dim() and self.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    _no_complex_aminmax(self)
    return A.amin(self, [dim], keepdim), A.amax(self, [dim], keepdim)


def _no_complex_aminmax(self: Tensor) -> None:
    if self._dtype.is_complex:
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{scalar_type_name(self._dtype)}'")


def argsort(self: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return A.sort(self, dim, descending, stable=stable)[1]


def msort(self: Tensor) -> Tensor:
    return A.sort(self, 0)[0]


# ATen's overloads with a Scalar operand, for the composites that call them as PyTorch's C++ does: the
# Tensor overloads compute them (a Python number is a wrapped number there); autograd records their own node
def add_scalar(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    return A.add(self, other, alpha=alpha)


def mul_scalar(self: Tensor, other: Any) -> Tensor:
    return A.mul(self, other)


def div_scalar(self: Tensor, other: Any) -> Tensor:
    return A.div(self, other)


def norm_scalaropt_dim(self: Tensor, p: Any, dim: Any, keepdim: bool = False) -> Tensor:
    return A.linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)


# op name -> (key, kernel), the format of ``_composites.COMPOSITES``.
COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "positive": ("CompositeImplicitAutograd", positive),
    "float_power.Tensor_Tensor": ("CompositeImplicitAutograd", float_power),
    # explicit: one ClampMin/ClampMaxBackward node with its own formula, as PyTorch records
    "clamp_min": ("CompositeExplicitAutograd", _clamp_one("min")),
    "clamp_max": ("CompositeExplicitAutograd", _clamp_one("max")),
    "isclose": ("CompositeImplicitAutograd", isclose),
    "allclose": ("CompositeImplicitAutograd", allclose),
    "equal": ("CompositeImplicitAutograd", equal),
    "nanmean": ("CompositeImplicitAutograd", nanmean),
    "count_nonzero": ("CompositeImplicitAutograd", count_nonzero),
    # explicit: one VarMean/StdMean/AminmaxBackward0 node with its own formula, as PyTorch records
    "var_mean": ("CompositeExplicitAutograd", _with_mean("var")),
    "std_mean": ("CompositeExplicitAutograd", _with_mean("std")),
    "aminmax": ("CompositeExplicitAutograd", aminmax),
    "argsort": ("CompositeImplicitAutograd", argsort),
    "msort": ("CompositeImplicitAutograd", msort),
    # explicit: AddBackward1 / MulBackward1 / NormBackward1, one edge (the Scalar has none), as PyTorch records
    "add.Scalar": ("CompositeExplicitAutograd", add_scalar),
    "mul.Scalar": ("CompositeExplicitAutograd", mul_scalar),
    "div.Scalar": ("CompositeExplicitAutograd", div_scalar),
    "norm.ScalarOpt_dim": ("CompositeExplicitAutograd", norm_scalaropt_dim),
}



# ---- out= overloads with PyTorch's stricter dtype rules ----------------------------------------------------
def _same_dtype(message: str) -> Callable[[tuple[Any, ...]], None]:
    def check(args: tuple[Any, ...]) -> None:
        self, out = args[0], args[-1]
        if out._dtype is not self._dtype:
            raise RuntimeError(message.format(out=scalar_type_name(out._dtype), self=scalar_type_name(self._dtype)))

    return check


def _bool_out(name: str) -> Callable[[tuple[Any, ...]], None]:
    def check(args: tuple[Any, ...]) -> None:
        if args[-1]._dtype is not D.bool_:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    return check


def _float_power_out(args: tuple[Any, ...]) -> None:
    self, exponent, out = args
    dt = D.complex128 if _dtype_of(self).is_complex or _dtype_of(exponent).is_complex else D.float64
    if out._dtype is not dt:
        raise RuntimeError(
            f"the output given to float_power has dtype {scalar_type_name(out._dtype)} but the operation's result "
            f"requires dtype {scalar_type_name(dt)}"
        )


def _dtype_from_out(index: int, check: Callable[[tuple[Any, ...]], None] | None = None) -> Callable[..., Any]:
    """Reductions and scans compute in ``out``'s dtype when no ``dtype=`` is given (PyTorch's
    infer_dtype_from_optional): returns the arguments with ``dtype`` (at ``index``) filled in."""

    def adapt(args: tuple[Any, ...]) -> tuple[Any, ...]:
        if check is not None:
            check(args)
        if args[index] is None:
            args = args[:index] + (args[-1]._dtype,) + args[index + 1:]
        return args

    return adapt


def _nanmean_out(args: tuple[Any, ...]) -> None:
    if D.category(args[0]._dtype) < _FLOAT:
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, even for empty tensors.")


_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _norm_out(args: tuple[Any, ...]) -> None:
    self, dtype, out = args[0], args[4], args[-1]
    expected = (dtype or self._dtype).to_real()
    if D.category(expected) >= _FLOAT and out._dtype is not expected:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_CPP.get(expected.name, expected.name)}, but got "
            f"{_CPP.get(out._dtype.name, out._dtype.name)} instead"
        )


# out overload -> (its functional op, check of the arguments run before the generic out= composite; a check
# may return replacement arguments)
OUT_CHECKS: dict[str, tuple[str, Callable[[tuple[Any, ...]], Any]]] = {
    "nansum.out": ("nansum", _dtype_from_out(3)),
    "nanmean.out": ("nanmean", _dtype_from_out(3, _nanmean_out)),
    "cumsum.out": ("cumsum", _dtype_from_out(2)),
    "cumprod.out": ("cumprod", _dtype_from_out(2)),
    "linalg_vector_norm.out": ("linalg_vector_norm", _norm_out),
    "sgn.out": ("sgn", _same_dtype("Found dtype {out} but expected {self}")),
    "nan_to_num.out": ("nan_to_num", _same_dtype("nan_to_num: dtype of out: {out} should be same as input: {self}")),
    "signbit.out": ("signbit", _bool_out("signbit")),
    "isposinf.out": ("isposinf", _bool_out("isposinf")),
    "isneginf.out": ("isneginf", _bool_out("isneginf")),
    "heaviside.out": ("heaviside", _same_dtype("heaviside is not yet implemented for tensors with different dtypes.")),
    "float_power.Tensor_Tensor_out": ("float_power.Tensor_Tensor", _float_power_out),
}


def _checked_out(functional: str, check: Callable[[tuple[Any, ...]], Any]) -> Callable[..., Tensor]:
    generic = out_kernel(DISPATCHER.entry(f"aten::{functional}"))

    def kernel(*args: Any) -> Tensor:
        adapted = check(args)
        return generic(*(args if adapted is None else adapted))

    kernel.__qualname__ = f"out[aten::{functional}, checked]"
    return kernel


def register(lib: Any) -> None:
    """Register every math composite through ``lib`` (called at the end of ``register_core``)."""
    for name, (key, fn) in COMPOSITES.items():
        lib.impl(name, fn, key)
    for name, (functional, check) in OUT_CHECKS.items():  # shadow the generic out= composites the core made
        lib.impl(name, _checked_out(functional, check), "CompositeExplicitAutograd", allow_override=True)
