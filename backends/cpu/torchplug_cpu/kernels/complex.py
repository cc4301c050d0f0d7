"""cpu kernels: complex conjugate and argument in one NumPy call each (the core composites take
several dispatches); every other complex op is a core composite over the primitives."""

from __future__ import annotations

import numpy as np

from torchplug._ops import composites_complex as CX
from torchplug._dispatch.aten import A
from torchplug.library import KernelTable

from .._common import Tensor, wrap

__all__ = ["TABLE"]

TABLE = KernelTable("CPU")


@TABLE.impl("aten::conj_physical")
def conj_physical(self: Tensor) -> Tensor:
    out = A.clone(self)  # the composite's layout (memory format preserved)
    if self._dtype.is_complex:
        np.conjugate(out._data, out=out._data)
    return out


@TABLE.impl("aten::angle")
def angle(self: Tensor) -> Tensor:
    data = self._data
    if data.dtype == np.complex64:
        # arctan2 in double, then rounded: float32 NumPy's own arctan2 can be an ulp off atan2f
        return wrap(np.angle(data.astype(np.complex128)).astype(np.float32))
    if self._dtype.is_complex:
        return wrap(np.angle(data))
    return CX.angle(self)
