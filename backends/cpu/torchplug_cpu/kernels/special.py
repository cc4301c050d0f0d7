"""cpu kernels: the ``special_*`` primitives of ``_schemas/special.py`` on ``scipy.special`` (Bessel, Airy,
erfcx, log_ndtr, ndtri, zeta...) and NumPy (the orthogonal polynomials, as PyTorch's ``Math.h`` computes
them: the three-term recurrence, or the trigonometric closed form for high degrees inside [-1, 1]).

Dtype rules come from ``torchplug._ops.special_support``; promotion, broadcasting and float32 computation of
half inputs from ``pointwise._result``.  The cuda backend re-runs this module with ``scipy.special`` bound
to ``cupyx.scipy.special``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from torchplug._schemas.special import POLYNOMIALS
from torchplug._ops.special_support import float_result
from torchplug.library import KernelTable

from .. import _common as C
from .._common import Tensor
from .pointwise import _result

special = C.lazy_import(globals(), "special", "scipy", "special")  # imported on first use

TABLE = KernelTable("CPU")


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    # sin(x)/x, its Taylor series near 0 (PyTorch's spherical_bessel_j0_forward), 0 at +-inf
    one = x.dtype.type(1)
    small = np.abs(x) < x.dtype.type(0.5)
    x2 = x * x
    series = one + x2 * (-one / 6 + x2 * (one / 120 + x2 * (-one / 5040 + x2 * (one / 362880 + x2 * (
        -one / 39916800 + x2 * (one / 6227020800))))))
    safe = np.where(small | np.isinf(x), one, x)
    return np.where(small, series, np.where(np.isinf(x), x.dtype.type(0), np.sin(safe) / safe)).astype(x.dtype)


def _xlog1py(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # PyTorch: nan if y is nan, 0 where x == 0 (even where log1p(y) is infinite), else x * log1p(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = x * np.log1p(y)
    return np.where(np.isnan(y), y, np.where(x == 0, np.zeros((), value.dtype), value))


def _scipy(name: str) -> Callable[..., np.ndarray]:
    """``scipy.special.<name>``, looked up at call time: in the cuda backend's CuPy family ``special`` is
    ``cupyx.scipy.special``, and a function it lacks must fail only where it is used, naming itself."""
    def fn(*args: np.ndarray) -> np.ndarray:
        return getattr(special, name)(*args)

    fn.__name__ = name
    return fn


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "airy_ai": lambda x: special.airy(x)[0],
    "bessel_j0": _scipy("j0"), "bessel_j1": _scipy("j1"), "bessel_y0": _scipy("y0"), "bessel_y1": _scipy("y1"),
    "modified_bessel_i0": _scipy("i0"), "modified_bessel_i1": _scipy("i1"),
    "modified_bessel_k0": _scipy("k0"), "modified_bessel_k1": _scipy("k1"),
    "scaled_modified_bessel_k0": _scipy("k0e"), "scaled_modified_bessel_k1": _scipy("k1e"),
    "spherical_bessel_j0": _spherical_j0, "entr": _scipy("entr"), "erfcx": _scipy("erfcx"),
    "i0e": _scipy("i0e"), "i1e": _scipy("i1e"), "log_ndtr": _scipy("log_ndtr"), "ndtri": _scipy("ndtri"),
}


def _unary(op: str, fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[Tensor], Tensor]:
    def kernel(self: Tensor) -> Tensor:
        return _result(float_result(op, self._dtype), fn, self)

    kernel.__name__ = op
    return kernel


def _binary(op: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[Any, Any], Tensor]:
    def kernel(self: Any, other: Any) -> Tensor:
        return _result(float_result(op, C.result_dtype(self, other)), fn, self, other)

    kernel.__name__ = op
    return kernel


for _name, _fn in _UNARY.items():
    TABLE.impl(f"aten::special_{_name}")(_unary(f"special_{_name}", _fn))
TABLE.impl("aten::special_xlog1py")(_binary("special_xlog1py", _xlog1py))
TABLE.impl("aten::special_zeta")(_binary("special_zeta", _scipy("zeta")))


# ---- orthogonal polynomials ----------------------------------------------------------------------------------
# Chebyshev kinds: (the first-degree polynomial as a function of y, the value at y = 1, at y = -1 (times (-1)^n
# is applied by the caller where ``alternates``), the closed form in theta = acos(y))
def _cheb_first(kind: str, y: np.ndarray) -> np.ndarray:
    return {"t": y, "u": y + y, "v": y + y - 1, "w": y + y + 1}[kind]


def _cheb_edges(kind: str, y: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values at y = 1 and at y = -1 (PyTorch returns them exactly)."""
    sign = np.where(n % 2 == 0, 1, -1).astype(y.dtype)
    count = n.astype(y.dtype)
    at_one = {"t": np.ones_like(y), "u": count + 1, "v": np.ones_like(y), "w": count + count + 1}[kind]
    at_minus_one = sign * {"t": 1, "u": count + 1, "v": count + count + 1, "w": 1}[kind]
    return at_one, at_minus_one


