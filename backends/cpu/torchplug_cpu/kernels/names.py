"""cpu kernels: the special functions of ``_schemas/names.py`` (i0, special_i1, polygamma, frexp).

SciPy/NumPy functions plus PyTorch's dtype rules; half types compute in float32 (``pointwise._result``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .._common import COMPLEX, FLOATING, HALF, Tensor, not_implemented, wrap
from .math import _digamma, _float_dtype
from .pointwise import _result

special = C.lazy_import(globals(), "special", "scipy", "special")  # imported on first use

TABLE = KernelTable("CPU")


@TABLE.impl("aten::i0")
def i0(self: Tensor) -> Tensor:
    if self._dtype in COMPLEX:
        raise not_implemented("i0_vml_cpu", self._dtype)
    return _result(_float_dtype(self._dtype), special.i0, self)


@TABLE.impl("aten::special_i1")
def special_i1(self: Tensor) -> Tensor:
    if self._dtype in COMPLEX:
        raise not_implemented("i1_cpu", self._dtype)
    return _result(_float_dtype(self._dtype), special.i1, self)


def _trigamma(x: np.ndarray) -> np.ndarray:
    # ATen's calc_trigamma, step for step in the input's precision: reflection below 1/2 (so a negative
    # integer gives a huge finite value, not inf), six recurrence steps, then the asymptotic series
    dt = x.dtype.type
    pi = dt(np.pi)
    neg = x < dt(0.5)
    sin_pi_x = np.sin(pi * x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = np.where(neg, -(pi * pi) / (sin_pi_x * sin_pi_x), dt(0)).astype(x.dtype)
        x = np.where(neg, dt(1) - x, x).astype(x.dtype)
        for _ in range(6):
            result = result + dt(1) / (x * x)
            x = x + dt(1)
        ixx = dt(1) / (x * x)
        result = result + (dt(1) + dt(1) / (dt(2) * x) + ixx * (dt(1 / 6) - ixx * (dt(1 / 30) - ixx * dt(1 / 42)))) / x
    return np.where(neg, -result, result).astype(x.dtype, copy=False)


def _polygamma(n: int) -> Any:
    if n == 0:
        return _digamma
    if n == 1:
        return _trigamma

    def fn(x: np.ndarray) -> np.ndarray:
        # PyTorch: poles (x = 0, -1, -2, ...) give (-1)^(n+1) * inf, as the Hurwitz zeta's pole
        r = special.polygamma(n, x)
        pole = (x <= 0) & (x == np.floor(x))
        if r.size and pole.any():
            r = np.where(pole, np.asarray(np.inf if n % 2 else -np.inf, r.dtype), r)
        return r.astype(x.dtype, copy=False)

    return fn


@TABLE.impl("aten::polygamma")
def polygamma(n: int, self: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if self._dtype in COMPLEX:
        raise not_implemented("polygamma", self._dtype)
    return _result(_float_dtype(self._dtype), _polygamma(n), self)


@TABLE.impl("aten::frexp.Tensor")
def frexp(self: Tensor) -> tuple[Tensor, Tensor]:
    dt = self._dtype
    if dt not in FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = self._data
    if dt in HALF:  # exact in float32: every half/bfloat16 value and its mantissa are representable there
        x = x.astype(np.float32)
    mantissa, exponent = np.frexp(x)
    return wrap(mantissa.astype(dt.numpy_dtype, copy=False)), wrap(exponent.astype(np.int32))
