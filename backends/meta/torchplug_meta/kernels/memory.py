"""meta kernels for allocation, copies, fills and strided views.

Allocation records sizes and strides only, so ``empty(10**4, 10**4, 10**4, device='meta')`` is
instant.  ``copy_`` into a meta tensor only checks broadcasting; copying *out of* one raises,
as there is no data.  Views share the source's Storage; the common view ops have direct
kernels here (the core's composites would reach ``as_strided`` through the dispatcher) and
fall back to the composite for anything unusual, so error messages stay the core's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchplug._ops import composites as CP
from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .._backend import NO_DATA

TABLE = KernelTable("Meta")


def _check_sizes(size: Sequence[int]) -> None:
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")


def _memory_format(memory_format: Any) -> str:
    return "preserve_format" if memory_format is None else str(memory_format).rsplit(".", 1)[-1]


def _format_strides(size: tuple[int, ...], memory_format: Any) -> tuple[int, ...] | None:
    """Strides for channels_last / channels_last_3d, None for the contiguous default."""
    fmt = _memory_format(memory_format)
    if fmt == "channels_last":
        if len(size) != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        perm = (0, 2, 3, 1)
    elif fmt == "channels_last_3d":
        if len(size) != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        perm = (0, 2, 3, 4, 1)
    else:
        return None
    physical = C.contiguous_strides(tuple(size[p] for p in perm))
    strides = [0] * len(size)
    for i, p in enumerate(perm):
        strides[p] = physical[i]
    return tuple(strides)


# ---- allocation ----------------------------------------------------------------------------------------
@TABLE.impl("aten::empty.memory_format")
def empty(size: Sequence[int], dtype: D.dtype | None = None, layout: Any = None, device: Any = None,
          pin_memory: Any = None, memory_format: Any = None) -> C.Tensor:
    _check_sizes(size)
    size = tuple(size)
    return C.new(size, dtype or D.get_default_dtype(), _format_strides(size, memory_format))


@TABLE.impl("aten::empty_strided")
def empty_strided(size: Sequence[int], stride: Sequence[int], dtype: D.dtype | None = None, layout: Any = None,
                  device: Any = None, pin_memory: Any = None) -> C.Tensor:
    if len(size) != len(stride):
        raise RuntimeError(
            f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})"
        )
    _check_sizes(size)
    return C.new(tuple(size), dtype or D.get_default_dtype(), tuple(stride))


# PyTorch's clone() defaults to preserve_format (the core's Tensor.contiguous() asks for
# contiguous_format explicitly), so None keeps the input's dim order as PyTorch does.
CLONE_DEFAULT_PRESERVES = True


@TABLE.impl("aten::clone")
def clone(self: C.Tensor, memory_format: Any = None) -> C.Tensor:
    if not C.is_meta(self):
        raise NotImplementedError(NO_DATA)
    fmt = _memory_format(memory_format) if memory_format is not None or CLONE_DEFAULT_PRESERVES else "contiguous"
    if fmt == "preserve_format":
        return C.new_like(self)
    return C.new(C.shape(self), self._dtype, _format_strides(C.shape(self), memory_format))


@TABLE.impl("aten::_to_copy")
def to_copy(self: C.Tensor, dtype: D.dtype | None = None, layout: Any = None, device: Any = None,
            pin_memory: Any = None, non_blocking: bool = False, memory_format: Any = None) -> C.Tensor:
    if device is not None and device.type != "meta":
        raise NotImplementedError(NO_DATA)  # from meta to a device with data
    dt = dtype or self._dtype
    fmt = _memory_format(memory_format)
    if fmt == "preserve_format":
        return C.new_like(self, dt)
    return C.new(C.shape(self), dt, _format_strides(C.shape(self), memory_format))


# ---- copies and fills ------------------------------------------------------------------------------------
@TABLE.impl("aten::copy_")
def copy_(self: C.Tensor, src: Any, non_blocking: bool = False) -> C.Tensor:
    if not C.is_meta(self):
        raise NotImplementedError(NO_DATA)
    if isinstance(src, C.Tensor):
        size = C.shape(self)
        target = C.broadcast_shapes(size, C.shape(src))
        if target != size:
            raise RuntimeError(f"output with shape {list(size)} doesn't match the broadcast shape {list(target)}")
    return self


@TABLE.impl("aten::fill_.Scalar")
def fill_(self: C.Tensor, value: Any) -> C.Tensor:
    return self


@TABLE.impl("aten::fill_.Tensor")
def fill_tensor(self: C.Tensor, value: C.Tensor) -> C.Tensor:
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    if not C.is_meta(self):
        raise NotImplementedError(NO_DATA)
    return self


# ---- views ------------------------------------------------------------------------------------------------
@TABLE.impl("aten::as_strided")
def as_strided(self: C.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> C.Tensor:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for s in stride:
        if s < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    _check_sizes(size)
    offset = self._data.offset if storage_offset is None else storage_offset
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    # Like PyTorch's meta tensors, the storage bound is not checked: meta storage holds no bytes.
    return C.view_of(self, size, stride, offset)


@TABLE.impl("aten::view.dtype")
def view_dtype(self: C.Tensor, dtype: D.dtype) -> C.Tensor:
    old, new_item = self._dtype.itemsize, dtype.itemsize
    size, stride, offset = list(C.shape(self)), list(C.strides(self)), self._data.offset
    if old == new_item:
        return C.view_of(self, size, stride, offset, dtype)
    names = f"to view {C.scalar_type_name(self._dtype)} as {C.scalar_type_name(dtype)} (different element sizes)"
    if not size:
        raise RuntimeError(f"self.dim() cannot be 0 {names}")
    if stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {names}, but got {stride[-1]}")
    if old > new_item:
        ratio = old // new_item
        size[-1] *= ratio
        stride = [s * ratio for s in stride[:-1]] + [1]
        offset *= ratio
    else:
        ratio = new_item // old
        if size[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {names}, but got {size[-1]}")
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {names}, but got {offset}")
        for i, s in enumerate(stride[:-1]):
            if s % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {names}, but got {s}")
        size[-1] //= ratio
        stride = [s // ratio for s in stride[:-1]] + [1]
        offset //= ratio
    return C.view_of(self, size, stride, offset, dtype)


# Direct view kernels: the fast path builds the view here; anything unusual goes to the core
# composite (which raises PyTorch's message or computes the view through as_strided above).
@TABLE.impl("aten::view")
def view(self: C.Tensor, size: Sequence[int]) -> C.Tensor:
    shape = CP.infer_size(size, self.numel())
    strides = CP.compute_view_strides(list(C.shape(self)), list(C.strides(self)), shape)
    if strides is None:
        return CP.view(self, size)
    return C.view_of(self, shape, strides, self._data.offset)


# (detach is the core composite: this alias, then unlinked from autograd so it never requires grad)
@TABLE.impl("aten::alias")
def alias(self: C.Tensor) -> C.Tensor:
    return C.view_of(self, C.shape(self), C.strides(self), self._data.offset)


@TABLE.impl("aten::permute")
def permute(self: C.Tensor, dims: Sequence[int]) -> C.Tensor:
    n = self.dim()
    wrapped = [d + n if d < 0 else d for d in dims]
    if len(dims) != n or sorted(wrapped) != list(range(n)):
        return CP.permute(self, dims)
    size, stride = C.shape(self), C.strides(self)
    return C.view_of(self, [size[d] for d in wrapped], [stride[d] for d in wrapped], self._data.offset)


@TABLE.impl("aten::transpose.int")
def transpose(self: C.Tensor, dim0: int, dim1: int) -> C.Tensor:
    n = self.dim()
    if n == 0:
        return CP.transpose(self, dim0, dim1)
    d0, d1 = C.wrap_dim(dim0, n), C.wrap_dim(dim1, n)
    size, stride = list(C.shape(self)), list(C.strides(self))
    size[d0], size[d1] = size[d1], size[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    return C.view_of(self, size, stride, self._data.offset)


@TABLE.impl("aten::t")
def t(self: C.Tensor) -> C.Tensor:
    n = self.dim()
    if n > 2:
        return CP.t(self)
    return transpose(self, 0, 1) if n == 2 else alias(self)


@TABLE.impl("aten::expand")
def expand(self: C.Tensor, size: Sequence[int], implicit: bool = False) -> C.Tensor:
    old_size, old_stride = C.shape(self), C.strides(self)
    lead = len(size) - len(old_size)
    if lead < 0:
        return CP.expand(self, size, implicit)
    new_size, new_stride = list(size), [0] * len(size)
    for i, s in enumerate(size):
        j = i - lead
        if j < 0:
            if s < 0:
                return CP.expand(self, size, implicit)
            continue
        if s == -1:
            s = new_size[i] = old_size[j]
        if old_size[j] == s:
            new_stride[i] = old_stride[j]
        elif old_size[j] != 1:
            return CP.expand(self, size, implicit)
    return C.view_of(self, new_size, new_stride, self._data.offset)


@TABLE.impl("aten::unsqueeze")
def unsqueeze(self: C.Tensor, dim: int) -> C.Tensor:
    n = self.dim()
    d = C.wrap_dim(dim, n + 1)
    size, stride = list(C.shape(self)), list(C.strides(self))
    stride.insert(d, stride[d] * size[d] if d < n else 1)
    size.insert(d, 1)
    return C.view_of(self, size, stride, self._data.offset)


@TABLE.impl("aten::squeeze")
def squeeze(self: C.Tensor, dim: Sequence[int] | None = None) -> C.Tensor:
    n = self.dim()
    size, stride = C.shape(self), C.strides(self)
    dims = set(range(n)) if dim is None else {C.wrap_dim(d, n) for d in dim}
    keep = [i for i in range(n) if not (i in dims and size[i] == 1)]
    return C.view_of(self, [size[i] for i in keep], [stride[i] for i in keep], self._data.offset)


@TABLE.impl("aten::select.int")
def select(self: C.Tensor, dim: int, index: int) -> C.Tensor:
    n = self.dim()
    if n == 0:
        return CP.select(self, dim, index)
    d = C.wrap_dim(dim, n)
    size, stride = list(C.shape(self)), list(C.strides(self))
    if not -size[d] <= index < size[d]:
        return CP.select(self, dim, index)
    if index < 0:
        index += size[d]
    offset = self._data.offset + index * stride[d]
    del size[d], stride[d]
    return C.view_of(self, size, stride, offset)


@TABLE.impl("aten::slice.Tensor")
def slice_(self: C.Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> C.Tensor:
    n = self.dim()
    if n == 0 or step <= 0:
        return CP.slice_(self, dim, start, end, step)
    d = C.wrap_dim(dim, n)
    size, stride = list(C.shape(self)), list(C.strides(self))
    lo, hi, _ = slice(start, end, 1).indices(size[d])
    hi = max(hi, lo)
    offset = self._data.offset + lo * stride[d]
    size[d] = (hi - lo + step - 1) // step
    stride[d] *= step
    return C.view_of(self, size, stride, offset)
