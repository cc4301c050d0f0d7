"""cpu kernels: joining and indexing (``cat``, ``gather``, ``scatter*``, ``index_select``, ``nonzero``,
``index.Tensor``, ``index_put``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from torchplug._ops import composites as CP
from torchplug._base import dtype as D
from torchplug._tensor.tensor import Storage, Tensor, _wrap_dim, make_tensor
from torchplug.library import KernelTable

from .. import _common as C
from .core import check_internal_overlap, check_scalar_fits, fresh, scalar_as

TABLE = KernelTable("CPU")

_wrap = fresh
_ndarray = np.ndarray
_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))


def _host(t: Tensor) -> np.ndarray:
    if t._device.type == C.CPU.type:
        return t._data
    from torchplug._runtime.backends import backend_for

    return backend_for(t._device.type).to_host(t)


# ---- cat ------------------------------------------------------------------------------------------------
@TABLE.impl("aten::cat")
def cat(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    first = tensors[0]
    if len(tensors) == 1:
        data = first._data
        if data.ndim == 0:
            raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
        if data.shape != (0,):  # (a legacy empty 1-D tensor is skipped: no dim to wrap against)
            _wrap_dim(dim, data.ndim)
        return _wrap(data.copy())
    dtypes = {t._dtype for t in tensors}
    dt = first._dtype
    if len(dtypes) > 1:
        for t in tensors[1:]:
            dt = D.promote_types(dt, t._dtype)
    arrays = []
    ref = None
    for i, t in enumerate(tensors):
        data = _host(t)
        if data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if data.ndim == 1 and data.shape[0] == 0:
            continue  # legacy: empty 1-D tensors are skipped
        if ref is None:
            ref = (i, data)
        arrays.append((i, data))
    npdt = dt.numpy_dtype
    if ref is None:
        return _wrap(np.empty((0,), npdt))
    n = ref[1].ndim
    d = _wrap_dim(dim, n)
    shape = ref[1].shape
    for i, data in arrays:
        if data.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and {data.ndim}")
        s = data.shape
        if s != shape:
            for k in range(n):
                if k != d and s[k] != shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size {shape[k]} but got size "
                        f"{s[k]} for tensor number {i} in the list."
                    )
    if any(a.dtype != npdt for _, a in arrays):
        return _wrap(np.concatenate([a for _, a in arrays], axis=d, dtype=npdt, casting="unsafe"))
    return _wrap(np.concatenate([a for _, a in arrays], axis=d))


# ---- gather / scatter ------------------------------------------------------------------------------------
def _index_array(op: str, index: Tensor) -> np.ndarray:
    idx = index._data
    if idx.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    return idx


def _check_bounds(idx: np.ndarray, size: int, dim: int) -> None:
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < 0 or hi >= size:
            bad = int(lo if lo < 0 else hi)
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _grid(idx: np.ndarray, d: int) -> tuple[Any, ...]:
    """Advanced-index tuple addressing ``target[i0, .., idx[i], .., in]`` for every index position."""
    n = idx.ndim
    parts = []
    for k in range(n):
        if k == d:
            parts.append(idx)
        else:
            shape = [1] * n
            shape[k] = idx.shape[k]
            parts.append(np.arange(idx.shape[k]).reshape(shape))
    return tuple(parts)


@TABLE.impl("aten::gather")
def gather(self, dim, index, sparse_grad=False):
    data = self._data
    n = data.ndim
    d = _wrap_dim(dim, n)
    if index._data.size == 0:  # PyTorch's meta function: an empty index is checked for nothing else
        return _wrap(np.empty(index._data.shape, data.dtype))
    idx = _index_array("gather", index)
    if n == 0:
        data = data.reshape(1)
    if idx.ndim == 0:
        idx = idx.reshape(1)
    if idx.ndim != max(n, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ishape, sshape = idx.shape, data.shape
    for k in range(idx.ndim):
        if k != d and ishape[k] > sshape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(ishape)} to be no larger than self "
                f"{list(sshape)} apart from dimension {d}"
            )
    _check_bounds(idx, sshape[d], d)
    if idx.size == 0:
        out = np.empty(ishape, data.dtype)
    else:
        out = data[_grid(idx, d)]
    return _wrap(out.reshape(index._data.shape))


def _scatter_checks(self: Tensor, dim: int, index: Tensor, src: Tensor | None) -> tuple[np.ndarray, np.ndarray, int]:
    data = self._data
    idx = _index_array("scatter", index)
    n = data.ndim
    d = _wrap_dim(dim, n)
    if src is not None and src._dtype is not self._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if idx.size:
        if max(idx.ndim, 1) != max(n, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        if src is not None and max(src._data.ndim, 1) != max(idx.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    return data, idx, d


def _scatter_target(data: np.ndarray, idx: np.ndarray, d: int, src: np.ndarray | None) -> tuple[tuple[Any, ...], Any]:
    """(index tuple into self, values) for scatter along ``d``, with PyTorch's shape checks."""
    view = data.reshape(1) if data.ndim == 0 else data
    if idx.ndim == 0:
        idx = idx.reshape(1)
    if src is not None and src.ndim == 0:
        src = src.reshape(1)
    ishape, sshape = idx.shape, view.shape
    bad = any(k != d and ishape[k] > sshape[k] for k in range(idx.ndim))
    if src is not None:
        bad = bad or any(ishape[k] > src.shape[k] for k in range(idx.ndim))
    if bad:
        msg = f"Expected index {list(ishape)} to be no larger than self {list(sshape)} apart from dimension {d}"
        if src is not None:
            msg += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(msg)
    _check_bounds(idx, sshape[d], d)
    values = None
    if src is not None:
        values = src[tuple(slice(0, s) for s in ishape)]
    return _grid(idx, d), values


