"""cpu kernels: ``out=`` overloads of the arithmetic and unary ufunc ops, written into ``out`` directly.

The core's generic ``out=`` kernel computes the functional op into a fresh buffer and copies it
into ``out`` (a temporary plus a second pass over memory).  Here the common case — operands of
``out``'s dtype, no ``alpha``, the float32/float64/integer dtypes NumPy computes exactly like
PyTorch — runs the ufunc with ``out=``: on the C thread pool when large (``_parallel``), else
NumPy.  ``out`` is resized first as PyTorch's ``resize_output`` does (warning when it held
elements).  Every other case (type promotion, casting into ``out``, ``alpha``, rounding modes,
half types, errors) goes to the generic kernel, which keeps PyTorch's checks and messages.

The overlap rules need nothing here: the core's ADInplaceOrView kernel has refused an ``out``
with internal overlap or partly overlapping an input before this runs, and an ``out`` that is
exactly an input is computed element by element in place (NumPy and the C loops read each
element before writing it).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._ops.composites import out_kernel
from torchplug._tensor.empty import resize_output
from torchplug.library import KernelTable

from torchplug_cpu import _parallel as P  # (absolute: host-only)

from .._common import INTEGRAL, Tensor, loud, quiet
from .pointwise import _FLOAT_UNARY, _value_error

__all__ = ["TABLE"]

TABLE = KernelTable("CPU")

_PLAIN = frozenset((D.float32, D.float64))
_EXACT = _PLAIN | INTEGRAL  # NumPy's loops give PyTorch's results in these dtypes (ints wrap alike)
_INT64 = D.int64
_ndarray = np.ndarray


class _Generic:
    """The core's generic out= kernel for ``functional``, built on first use (the aten table is
    defined by then; kernel modules are imported before it may be)."""

    __slots__ = ("functional", "kernel")

    def __init__(self, functional: str) -> None:
        self.functional = functional
        self.kernel: Any = None

    def __call__(self, *args: Any) -> Tensor:
        if self.kernel is None:
            self.kernel = out_kernel(DISPATCHER.entry(self.functional))
        return self.kernel(*args)


def _operand(x: Any, dt: D.dtype) -> Any:
    """``x``'s array when it is a tensor of dtype ``dt``, the number when PyTorch and NumPy combine it
    with ``dt`` into ``dt`` alike, else None (the generic kernel decides)."""
    xc = x.__class__
    if xc is Tensor:
        return x._data if x._dtype is dt else None
    if (xc is float or xc is int) and dt in _PLAIN or xc is int and dt is _INT64:
        return x
    return None


def _write(ufunc: Any, x: Any, y: Any, out: Tensor) -> Tensor:
    """``ufunc(x, y)`` into ``out`` (resized to the broadcast shape first)."""
    xs = x.shape if x.__class__ is _ndarray else ()
    ys = y.shape if y.__class__ is _ndarray else ()
    shape = xs if xs == ys or not ys else (ys if not xs else None)
    if shape is None:
        try:
            shape = np.broadcast_shapes(xs, ys)
        except ValueError as e:
            raise _value_error(e, (x, y)) from None
    if out._data.shape != shape:
        resize_output(out, shape)
    od = out._data
    if x.__class__ is _ndarray:
        done = P.binary(ufunc, x, y, od) if y.__class__ is _ndarray else P.binary_scalar(ufunc, x, y, od)
    else:
        done = P.binary_scalar(ufunc, y, x, od, scalar_first=True)
    if done:
        return out
    tok = quiet()
    try:
        ufunc(x, y, out=od)
    finally:
        loud(tok)
    return out


def _binary_out(ufunc: Any, functional: str, dtypes: frozenset, with_alpha: bool) -> Any:
    generic = _Generic(functional)

    def kernel(self: Any, other: Any, *rest: Any) -> Tensor:
        out = rest[-1]
        dt = out._dtype
        if with_alpha:
            alpha = rest[0]
            if not (alpha.__class__ is int and alpha == 1):
                return generic(self, other, *rest)
        elif len(rest) > 1 and rest[0] is not None:  # div's rounding_mode
            return generic(self, other, *rest)
        if dt in dtypes and out.__class__ is Tensor:
            x = _operand(self, dt)
            y = _operand(other, dt)
            if x is not None and y is not None and (x.__class__ is _ndarray or y.__class__ is _ndarray):
                return _write(ufunc, x, y, out)
        return generic(self, other, *rest)

    kernel.__name__ = f"{ufunc.__name__}_out"
    return kernel




def _unary_out(ufunc: Any, name: str) -> Any:
    generic = _Generic(f"aten::{name}")

    def kernel(self: Tensor, out: Tensor) -> Tensor:
        dt = out._dtype
        if self.__class__ is Tensor and out.__class__ is Tensor and self._dtype is dt and dt in _PLAIN:
            x = self._data
            if out._data.shape != x.shape:
                resize_output(out, x.shape)
            od = out._data
            if not P.unary(ufunc, x, od):
                tok = quiet()
                try:
                    ufunc(x, out=od)
                finally:
                    loud(tok)
            return out
        return generic(self, out)

    kernel.__name__ = f"{name}_out"
    return kernel


def _register() -> None:
    TABLE.impl("aten::add.out")(_binary_out(np.add, "aten::add.Tensor", _EXACT, True))
    TABLE.impl("aten::sub.out")(_binary_out(np.subtract, "aten::sub.Tensor", _EXACT, True))
    TABLE.impl("aten::mul.out")(_binary_out(np.multiply, "aten::mul", _EXACT, False))
    TABLE.impl("aten::div.out")(_binary_out(np.true_divide, "aten::div.Tensor", _PLAIN, False))
    # float32/float64 in, the same dtype out: the ufuncs the functional kernels call themselves
    unary = {name: fn for name, fn in _FLOAT_UNARY.items() if isinstance(fn, np.ufunc)}
    unary.update(neg=np.negative, abs=np.absolute, floor=np.floor, ceil=np.ceil, trunc=np.trunc)
    for name, fn in unary.items():
        TABLE.impl(f"aten::{name}.out")(_unary_out(fn, name))


# Only for NumPy arrays: where the cuda backend instantiates these kernels for CuPy, its out=
# overloads keep the core's generic kernel.
if np.ndarray is sys.modules["numpy"].ndarray:
    _register()