def _cheb_closed(kind: str, y: np.ndarray, n: np.ndarray) -> np.ndarray:
    theta = np.arccos(np.clip(y, -1, 1))
    nf = n.astype(y.dtype)
    half = y.dtype.type(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "t":
            return np.cos(nf * theta)
        if kind == "u":
            return np.sin((nf + 1) * theta) / np.sin(theta)
        if kind == "v":
            return np.cos((nf + half) * theta) / np.cos(theta / 2)
        return np.sin((nf + half) * theta) / np.sin(theta / 2)


# PyTorch switches to the closed form above these degrees (for |y| < 1)
_CLOSED_FROM = {"t": 6, "u": 8, "v": 8, "w": 8}
_SHIFTED_CLOSED_FROM = {"t": 6, "u": 6, "v": 6, "w": 4}


def _recurrence(first: np.ndarray, n: np.ndarray,
                step: Callable[[int, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """p_n from p_0 = 1, p_1 = ``first`` and p_{k+1} = step(k, p_k, p_{k-1}), elementwise up to each n."""
    p = np.ones_like(first)
    q = first.copy()
    top = int(n.max()) if n.size else 0
    for k in range(1, top):
        nxt = step(k, q, p)
        active = n > k
        p = np.where(active, q, p)
        q = np.where(active, nxt, q)
    return np.where(n == 0, p.dtype.type(1), q)


def _chebyshev(kind: str, shifted: bool) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    closed_from = (_SHIFTED_CLOSED_FROM if shifted else _CLOSED_FROM)[kind]

    def fn(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        x, n = np.broadcast_arrays(x, n)
        deg = _degrees(n)
        y = x + x - 1 if shifted else x
        closed = (deg > closed_from) & (np.abs(y) < 1)
        with np.errstate(over="ignore", invalid="ignore"):
            two_y = y + y
            # the recurrence only where PyTorch runs it: a high degree inside (-1, 1) costs no loop
            value = _recurrence(_cheb_first(kind, y), np.where(closed, 0, deg), lambda k, q, p: two_y * q - p)
        at_one, at_minus_one = _cheb_edges(kind, y, deg)
        if closed.any():
            value = np.where(closed, _cheb_closed(kind, y, deg), value)
        value = np.where(y == 1, at_one, np.where(y == -1, at_minus_one, value))
        return np.where(deg < 0, y.dtype.type(0), value).astype(x.dtype, copy=False)

    return fn


def _degrees(n: np.ndarray) -> np.ndarray:
    """PyTorch truncates each degree to an int64 (``static_cast<int64_t>(n)``); nan counts as degree 0."""
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(n, nan=0.0, posinf=0.0, neginf=0.0).astype(np.int64)


def _hermite_h(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    x, n = np.broadcast_arrays(x, n)
    deg = _degrees(n)
    with np.errstate(over="ignore", invalid="ignore"):
        two_x = x + x
        value = _recurrence(two_x, deg, lambda k, q, p: two_x * q - (k + k) * p)
    return np.where(deg < 0, x.dtype.type(0), value).astype(x.dtype, copy=False)


def _hermite_he(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    x, n = np.broadcast_arrays(x, n)
    deg = _degrees(n)
    with np.errstate(over="ignore", invalid="ignore"):
        value = _recurrence(x.copy(), deg, lambda k, q, p: x * q - k * p)
    return np.where(deg < 0, x.dtype.type(0), value).astype(x.dtype, copy=False)


def _laguerre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    x, n = np.broadcast_arrays(x, n)
    deg = _degrees(n)
    one = x.dtype.type(1)
    with np.errstate(over="ignore", invalid="ignore"):
        value = _recurrence(one - x, deg, lambda k, q, p: ((k + k + (one - x)) * q - k * p) / (k + 1))
    value = np.where(x == 0, one, value)
    return np.where(deg < 0, x.dtype.type(0), value).astype(x.dtype, copy=False)


def _legendre(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    x, n = np.broadcast_arrays(x, n)
    deg = _degrees(n)
    with np.errstate(over="ignore", invalid="ignore"):
        value = _recurrence(x.copy(), deg, lambda k, q, p: ((k + k + 1) * x * q - k * p) / (k + 1))
    sign = np.where(deg % 2 == 0, 1, -1).astype(x.dtype)
    value = np.where(x == 1, x.dtype.type(1), np.where(x == -1, sign, value))
    return np.where(deg < 0, x.dtype.type(0), value).astype(x.dtype, copy=False)


_POLYNOMIAL_FNS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    **{f"chebyshev_polynomial_{k}": _chebyshev(k, False) for k in "tuvw"},
    **{f"shifted_chebyshev_polynomial_{k}": _chebyshev(k, True) for k in "tuvw"},
    "hermite_polynomial_h": _hermite_h, "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre,
}
assert set(_POLYNOMIAL_FNS) == set(POLYNOMIALS)

for _name, _fn in _POLYNOMIAL_FNS.items():
    TABLE.impl(f"aten::special_{_name}")(_binary(f"special_{_name}", _fn))