def _scatter_into(self: Tensor, dim: int, index: Tensor, src: Any, *, add: bool = False) -> None:
    is_tensor = isinstance(src, Tensor)
    data, idx, d = _scatter_checks(self, dim, index, src if is_tensor else None)
    if idx.size == 0:
        return
    check_internal_overlap(data)
    target = data.reshape(1) if data.ndim == 0 else data
    where, values = _scatter_target(data, idx, d, _host(src) if is_tensor else None)
    if not is_tensor:
        check_scalar_fits(src, self._dtype)
        values = scalar_as(src, data.dtype)
    if add:
        np.add.at(target, where, values)
    else:
        target[where] = values


@TABLE.impl("aten::scatter.src")
def scatter_src(self, dim, index, src):
    out = _wrap(self._data.copy())
    _scatter_into(out, dim, index, src)
    return out


@TABLE.impl("aten::scatter.value")
def scatter_value(self, dim, index, value):
    out = _wrap(self._data.copy())
    _scatter_into(out, dim, index, value)
    return out


@TABLE.impl("aten::scatter_add")
def scatter_add(self, dim, index, src):
    out = _wrap(self._data.copy())
    _scatter_into(out, dim, index, src, add=True)
    return out


@TABLE.impl("aten::scatter_.src")
def scatter__src(self, dim, index, src):
    _scatter_into(self, dim, index, src)
    return self


@TABLE.impl("aten::scatter_.value")
def scatter__value(self, dim, index, value):
    _scatter_into(self, dim, index, value)
    return self


@TABLE.impl("aten::scatter_add_")
def scatter_add_(self, dim, index, src):
    _scatter_into(self, dim, index, src, add=True)
    return self


# ---- index_select / nonzero ---------------------------------------------------------------------------------
@TABLE.impl("aten::index_select")
def index_select(self, dim, index):
    data = self._data
    idx = index._data
    n = data.ndim
    d = _wrap_dim(dim, n)
    # PyTorch's order (index_select_out_cpu_): dim, index rank, one index for a 0-dim self, index dtype
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if n == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    if idx.dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = data.shape[d] if n else 1
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if n > 1 and data.size == 0 and size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        if lo < 0 or hi >= size:  # (negative indices too: index_select does not wrap them)
            if n > 1 and (d == 1 or data.size == 0):  # PyTorch's dim-1 and empty-self paths: other words
                flat = idx.reshape(-1)
                bad = int(flat[np.flatnonzero((flat < 0) | (flat >= size))[0]])
                raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
            raise IndexError("index out of range in self")
    if n == 0:  # a 0-dim self gives a 0-dim result
        return _wrap(data.reshape(1)[idx.reshape(-1)].reshape(()) if idx.size == 1 else data.reshape(1)[idx.reshape(-1)])
    return _wrap(np.take(data, idx.reshape(-1), axis=d))


