"""cpu kernels: allocation (``empty``, ``empty_strided``), ``copy_`` and ``fill_``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._runtime.backends import backend_for
from torchplug._tensor.tensor import Storage, Tensor, make_tensor
from torchplug.library import KernelTable

from torchplug_cpu import _parallel as P  # (absolute: one host module; it declines non-NumPy arrays)

from .. import _common as C

TABLE = KernelTable("CPU")

_ndarray = np.ndarray
_copyto = np.copyto
_PARALLEL_BYTES = 1 << 20  # below this one thread copies as fast


# ---- fresh results -----------------------------------------------------------------------------------
def contiguous_strides(shape: Any, itemsize: int) -> list[int]:
    """PyTorch's contiguous byte strides (size-0 and size-1 dims count as 1)."""
    strides = []
    acc = itemsize
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return strides[::-1]


def fresh(arr: np.ndarray) -> Tensor:
    """``wrap`` for a new result; empty arrays get PyTorch's contiguous strides (NumPy zeroes them)."""
    if arr.__class__ is _ndarray and arr.size == 0 and arr.ndim:
        arr = _ndarray(arr.shape, arr.dtype, arr if arr.flags.c_contiguous else np.empty(0, arr.dtype), 0,
                       contiguous_strides(arr.shape, arr.itemsize))
    return C.wrap(arr)


# ---- allocation -----------------------------------------------------------------------------------
def _negative_dim(size: Any) -> RuntimeError:
    bad = next(s for s in size if s < 0)
    return RuntimeError(f"Trying to create tensor with negative dimension {bad}: {list(size)}")


def _memory_format_name(memory_format: Any) -> str:
    if memory_format is None:
        return ""
    name = getattr(memory_format, "name", None) or str(memory_format)
    return name.rsplit(".", 1)[-1]


@TABLE.impl("aten::empty.memory_format")
def empty(size, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    npdt = (dtype or D.get_default_dtype()).numpy_dtype
    if memory_format is not None and memory_format != "contiguous_format":
        fmt = _memory_format_name(memory_format)
        if fmt in ("channels_last", "channels_last_3d"):
            return _empty_channels_last(size, dtype or D.get_default_dtype(), fmt)
    try:
        return fresh(np.empty(size, dtype=npdt))
    except ValueError:
        if any(s < 0 for s in size):
            raise _negative_dim(size) from None
        raise


def _empty_channels_last(size: Any, dtype: D.dtype, fmt: str) -> Tensor:
    rank = 4 if fmt == "channels_last" else 5
    if len(size) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt} format")
    if any(s < 0 for s in size):
        raise _negative_dim(size)
    perm = (0, *range(2, rank), 1)  # N, (D,) H, W, C in memory
    root = np.empty([size[i] for i in perm], dtype=dtype.numpy_dtype)
    inverse = [perm.index(i) for i in range(rank)]
    view = root.transpose(inverse)
    return make_tensor(view, dtype, C.CPU, C.KEYSET, C.storage(root))


def storage_elements(size: Any, stride: Any) -> int:
    """Elements a strided tensor spans from its first element (0 when it has none)."""
    n = 1
    for s, st in zip(size, stride):
        if s == 0:
            return 0
        n += (s - 1) * st
    return n


@TABLE.impl("aten::empty_strided")
def empty_strided(size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    dt = dtype or D.get_default_dtype()
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})")
    if any(s < 0 for s in size) or any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    npdt = dt.numpy_dtype
    item = npdt.itemsize
    flat = np.empty(storage_elements(size, stride), dtype=npdt)
    byte_strides = [st * item for st in stride]
    try:
        view = _ndarray(size, npdt, flat, 0, byte_strides)
    except (ValueError, TypeError):
        view = np.lib.stride_tricks.as_strided(flat, size, byte_strides)
    return make_tensor(view, dt, C.CPU, C.KEYSET, C.storage(flat))


# ---- copy_ --------------------------------------------------------------------------------------------
def _host_data(t: Tensor) -> np.ndarray:
    if t._device.type == C.CPU.type:
        return t._data
    return backend_for(t._device.type).to_host(t)


def check_broadcast_into(dst_shape: tuple[int, ...], src_shape: tuple[int, ...]) -> None:
    """PyTorch's TensorIterator errors for writing ``src`` into ``dst`` (src must broadcast to dst)."""
    n = max(len(dst_shape), len(src_shape))
    a = (1,) * (n - len(dst_shape)) + tuple(dst_shape)
    b = (1,) * (n - len(src_shape)) + tuple(src_shape)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}")
    if tuple(out) != tuple(dst_shape):
        raise RuntimeError(f"output with shape {list(dst_shape)} doesn't match the broadcast shape {out}")


_INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)
_PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)


def check_internal_overlap(arr: np.ndarray) -> None:
    """Raise like PyTorch when a written-to array has a broadcast (stride 0, size > 1) dim."""
    strides = arr.strides
    if 0 in strides:
        for s, st in zip(arr.shape, strides):
            if st == 0 and s > 1:
                raise RuntimeError(_INTERNAL_OVERLAP)


def _non_overlapping_dense(arr: np.ndarray) -> bool:
    dims = sorted((abs(st), s) for s, st in zip(arr.shape, arr.strides) if s != 1)
    expected = arr.itemsize
    for st, s in dims:
        if st != expected:
            return False
        expected *= s
    return True


def _byte_range(arr: np.ndarray) -> tuple[int, int]:
    start = arr.__array_interface__["data"][0]
    lo = hi = start
    for s, st in zip(arr.shape, arr.strides):
        if st < 0:
            lo += (s - 1) * st
        else:
            hi += (s - 1) * st
    return lo, hi + arr.itemsize


