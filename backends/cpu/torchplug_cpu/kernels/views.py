"""cpu kernels: strided views.

``as_strided`` views the storage's root buffer directly.  The other view ops are direct
kernels for speed: the common, valid case is a NumPy view of the tensor's array; anything
unusual (bad dims, odd shapes) falls through to the core composite, which validates with
PyTorch's messages and materializes through ``as_strided``.  So error behaviour is the
composites' by construction.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._ops import composites as CP
from torchplug._tensor.tensor import make_tensor
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("CPU")

_ndarray = np.ndarray
_np_as_strided = np.lib.stride_tricks.as_strided
_wrap_view = C.wrap_view


# ---- the storage's root buffer ------------------------------------------------------------------
class _Span:
    """An ``__array_interface__`` over a raw byte range (keeps ``owner`` alive)."""

    __slots__ = ("__array_interface__", "owner")

    def __init__(self, ptr: int, nbytes: int, owner: Any, readonly: bool) -> None:
        self.__array_interface__ = {"data": (ptr, readonly), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        self.owner = owner


def root_buffer(storage: Any) -> tuple[np.ndarray, int]:
    """(contiguous buffer covering the storage, byte position of the storage's element 0 in it).

    The root is the array the storage was created with; it is normally C-contiguous and is
    then its own buffer.  A root that is not (``from_numpy`` of a transposed or sliced array)
    is covered by a byte span from its lowest to its highest address.
    """
    root = storage.data
    if root.flags.c_contiguous:
        return root, 0
    if root.size == 0:
        return np.empty(0, np.uint8), 0
    lo = hi = 0
    for s, st in zip(root.shape, root.strides):
        if st < 0:
            lo += (s - 1) * st
        else:
            hi += (s - 1) * st
    ptr = root.__array_interface__["data"][0]
    span = _Span(ptr + lo, hi - lo + root.itemsize, root, not root.flags.writeable)
    return np.asarray(span), -lo


def _array_at(buf: np.ndarray, byte_offset: int, shape: Any, npdt: np.dtype, byte_strides: Any) -> np.ndarray:
    """An array over ``buf`` at ``byte_offset`` (bounds already checked by the caller)."""
    try:
        return _ndarray(shape, npdt, buf, byte_offset, byte_strides)
    except (ValueError, TypeError):
        # Empty views may point past the end of the buffer (PyTorch allows any offset then).
        return _array_at_pointer(buf.__array_interface__["data"][0] + byte_offset, shape, npdt, byte_strides, buf)


def _array_at_pointer(ptr: int, shape: Any, npdt: np.dtype, byte_strides: Any, owner: Any) -> np.ndarray:
    """An array at a raw address (raw bytes first, then reinterpreted: works for every dtype)."""

    class _Iface:
        pass

    obj: Any = _Iface()
    obj.__array_interface__ = {
        "data": (ptr, not owner.flags.writeable), "shape": tuple(shape), "strides": tuple(byte_strides),
        "typestr": f"|V{npdt.itemsize}", "version": 3,
    }
    obj.owner = owner
    return np.asarray(obj).view(npdt)


# ---- as_strided -------------------------------------------------------------------------------------
@TABLE.impl("aten::as_strided")
def as_strided(self, size, stride, storage_offset=None):
    offset = C.storage_offset(self) if storage_offset is None else storage_offset
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 1
    for s, st in zip(size, stride):
        if st < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
        if s < 0:
            raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
        if s == 0:
            need = 0
        elif need:
            need += (s - 1) * st
    npdt = self._data.dtype
    item = npdt.itemsize
    buf, shift = root_buffer(self._storage)
    available = buf.nbytes - shift
    required = (offset + need) * item if need else 0
    if required > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize {item} "
            f"requiring a storage size of {required} are out of bounds for storage of size {available}"
        )
    arr = _array_at(buf, shift + offset * item, size, npdt, [st * item for st in stride])
    return _wrap_view(arr, self)


@TABLE.impl("aten::view.dtype")
def view_dtype(self, dtype):
    old = self._dtype
    if dtype is old:
        return _wrap_view(self._data.view(), self)
    data = self._data
    npdt = dtype.numpy_dtype
    if old.itemsize == dtype.itemsize:
        return _wrap_view(data.view(npdt), self)
    what = f"to view {CP.scalar_type_name(old)} as {CP.scalar_type_name(dtype)} (different element sizes)"
    if data.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = self.stride()
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    offset = C.storage_offset(self)
    size = list(data.shape)
    stride = list(strides)
    if old.itemsize > dtype.itemsize:
        ratio = old.itemsize // dtype.itemsize
        size[-1] *= ratio
        stride = [s * ratio for s in stride[:-1]] + [1]
        offset *= ratio
    else:
        ratio = dtype.itemsize // old.itemsize
        if size[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {size[-1]}")
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
        for i, s in enumerate(stride[:-1]):
            if s % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but got {s}")
        size[-1] //= ratio
        stride = [s // ratio for s in stride[:-1]] + [1]
        offset //= ratio
    item = dtype.itemsize
    buf, shift = root_buffer(self._storage)
    arr = _array_at(buf, shift + offset * item, size, npdt, [s * item for s in stride])
    return _wrap_view(arr, self)


# ---- direct view kernels ----------------------------------------------------------------------------
def restride(data: np.ndarray, shape: Any, byte_strides: Any) -> np.ndarray:
    """A view of ``data`` (from its first element) with new sizes and byte strides."""
    if data.flags.c_contiguous and data.size:
        try:
            return _ndarray(shape, data.dtype, data, 0, byte_strides)
        except (ValueError, TypeError):
            pass
    return _np_as_strided(data, shape, byte_strides)


@TABLE.impl("aten::view")
def view(self, size):
    data = self._data
    # NumPy's C-contiguous flag ignores the strides of size-1 dims, PyTorch's stride rule does not:
    # the NumPy reshape is only used when there are none.
    if data.flags.c_contiguous and data.size and 1 not in data.shape:
        try:
            arr = data.reshape(size)
        except (ValueError, TypeError):
            return CP.view(self, size)  # raises PyTorch's error
        return _wrap_view(arr, self)
    shape = CP.infer_size(size, self.numel())
    item = data.itemsize
    strides = CP.compute_view_strides(data.shape, [s // item for s in data.strides], shape)
    if strides is None:
        return CP.view(self, size)  # raises
    return _wrap_view(restride(data, shape, [s * item for s in strides]), self)


@TABLE.impl("aten::permute")
def permute(self, dims):
    data = self._data
    if len(dims) == data.ndim:
        try:
            arr = data.transpose(dims)
        except (ValueError, TypeError, IndexError):
            pass
        else:
            return _wrap_view(arr, self)
    return CP.permute(self, dims)


@TABLE.impl("aten::transpose.int")
def transpose(self, dim0, dim1):
    data = self._data
    if data.ndim:
        try:
            arr = data.swapaxes(dim0, dim1)
        except (ValueError, TypeError, IndexError):
            pass
        else:
            return _wrap_view(arr, self)
    return CP.transpose(self, dim0, dim1)


@TABLE.impl("aten::t")
def t(self):
    data = self._data
    n = data.ndim
    if n == 2:
        return _wrap_view(data.T, self)
    if n < 2:
        return _wrap_view(data.view(), self)
    return CP.t(self)  # raises


@TABLE.impl("aten::expand")
def expand(self, size, implicit=False):
    data = self._data
    old = data.shape
    n = len(size)
    lead = n - len(old)
    if lead < 0:
        return CP.expand(self, size)
    if lead == 0 and tuple(size) == old:
        return _wrap_view(data.view(), self)
    old_strides = data.strides
    shape = []
    strides = []
    for i, s in enumerate(size):
        j = i - lead
        if j < 0:
            if s < 0:
                return CP.expand(self, size)
            shape.append(s)
            strides.append(0)
            continue
        o = old[j]
        if s == o or s == -1:
            shape.append(o)
            strides.append(old_strides[j])
        elif o == 1 and s >= 0:
            shape.append(s)
            strides.append(0)
        else:
            return CP.expand(self, size)  # raises
    return _wrap_view(restride(data, shape, strides), self)


@TABLE.impl("aten::squeeze")
def squeeze(self, dim=None):
    data = self._data
    if dim is None:
        return _wrap_view(data.squeeze(), self)
    n = data.ndim
    shape = data.shape
    axes = []
    for d in dim:
        if d < 0:
            d += n
        if not 0 <= d < n:
            return CP.squeeze(self, dim)  # 0-dim tensors and bad dims: the composite decides
        if shape[d] == 1:
            axes.append(d)
    return _wrap_view(data.squeeze(tuple(axes)) if axes else data.view(), self)


@TABLE.impl("aten::unsqueeze")
def unsqueeze(self, dim):
    data = self._data
    n = data.ndim
    d = dim + n + 1 if dim < 0 else dim
    if not 0 <= d <= n:
        return CP.unsqueeze(self, dim)  # raises
    shape = list(data.shape)
    if data.flags.c_contiguous and data.size and 1 not in shape:
        shape.insert(d, 1)
        return _wrap_view(data.reshape(shape), self)
    strides = list(data.strides)
    new_stride = strides[d] * shape[d] if d < n else data.itemsize
    shape.insert(d, 1)
    strides.insert(d, new_stride)
    return _wrap_view(restride(data, shape, strides), self)


@TABLE.impl("aten::select.int")
def select(self, dim, index):
    data = self._data
    n = data.ndim
    if n:
        d = dim + n if dim < 0 else dim
        if 0 <= d < n and -data.shape[d] <= index < data.shape[d]:
            if d == 0:
                return _wrap_view(data[index, ...], self)
            return _wrap_view(data[(slice(None),) * d + (index, Ellipsis)], self)
    return CP.select(self, dim, index)  # raises


@TABLE.impl("aten::slice.Tensor")
def slice_(self, dim=0, start=None, end=None, step=1):
    data = self._data
    n = data.ndim
    if n and step > 0:
        d = dim + n if dim < 0 else dim
        if 0 <= d < n:
            sl = slice(start, end, step)
            arr = data[sl] if d == 0 else data[(slice(None),) * d + (sl,)]
            if arr.shape[d]:
                return _wrap_view(arr, self)
            # Empty: NumPy resets the offset to 0, PyTorch keeps the clamped start; the composite does that.
    return CP.slice_(self, dim, start, end, step)  # raises


@TABLE.impl("aten::alias")
def alias(self):
    return _wrap_view(self._data.view(), self)


@TABLE.impl("aten::detach")
def detach(self):
    # Like PyTorch: shares storage and version counter, but is not a view for autograd (_base None).
    return make_tensor(self._data.view(), self._dtype, C.CPU, C.KEYSET, self._storage)


@TABLE.impl("aten::unfold")
def unfold(self, dimension, size, step):
    data = self._data
    n = data.ndim
    if n and step > 0 and size >= 0:
        d = dimension + n if dimension < 0 else dimension
        if 0 <= d < n and size <= data.shape[d]:
            shape = list(data.shape)
            strides = list(data.strides)
            new_stride = strides[d]
            shape[d] = (shape[d] - size) // step + 1
            strides[d] = new_stride * step
            return _wrap_view(restride(data, shape + [size], strides + [new_stride]), self)
    return CP.unfold(self, dimension, size, step)


@TABLE.impl("aten::diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    data = self._data
    n = data.ndim
    d1 = dim1 + n if dim1 < 0 else dim1
    d2 = dim2 + n if dim2 < 0 else dim2
    if not (0 <= d1 < n and 0 <= d2 < n and d1 != d2):
        return CP.diagonal(self, offset, dim1, dim2)  # raises
    shape, strides = data.shape, data.strides
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
        shift = (d2, offset)
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
        shift = (d1, -offset)
    if length == 0:
        return CP.diagonal(self, offset, dim1, dim2)  # PyTorch keeps the base offset here
    index = [slice(None)] * n
    index[shift[0]] = slice(shift[1], None)
    base = data[tuple(index)]
    keep = [i for i in range(n) if i != d1 and i != d2]
    new_shape = [shape[i] for i in keep] + [length]
    new_strides = [strides[i] for i in keep] + [strides[d1] + strides[d2]]
    return _wrap_view(restride(base, new_shape, new_strides), self)

