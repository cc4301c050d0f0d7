"""cpu kernels: range and structured factories (``arange``, ``linspace``, ``logspace``, ``eye``, ``randperm``)."""

from __future__ import annotations

import math

import numpy as np

from torchplug._ops import composites as CP
from torchplug._base import dtype as D
from torchplug.library import KernelTable
from torchplug_cpu import _stream

from .core import check_scalar_fits, fresh

TABLE = KernelTable("CPU")


def _not_implemented(op: str, dtype: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{op}" not implemented for \'{CP.scalar_type_name(dtype)}\'')


def _real(x):
    return x.real if isinstance(x, complex) else x


@TABLE.impl("aten::arange.start_step")
def arange(start, end, step=1, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or (D.int64 if all(isinstance(v, int) for v in (start, end, step)) else D.get_default_dtype())
    if dt is D.bool_ or dt._category == 3:
        raise _not_implemented("arange_cpu", dt)
    npdt = dt.numpy_dtype
    start, end, step = _real(start), _real(end), _real(step)
    if dt._category == 1:
        # PyTorch's accumulate type for integers is int64: the bounds are truncated first.
        xs, xe, xstep = (int(v) for v in (start, end, step))
        if xstep == 0:
            raise ValueError("step must be nonzero")
        if dt is D.int64:
            sgn = (xstep > 0) - (xstep < 0)
            q = xe - xs + xstep - sgn
            length = abs(q) // abs(xstep) * (1 if (q >= 0) == (xstep > 0) else -1)  # C++ truncating division
        else:
            length = math.ceil((float(end) - float(start)) / float(step))
    else:
        xs, xstep = float(start), float(step)
        if xstep == 0:
            raise ValueError("step must be nonzero")
        length = math.ceil((float(end) - float(start)) / float(step))
    if not (step > 0 and end >= start or step < 0 and end <= start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    length = max(int(length), 0)
    if dt._category == 1:
        values = xs + np.arange(length, dtype=np.int64) * xstep
        return fresh(values.astype(npdt))
    values = xs + np.arange(length, dtype=np.float64) * xstep
    return fresh(values.astype(npdt))


def _steps_check(op: str, steps: int) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


@TABLE.impl("aten::linspace")
def linspace(start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or D.get_default_dtype()
    _steps_check("linspace", steps)
    npdt = dt.numpy_dtype
    # PyTorch: no step fills nothing, one step fills start (a checked conversion), more run the kernel
    # (its dtype list, then both ends converted with checks)
    if steps == 0:
        return fresh(np.empty((0,), npdt))
    check_scalar_fits(start, dt)
    if steps == 1:
        return fresh(np.full((1,), start if dt._category == 3 else _real(start)).astype(npdt))
    if dt is D.bool_:
        raise _not_implemented("linspace_cpu", dt)
    check_scalar_fits(end, dt)
    # PyTorch's kernel: step in the result type (double for integers); the first half counts up
    # from start, the second half down from end.
    if dt._category == 1:
        work = np.float64
        # start/end converted to the int type first (an int wraps: -1 is 255 in uint8)
        s, e = (float(np.array(int(_real(v)), np.int64).astype(npdt)) for v in (start, end))
    elif dt._category == 3:
        work = npdt
        s, e = complex(start), complex(end)
    else:
        work = npdt if npdt.itemsize >= 4 else np.float32
        s, e = float(_real(start)), float(_real(end))
    s_, e_ = np.array(s, dtype=work)[()], np.array(e, dtype=work)[()]
    step = (e_ - s_) / np.array(steps - 1, dtype=work)[()]
    idx = np.arange(steps, dtype=work)
    halfway = steps // 2
    out = np.empty(steps, dtype=work)
    out[:halfway] = s_ + step * idx[:halfway]
    out[halfway:] = e_ - step * (np.array(steps - 1, dtype=work) - idx[halfway:])
    if dt._category == 1:
        return fresh(out.astype(npdt))  # truncation toward zero, like static_cast
    return fresh(out.astype(npdt))


@TABLE.impl("aten::logspace")
def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or D.get_default_dtype()
    _steps_check("logspace", steps)
    if dt is D.bool_:
        raise _not_implemented("logspace_cpu", dt)
    npdt = dt.numpy_dtype
    if steps == 0:
        return fresh(np.empty((0,), npdt))
    work = np.complex128 if dt._category == 3 else np.float64
    s = np.array(start if dt._category == 3 else float(_real(start)), dtype=work)[()]
    e = np.array(end if dt._category == 3 else float(_real(end)), dtype=work)[()]
    if steps == 1:
        exps = np.array([s], dtype=work)
    else:
        step = (e - s) / (steps - 1)
        idx = np.arange(steps, dtype=np.float64)
        halfway = steps // 2
        exps = np.empty(steps, dtype=work)
        exps[:halfway] = s + step * idx[:halfway]
        exps[halfway:] = e - step * (steps - 1 - idx[halfway:])
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.power(np.array(base, dtype=work), exps)
        return fresh(out.astype(npdt))


@TABLE.impl("aten::eye.m")
def eye(n, m, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = dtype or D.get_default_dtype()
    return fresh(np.eye(n, m, dtype=dt.numpy_dtype))


@TABLE.impl("aten::randperm")
def randperm(n, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = dtype or D.int64
    if dt._category == 1:
        info = np.iinfo(dt.numpy_dtype)
        if n > 0 and n - 1 > info.max:
            from .core import _CPP_NAMES  # noqa: PLC0415

            raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[dt.name]} without overflow")
    elif dt is D.bool_ and n > 2:
        raise RuntimeError("value cannot be converted to type bool without overflow")
    elif dt._category == 2:
        digits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dt.name]
        if n > 2**digits:
            raise RuntimeError(f"n cannot be greater than 2^{digits}+1 for {CP.scalar_type_name(dt)} dtype.")
    # randperm_cpu's Fisher-Yates on the generator's stream (torchplug_cpu._stream)
    perm = _stream.randperm(generator, n)
    return fresh(np.asarray(perm.astype(dt.numpy_dtype)))
