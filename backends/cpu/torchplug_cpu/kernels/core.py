"""cpu kernels: allocation, copies, fills, strided views."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("CPU")


@TABLE.impl("aten::empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return C.wrap(np.empty(size, dtype=dtype.numpy_dtype))


@TABLE.impl("aten::copy_")
def copy_(self, src, non_blocking=False):
    if isinstance(src, C.Tensor):
        data = src._data
    else:
        data = src
    np.copyto(self._data, data, casting="unsafe")
    return self


@TABLE.impl("aten::fill_.Scalar")
def fill_(self, value):
    self._data.fill(value)
    return self


@TABLE.impl("aten::add.Tensor")
def add(self, other, alpha=1):
    dt = C.result_dtype(self, other)
    npdt = dt.numpy_dtype
    x = C.operand(self, npdt)
    y = C.operand(other, npdt)
    if alpha != 1:
        y = y * alpha
    return C.wrap(np.add(x, y, dtype=npdt))
