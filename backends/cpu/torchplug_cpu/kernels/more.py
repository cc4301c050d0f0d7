"""cpu kernels: binary pointwise primitives of ``_schemas/more.py`` (nextafter, igamma/igammac, gcd/lcm).

Each is a NumPy/SciPy function plus PyTorch's dtype rule; promotion, broadcasting and the
half-type "opmath" come from ``pointwise._result``.  The CUDA backend runs this module too
(NumPy under emulation, CuPy/cupyx on the GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .._common import FLOATING, INTEGRAL, Tensor, not_implemented
from .pointwise import _apply, _operands, _result

special = C.lazy_import(globals(), "special", "scipy", "special")  # imported on first use

TABLE = KernelTable("CPU")


def _checked_dtype(self: Any, other: Any, kname: str, accepted: frozenset[D.dtype]) -> D.dtype:
    dt = C.result_dtype(self, other)
    if dt not in accepted:
        raise not_implemented(kname, dt)
    return dt


@TABLE.impl("aten::nextafter")
def nextafter(self: Tensor, other: Tensor) -> Tensor:
    dt = _checked_dtype(self, other, "nextafter_cpu", FLOATING)
    npdt = dt.numpy_dtype
    # in the result dtype itself: the next representable half/bfloat16, not float32's neighbour
    return _apply(np.nextafter, _operands((self, other), npdt, npdt), npdt)


def _gammainc(lower: bool) -> Any:
    name = "gammainc" if lower else "gammaincc"

    def kernel(self: Tensor, other: Tensor) -> Tensor:
        dt = _checked_dtype(self, other, "igamma_cpu" if lower else "igammac_cpu", FLOATING)
        return _result(dt, getattr(special, name), self, other)  # (scipy.special is imported on first use)

    kernel.__name__ = "igamma" if lower else "igammac"
    return kernel


TABLE.impl("aten::igamma")(_gammainc(True))
TABLE.impl("aten::igammac")(_gammainc(False))


def _integer_binary(name: str, fn: Any) -> Any:
    def kernel(self: Tensor, other: Tensor) -> Tensor:
        dt = _checked_dtype(self, other, f"{name}_cpu", INTEGRAL)
        return _result(dt, fn, self, other)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::gcd")(_integer_binary("gcd", np.gcd))
TABLE.impl("aten::lcm")(_integer_binary("lcm", np.lcm))
