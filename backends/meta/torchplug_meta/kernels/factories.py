"""meta kernels for factories with computed sizes: arange, linspace, logspace, eye, randperm."""

from __future__ import annotations

import math
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def arange_length(start: Any, end: Any, step: Any, dtype: D.dtype) -> int:
    """PyTorch's arange size: int64 results count in int64 arithmetic, others in double."""
    if dtype is D.int64:
        xstart, xend, xstep = int(start), int(end), int(step)  # Scalar.to<int64_t>() truncates
        if xstep == 0:
            raise RuntimeError("step must be nonzero")
        sgn = (xstep > 0) - (xstep < 0)
        size = _trunc_div(xend - xstart + xstep - sgn, xstep)
    else:
        if step == 0:
            raise RuntimeError("step must be nonzero")
        size = math.ceil((float(end) - float(start)) / float(step))
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if size < 0:
        raise RuntimeError("invalid size, possible overflow?")
    return size


@TABLE.impl("aten::arange.start_step")
def arange(start: Any, end: Any, step: Any = 1, dtype: D.dtype | None = None, layout: Any = None,
           device: Any = None, pin_memory: Any = None) -> C.Tensor:
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, int) for v in (start, end, step)) else D.get_default_dtype()
    return C.new((arange_length(start, end, step, dtype),), dtype)


def _steps(name: str, steps: int) -> int:
    if steps < 0:
        raise RuntimeError(f"{name}(): number of steps must be non-negative")
    return steps


@TABLE.impl("aten::linspace")
def linspace(start: Any, end: Any, steps: int, dtype: D.dtype | None = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> C.Tensor:
    return C.new((_steps("linspace", steps),), dtype or D.get_default_dtype())


@TABLE.impl("aten::logspace")
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, dtype: D.dtype | None = None, layout: Any = None,
             device: Any = None, pin_memory: Any = None) -> C.Tensor:
    return C.new((_steps("logspace", steps),), dtype or D.get_default_dtype())


@TABLE.impl("aten::eye.m")
def eye(n: int, m: int, dtype: D.dtype | None = None, layout: Any = None, device: Any = None,
        pin_memory: Any = None) -> C.Tensor:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return C.new((n, m), dtype or D.get_default_dtype())


@TABLE.impl("aten::randperm")
def randperm(n: int, generator: Any = None, dtype: D.dtype | None = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None) -> C.Tensor:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return C.new((n,), dtype or D.int64)