def check_partial_overlap(dst: np.ndarray, src: np.ndarray) -> None:
    """PyTorch's assert_no_partial_overlap for two arrays known to share a storage."""
    if dst is src or dst.size == 0 or src.size == 0:
        return
    if not (_non_overlapping_dense(dst) and _non_overlapping_dense(src)):
        return  # PyTorch: TOO_HARD, no error
    a0, a1 = _byte_range(dst)
    b0, b1 = _byte_range(src)
    if (a0, a1) == (b0, b1):
        return
    if a0 < b1 and b0 < a1:
        raise RuntimeError(_PARTIAL_OVERLAP)


def copy_into(dst: np.ndarray, data: Any) -> None:
    """``np.copyto`` with PyTorch's cast semantics (complex -> real warns; float -> int silently)."""
    dkind = dst.dtype.kind
    skind = data.dtype.kind if isinstance(data, _ndarray) else ""
    if skind == "c" and dkind == "b":  # complex -> bool is "nonzero", imaginary part included (no warning)
        data = data != 0
        skind = "b"
    elif skind == "c" and dkind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
        data = data.real
        skind = "f"
    if skind == "f" and dkind in "iub":
        with np.errstate(invalid="ignore", over="ignore"):
            _copyto(dst, data, casting="unsafe")
        return
    _copyto(dst, data, casting="unsafe")


@TABLE.impl("aten::copy_")
def copy_(self, src, non_blocking=False):
    # (The memory-overlap checks PyTorch makes on self and src are the core's, made once for every
    # backend before this runs; composites also copy_ into targets PyTorch lets them write.)
    dst = self._data
    if isinstance(src, Tensor):
        data = src._data if src._device is self._device else _host_data(src)
        if data.shape != dst.shape:
            check_broadcast_into(dst.shape, data.shape)
    else:  # a Python number
        dst.fill(scalar_as(src, dst.dtype))
        return self
    if data.dtype is dst.dtype and dst.nbytes >= _PARALLEL_BYTES and P.copy(dst, data):
        return self  # a large same-dtype copy on the C thread pool
    copy_into(dst, data)
    return self


# ---- fill_ ----------------------------------------------------------------------------------------------
_CPP_NAMES = {
    "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "bool": "bool",
    "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e5m2": "c10::Float8_e5m2",
}
_F32_MAX = float(np.finfo(np.float32).max)
_INF = float("inf")
_FLOAT_MAX = {d.name: D.finfo(d).max for d in (D.float16, D.bfloat16, D.float32, D.float64, *D.FLOAT8_DTYPES)}


def _overflow(dtype: D.dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_CPP_NAMES[dtype.name]} without overflow")


def check_scalar_fits(value: Any, dtype: D.dtype) -> None:
    """PyTorch's checked Scalar conversion (c10::overflows) for fill-like ops."""
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        raise OverflowError("int too big to convert")
    cat = dtype._category
    if cat == 0:  # bool: any value
        return
    if isinstance(value, complex):
        if cat < 3 and value.imag != 0:
            raise _overflow(dtype)
        if cat < 3:
            value = value.real
        else:
            if dtype is D.complex64 and any(abs(v) > _F32_MAX and v == v and abs(v) != float("inf") for v in (value.real, value.imag)):
                raise _overflow(dtype)
            return
    if cat == 1:
        info = np.iinfo(dtype.numpy_dtype)
        v = value
        if v != v:  # NaN has no integer value: c10's checked conversion refuses it
            raise _overflow(dtype)
        if dtype is D.uint8:
            # c10::overflows: an integer may wrap (-1 -> 255), a float must lie in [0, 255]
            if v > info.max or (v < 0 and (isinstance(v, float) or -v > info.max)):
                raise _overflow(dtype)
        elif v > info.max or v < info.min:
            raise _overflow(dtype)
        return
    if cat == 2 and dtype is not D.float64 or dtype is D.complex64:
        v = float(value)
        limit = _F32_MAX if dtype is D.complex64 else _FLOAT_MAX[dtype.name]
        if v == v and abs(v) != _INF and abs(v) > limit:
            raise _overflow(dtype)


def scalar_as(value: Any, npdt: np.dtype) -> Any:
    """A Python number converted to ``npdt`` the way PyTorch's static_cast does (ints wrap)."""
    kind = npdt.kind
    if kind in "iu":
        if isinstance(value, complex):
            value = value.real
        if isinstance(value, float):
            if value != value or abs(value) == float("inf"):
                with np.errstate(invalid="ignore"):
                    return np.array(value).astype(npdt)[()]  # undefined in PyTorch; NumPy's cast
            value = int(value)  # truncation toward zero
        bits = npdt.itemsize * 8
        value &= (1 << bits) - 1
        if kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    if kind == "b":
        return bool(value)
    if kind != "c" and isinstance(value, complex):
        return value.real
    return value


@TABLE.impl("aten::fill_.Scalar")
def fill_(self, value):
    data = self._data
    dt = self._dtype
    if value.__class__ is float and dt._category == 2:
        if dt is not D.float64 and _FLOAT_MAX[dt.name] < abs(value) < _INF:
            if data.size != 1 or dt is D.float32:  # one float16/bfloat16 element: torch's scalar_fill rounds
                raise _overflow(dt)
            with np.errstate(over="ignore"):
                data.fill(value)
            return self
        data.fill(value)
        return self
    check_scalar_fits(value, dt)
    data.fill(scalar_as(value, data.dtype))
    return self


@TABLE.impl("aten::fill_.Tensor")
def fill_tensor_(self, value):
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    copy_into(self._data, _host_data(value))
    return self