@TABLE.impl("aten::nonzero")
def nonzero(self):
    data = self._data
    n = data.ndim
    coords = np.nonzero(data) if n else ((np.zeros(int(bool(data)), np.int64)),)
    count = coords[0].shape[0]
    buf = np.empty(n * count, np.int64)
    # PyTorch's layout: an (ndim, count) row-major buffer seen transposed, strides (1, count).
    out = _ndarray((count, n), np.int64, buf, 0, (8, 8 * count))
    for k in range(n):
        out[:, k] = coords[k]
    return make_tensor(out, D.int64, C.CPU, C.KEYSET, C.storage(buf))


# ---- advanced indexing --------------------------------------------------------------------------------------
def _index_tuple(self: Tensor, indices: Any) -> tuple[tuple[Any, ...], list[int]]:
    """NumPy index for PyTorch's ``indices`` (None = full slice), with PyTorch's checks and messages.

    Also returns, per advanced index tensor, the self dim it addresses (for bounds messages).
    """
    data = self._data
    if not indices:
        raise IndexError("at least one index must be provided")
    used = 0
    for ix in indices:
        if ix is None:
            used += 1
        elif ix._dtype is D.bool_ or ix._dtype is D.uint8:
            used += max(ix._data.ndim, 1) if ix._data.ndim else 1
        else:
            used += 1
    if used > data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {data.ndim} (got {len(indices)})")
    parts: list[Any] = []
    dim = 0
    for ix in indices:
        if ix is None:
            parts.append(slice(None))
            dim += 1
            continue
        arr = _host(ix)
        if ix._dtype is D.bool_ or ix._dtype is D.uint8:
            if ix._dtype is D.uint8:
                warnings.warn(
                    "indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                    UserWarning, stacklevel=3,
                )
                arr = arr.astype(bool)
            for k, s in enumerate(arr.shape):
                if dim + k >= data.ndim or s != data.shape[dim + k]:
                    raise IndexError(
                        f"The shape of the mask {list(arr.shape)} at index {k} does not match the shape of the indexed "
                        f"tensor {list(data.shape)} at index {dim + k}"
                    )
            parts.append(arr)
            dim += arr.ndim
        elif arr.dtype == np.int64 or arr.dtype == np.int32:  # (Python indexing converts other ints first)
            parts.append(arr if arr.dtype == np.int64 else arr.astype(np.int64))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return tuple(parts), []


def _check_int_bounds(data: np.ndarray, parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """PyTorch's checks after masks become index tensors: they must broadcast, then be in range.

    Returns the parts to index NumPy with: when the indices broadcast to no element PyTorch reads
    none and checks no bound, so each advanced index becomes an empty one of that shape (NumPy
    would check the bounds of the given values)."""
    shape = _check_broadcast(parts)
    if shape is not None and 0 in shape:
        return _empty_parts(parts, shape)
    _check_indexed_empty(data, parts, shape)
    if data.size == 0:  # the result has no element: PyTorch's kernel checks no bound
        return tuple(p if p.__class__ is slice or p.dtype == np.bool_ else np.zeros_like(p) for p in parts)
    _check_in_range(data, parts)
    return parts


def _check_indexed_empty(data: np.ndarray, parts: tuple[Any, ...], shape: tuple[int, ...] | None) -> None:
    """AdvancedIndex's check: a dim of size 0 indexed by a non-empty index has no valid index."""
    if shape is None or 0 in shape:
        return
    dim = 0
    for p in parts:
        n = 1 if p.__class__ is slice or p.dtype != np.bool_ else p.ndim
        if p.__class__ is not slice and 0 in data.shape[dim:dim + n]:
            raise IndexError("index is out of bounds for dimension with size 0")
        dim += n


def _empty_parts(parts: tuple[Any, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    empty = np.zeros(shape, np.int64)
    out: list[Any] = []
    for p in parts:
        if p.__class__ is slice:
            out.append(p)
        elif p.dtype == np.bool_:
            out.extend([empty] * max(p.ndim, 1) if p.ndim else [p])
        else:
            out.append(empty)
    return tuple(out)


def _check_broadcast(parts: tuple[Any, ...]) -> tuple[int, ...] | None:
    """The shape the advanced indices broadcast to (None with fewer than one), or PyTorch's IndexError."""
    shapes = []
    for p in parts:
        if p.__class__ is slice:
            continue
        if p.dtype == np.bool_:
            if p.ndim:
                shapes.extend([(int(np.count_nonzero(p)),)] * p.ndim)
        else:
            shapes.append(p.shape)
    if not shapes:
        return None
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        listed = ", ".join(str(list(s)) for s in shapes)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes {listed}") from None


def _check_in_range(data: np.ndarray, parts: tuple[Any, ...]) -> None:
    dim = 0
    ordinal = 0
    for p in parts:
        if p.__class__ is slice:
            dim += 1
            continue
        if p.dtype == np.bool_:
            dim += p.ndim
            ordinal += p.ndim
            continue
        size = data.shape[dim]
        if p.size:
            lo, hi = p.min(), p.max()
            if lo < -size or hi >= size:
                bad = int(lo if lo < -size else hi)
                raise IndexError(f"index {bad} is out of bounds for dimension {ordinal} with size {size}")
        dim += 1
        ordinal += 1


@TABLE.impl("aten::index.Tensor")
def index(self, indices):
    data = self._data
    parts, _ = _index_tuple(self, indices)
    parts = _check_int_bounds(data, parts)
    out = data[parts]
    if all(p.__class__ is slice for p in parts):  # only full slices: NumPy returned a view
        out = out.copy()
    # PyTorch's result is always contiguous (NumPy's may be transposed when slices come first).
    return _wrap(out if out.flags.c_contiguous else np.ascontiguousarray(out))


def _masked_fill_mask(self: Tensor, indices: Any, values: Tensor) -> np.ndarray | None:
    """PyTorch's canDispatchToMaskedFill: a one-element value (on the cpu) and one bool/uint8 mask as
    the only index write as ``masked_fill_`` with ``values.item()``, converted to self's dtype (so its
    dtype need not match).  Returns the mask broadcast to self's shape, or None for the general path."""
    if values._data.size != 1 or values._device.type != C.CPU.type:
        return None
    shape = self._data.shape
    mask = None
    dim = 0
    for index in indices:
        if index is None:
            dim += 1
            continue
        if index._dtype not in (D.bool_, D.uint8) or index._device != self._device or mask is not None:
            return None
        mask = index
        msize = index._data.shape
        if dim + len(msize) > len(shape):
            return None  # too many indices: the general path says so
        for j, size in enumerate(msize):
            if size != shape[dim + j]:
                raise IndexError(
                    f"The shape of the mask {list(msize)} at index {j} does not match the shape of the indexed "
                    f"tensor {list(shape)} at index {dim + j}"
                )
        dim += len(msize)
        end = dim  # the dims after the mask (trailing None entries included) are kept whole
    if mask is None:
        return None
    if mask._dtype is not D.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    m = _host(mask)
    return np.broadcast_to(m.reshape(m.shape + (1,) * (len(shape) - end)), shape)


def _index_put_into(self: Tensor, indices: Any, values: Tensor, accumulate: bool) -> None:
    data = self._data
    if not accumulate:
        mask = _masked_fill_mask(self, indices, values)
        if mask is not None:
            np.copyto(data, C.scalar_to(_host(values).item(), self._dtype), where=mask, casting="unsafe")
            return
    parts, _ = _index_tuple(self, indices)  # (the indices' own checks come first in PyTorch too)
    shape = _check_broadcast(parts)
    _check_indexed_empty(data, parts, shape)
    if values._dtype is not self._dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {CP.scalar_type_name(self._dtype)} for "
            f"the destination and {CP.scalar_type_name(values._dtype)} for the source."
        )
    # the value's shape is checked against the result's before the kernel checks the bounds (in-range
    # stand-ins give that shape)
    probe = _empty_parts(parts, shape) if shape is not None and 0 in shape else tuple(
        p if p.__class__ is slice or p.dtype == np.bool_ else np.zeros_like(p) for p in parts)
    vals = _host(values)
    target_shape = data[probe].shape
    try:
        np.broadcast_shapes(vals.shape, target_shape)
        if np.broadcast_shapes(vals.shape, target_shape) != target_shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(vals.shape)} cannot be broadcast to indexing result of shape "
            f"{list(target_shape)}"
        ) from None
    parts = _check_int_bounds(data, parts)
    # (PyTorch only warns for an expanded self here; the core issues that warning.)
    if accumulate:
        np.add.at(data, parts, vals)
    else:
        data[parts] = vals


@TABLE.impl("aten::index_put")
def index_put(self, indices, values, accumulate=False):
    out = _wrap(self._data.copy())
    _index_put_into(out, indices, values, accumulate)
    return out


@TABLE.impl("aten::index_put_")
def index_put_(self, indices, values, accumulate=False):
    _index_put_into(self, indices, values, accumulate)
    return self

