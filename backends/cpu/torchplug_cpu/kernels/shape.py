"""cpu kernels: shape and indexing primitives (``flip``, ``tril``/``triu``, ``index_add``/``index_copy``/
``index_fill``, ``take``, ``masked_scatter``, ``scatter_reduce``, ``searchsorted``, ``repeat_interleave``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops.composites import scalar_type_name
from torchplug._tensor.tensor import Tensor, _wrap_dim
from torchplug.library import KernelTable

from .. import _common as C
from .core import check_internal_overlap, check_scalar_fits, fresh, scalar_as
from .index import _host, _scatter_checks, _scatter_target

TABLE = KernelTable("CPU")

_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))
_HALF = (np.dtype(D.bfloat16.numpy_dtype), np.dtype(np.float16))


def _contiguous(arr: Any) -> np.ndarray:
    """A C-contiguous array (keeping 0-dim arrays 0-dim, unlike ``np.ascontiguousarray``)."""
    arr = np.asarray(arr)
    return arr if arr.flags.c_contiguous else arr.copy()


def _copy(t: Tensor) -> Tensor:
    """A contiguous copy of ``t`` as a fresh tensor (the out-of-place ops write into it)."""
    return fresh(_contiguous(t._data).copy())


# ---- flips and triangles ----------------------------------------------------------------------------
@TABLE.impl("aten::flip")
def flip(self, dims):
    data = self._data
    n = data.ndim
    axes = []
    for d in dims:
        w = _wrap_dim(d, n)
        if w in axes:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        axes.append(w)
    # PyTorch allocates the result with empty_like (preserve_format): NumPy's order="K" keeps the layout.
    out = np.empty_like(data, order="K")
    np.copyto(out, np.flip(data, tuple(axes)) if n and axes else data)
    return fresh(out)


def _triangle(name: str, self: Tensor, diagonal: int, lower: bool) -> Tensor:
    data = self._data
    if data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    rows, cols = data.shape[-2:]
    mask = np.tri(rows, cols, diagonal - (0 if lower else 1), dtype=bool)
    if not lower:
        mask = ~mask
    return fresh(np.where(mask, data, np.zeros((), data.dtype)).astype(data.dtype, copy=False))


@TABLE.impl("aten::tril")
def tril(self, diagonal=0):
    return _triangle("tril", self, diagonal, True)


@TABLE.impl("aten::triu")
def triu(self, diagonal=0):
    return _triangle("triu", self, diagonal, False)


# ---- repeat_interleave --------------------------------------------------------------------------------
@TABLE.impl("aten::repeat_interleave.Tensor")
def repeat_interleave(repeats, output_size=None):
    reps = repeats._data
    if reps.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if reps.dtype not in _INDEX_DTYPES:
        raise RuntimeError("repeats has to be Long or Int tensor")
    if reps.size and reps.min() < 0:
        raise RuntimeError("repeats can not be negative")
    total = int(reps.sum()) if reps.size else 0
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    return fresh(np.repeat(np.arange(reps.shape[0], dtype=reps.dtype), reps))


# ---- index_add / index_copy / index_fill -------------------------------------------------------------------
def _index_vector(op: str, index: Tensor, *, ints: str = "int32/int64") -> np.ndarray:
    idx = index._data
    if ints == "int32/int64" and idx.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index but got: {scalar_type_name(index._dtype)}")
    if idx.ndim > 1:
        raise IndexError(
            f"{op}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
            f"{scalar_type_name(index._dtype)} and size: {list(idx.shape)}"
        )
    return idx.reshape(-1)


def _source_view(self_data: np.ndarray, source: np.ndarray) -> np.ndarray:
    return source.reshape(1) if self_data.ndim and source.ndim == 0 else source


def _index_add_into(out: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any) -> None:
    data = out._data
    n = data.ndim
    d = _wrap_dim(dim, n)
    idx = _index_vector("index_add_", index)
    src = _host(source)
    if source._dtype is not out._dtype:
        raise RuntimeError(
            f"index_add_(): self ({scalar_type_name(out._dtype)}) and source ({scalar_type_name(source._dtype)}) must "
            "have the same scalar type"
        )
    src_size = src.shape[d] if src.ndim else 1
    if idx.shape[0] != src_size:
        if not src.ndim:  # PyTorch's message reads source.size(dim) of the 0-dim source, which raises
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise RuntimeError(
            f"index_add_(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim): ({src_size}), "
            f"for dim: {d}"
        )
    if n and src.ndim and (src.ndim != n or any(src.shape[k] != data.shape[k] for k in range(n) if k != d)):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(data.shape)} source.shape = {list(src.shape)}"
        )
    size = data.shape[d] if n else 1
    if n > 1 and data.size == 0:
        return  # PyTorch's multi-dim path writes nothing, so checks no index
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < 0 or hi >= size:
            # PyTorch checks with TORCH_CHECK_INDEX except where index_add_cpu_ hands the work to scatter_add_
            # (which raises RuntimeError): several dims, dim first or last, alpha == 1 (a bool never is), int64 index
            via_scatter_add = (n > 1 and d in (0, n - 1) and not isinstance(alpha, bool) and alpha == 1
                               and idx.dtype == np.int64)
            if not via_scatter_add:
                raise IndexError("index out of range in self")
            raise RuntimeError(f"index {int(lo if lo < 0 else hi)} is out of bounds for dimension {d} with size {size}")
    check_internal_overlap(data)
    if alpha != 1:
        src = src * scalar_as(alpha, src.dtype) if src.dtype.kind in "iub" else (src * alpha).astype(src.dtype)
    target = data.reshape(1) if n == 0 else data
    src = _source_view(data, src)
    where = (slice(None),) * d + (idx,)
    if src.dtype in _HALF:
        acc = target.astype(np.float32)
        np.add.at(acc, where, src.astype(np.float32))
        target[...] = acc.astype(target.dtype)
    elif src.dtype == np.bool_:
        acc = target.astype(np.uint8)
        np.add.at(acc, where, src.astype(np.uint8))
        target[...] = acc.astype(bool)
    else:
        np.add.at(target, where, src)


@TABLE.impl("aten::index_add")
def index_add(self, dim, index, source, alpha=1):
    out = _copy(self)
    _index_add_into(out, dim, index, source, alpha)
    return out


@TABLE.impl("aten::index_add_")
def index_add_(self, dim, index, source, alpha=1):
    _index_add_into(self, dim, index, source, alpha)
    return self


def _index_copy_into(out: Tensor, dim: int, index: Tensor, source: Tensor) -> None:
    data = out._data
    n = data.ndim
    d = _wrap_dim(dim, n)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {scalar_type_name(index._dtype)}")
    if source._dtype is not out._dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{scalar_type_name(out._dtype)} and (source) {scalar_type_name(source._dtype)}"
        )
    idx = idx.reshape(-1)
    src = _source_view(data, _host(source))
    src_size = src.shape[d] if src.ndim else 1
    if idx.shape[0] != src_size:
        if not source._data.ndim:
            raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {idx.shape[0]})")
        raise IndexError(
            f"index_copy_(): Number of indices ({idx.shape[0]}) should be equal to source.size(dim) ({src_size})"
        )
    if n and src.ndim:
        dst_slice = [s for k, s in enumerate(data.shape) if k != d]
        src_slice = [s for k, s in enumerate(src.shape) if k != d]
        if dst_slice != src_slice:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: "
                f"{' '.join(map(str, dst_slice))} at dimension {d} and source slice shape: "
                f"{' '.join(map(str, src_slice))} at dimension {d}."
            )
    size = data.shape[d] if n else 1
    for i in idx:
        if not 0 <= i < size:
            raise IndexError(f"index_copy_(): index {int(i)} is out of bounds for dimension {d} with size {size}")
    check_internal_overlap(data)
    target = data.reshape(1) if n == 0 else data
    target[(slice(None),) * d + (idx,)] = src


@TABLE.impl("aten::index_copy")
def index_copy(self, dim, index, source):
    out = _copy(self)
    _index_copy_into(out, dim, index, source)
    return out


@TABLE.impl("aten::index_copy_")
def index_copy_(self, dim, index, source):
    _index_copy_into(self, dim, index, source)
    return self


def _index_fill_into(out: Tensor, dim: int, index: Tensor, value: Any) -> None:
    data = out._data
    n = data.ndim
    d = _wrap_dim(dim, n)
    idx = index._data
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(
                f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value._data.ndim} "
                "dimension(s)."
            )
        value = _host(value)[()].item()
    check_scalar_fits(value, out._dtype)
    idx = idx.reshape(-1)
    size = data.shape[d] if n else 1
    if idx.size:
        lo, hi = idx.min(), idx.max()
        if lo < -size or hi >= size:
            raise IndexError(f"index {int(lo if lo < -size else hi)} is out of bounds for dimension {d} with size {size}")
    # (PyTorch only warns for an expanded self here; the core issues that warning.)
    target = data.reshape(1) if n == 0 else data
    target[(slice(None),) * d + (idx,)] = scalar_as(value, data.dtype)


@TABLE.impl("aten::index_fill.int_Scalar", "aten::index_fill.int_Tensor")
def index_fill(self, dim, index, value):
    out = _copy(self)
    _index_fill_into(out, dim, index, value)
    return out


@TABLE.impl("aten::index_fill_.int_Scalar", "aten::index_fill_.int_Tensor")
def index_fill_(self, dim, index, value):
    _index_fill_into(self, dim, index, value)
    return self


# ---- take / masked_scatter --------------------------------------------------------------------------------------
@TABLE.impl("aten::take")
def take(self, index):
    idx = index._data
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {scalar_type_name(index._dtype)}")
    flat = self._data.reshape(-1)
    n = flat.shape[0]
    if idx.size:
        if n == 0:
            raise IndexError("take(): tried to take from an empty tensor")
        lo, hi = idx.min(), idx.max()
        if lo < -n or hi >= n:
            raise IndexError(f"out of range: tried to access index {int(lo if lo < -n else hi)} on a tensor of {n} elements.")
    return fresh(_contiguous(flat[idx]))


def _masked_scatter_into(data: np.ndarray, mask: Tensor, source: Tensor, dtype: D.dtype) -> None:
    if mask._dtype is not D.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {scalar_type_name(mask._dtype)}")
    if source._dtype is not dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got{scalar_type_name(dtype)} and "
            f"{scalar_type_name(source._dtype)}"
        )
    m = np.broadcast_to(_host(mask), data.shape)
    count = int(np.count_nonzero(m))
    src = _host(source).reshape(-1)
    if src.shape[0] < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    data[m] = src[:count]


@TABLE.impl("aten::masked_scatter")
def masked_scatter(self, mask, source):
    shape = C.broadcast_shape(self._data.shape, mask._data.shape)
    out = _contiguous(np.broadcast_to(self._data, shape)).copy()
    _masked_scatter_into(out, mask, source, self._dtype)
    return fresh(out)


@TABLE.impl("aten::masked_scatter_")
def masked_scatter_(self, mask, source):
    data = self._data
    try:
        np.broadcast_to(mask._data, data.shape)
    except ValueError:
        raise C.broadcast_error(data.shape, mask._data.shape) from None
    check_internal_overlap(data)
    _masked_scatter_into(data, mask, source, self._dtype)
    return self


# ---- scatter_reduce ------------------------------------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_into(out: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, include_self: bool) -> None:
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    data, idx, d = _scatter_checks(out, dim, index, src)
    if (reduce == "mean" and out._dtype is D.bool_) or (reduce in ("amax", "amin") and out._dtype.is_complex):
        raise C.not_implemented(f"scatter_gather_tensor_cpu_reduce_{reduce}", out._dtype)
    if idx.size == 0:
        return
    check_internal_overlap(data)
    where, values = _scatter_target(data, idx, d, _host(src))
    target = data.reshape(1) if data.ndim == 0 else data
    work_dt = np.dtype(np.float32) if target.dtype in _HALF else target.dtype
    acc = target.astype(work_dt)
    vals = np.asarray(values).astype(work_dt)
    hit = np.zeros(acc.shape, bool)
    hit[where] = True
    if not include_self:
        if reduce in ("sum", "mean"):
            acc[hit] = 0
        elif reduce == "prod":
            acc[hit] = 1
        else:
            if work_dt.kind == "f":
                fill = -np.inf if reduce == "amax" else np.inf
            elif work_dt.kind == "b":
                fill = reduce == "amin"
            else:
                info = np.iinfo(work_dt)
                fill = info.min if reduce == "amax" else info.max
            acc[hit] = fill
    if reduce in ("sum", "mean"):
        if work_dt.kind == "b":
            np.logical_or.at(acc, where, vals)
        else:
            np.add.at(acc, where, vals)
    elif reduce == "prod":
        if work_dt.kind == "b":
            np.logical_and.at(acc, where, vals)
        else:
            np.multiply.at(acc, where, vals)
    elif reduce == "amax":
        np.maximum.at(acc, where, vals)
    else:
        np.minimum.at(acc, where, vals)
    if reduce == "mean":
        counts = np.full(acc.shape, 1 if include_self else 0, np.int64)
        np.add.at(counts, where, 1)
        counts = np.maximum(counts, 1)
        if work_dt.kind in "iu":
            acc = np.where(hit, np.floor_divide(acc, counts.astype(work_dt)), acc).astype(work_dt)
        else:
            acc = np.where(hit, acc / counts, acc).astype(work_dt)
    target[...] = acc.astype(target.dtype)


@TABLE.impl("aten::scatter_reduce.two")
def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    out = _copy(self)
    _scatter_reduce_into(out, dim, index, src, reduce, include_self)
    return out


@TABLE.impl("aten::scatter_reduce_.two")
def scatter_reduce_(self, dim, index, src, reduce, include_self=True):
    _scatter_reduce_into(self, dim, index, src, reduce, include_self)
    return self


# ---- searchsorted -----------------------------------------------------------------------------------------------
def searchsorted_checks(sorted_sequence: Tensor, self: Tensor, side: str | None, right: bool, sorter: Tensor | None) -> bool:
    """PyTorch's argument checks (shared with the meta kernel); returns ``right`` resolved with ``side``."""
    seq_shape, val_shape = tuple(sorted_sequence.shape), tuple(self.shape)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
            )
        right = side == "right"
    if sorter is not None:
        if sorter._dtype is not D.int64:
            raise RuntimeError(
                f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {scalar_type_name(sorter._dtype)}"
            )
        if tuple(sorter.shape) != seq_shape:
            raise RuntimeError(
                f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{list(seq_shape)}and got sorter tensor {list(sorter.shape)}"
            )
    if len(seq_shape) == 0:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension"
        )
    if len(seq_shape) > 1 and (len(val_shape) != len(seq_shape) or val_shape[:-1] != seq_shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(seq_shape)} and input "
            f"value tensor {list(val_shape)}"
        )
    return right


@TABLE.impl("aten::searchsorted.Tensor")
def searchsorted(sorted_sequence, self, out_int32=False, right=False, side=None, sorter=None):
    right = searchsorted_checks(sorted_sequence, self, side, right, sorter)
    common_dt = D.promote_types(sorted_sequence._dtype, self._dtype)
    if common_dt is D.bool_ or common_dt.is_complex:  # PyTorch's kernel: every real type but bool
        raise C.not_implemented("searchsorted_out_cpu", common_dt)
    seq = _host(sorted_sequence)
    vals = _host(self)
    if sorter is not None:
        seq = np.take_along_axis(seq, _host(sorter), -1)
    common = np.result_type(seq.dtype, vals.dtype) if seq.dtype not in _HALF and vals.dtype not in _HALF else np.float32
    seq, vals = seq.astype(common, copy=False), vals.astype(common, copy=False)
    how = "right" if right else "left"
    out_dt = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        result = np.searchsorted(seq, vals, side=how)
    else:
        rows = seq.reshape(-1, seq.shape[-1])
        queries = vals.reshape(rows.shape[0], -1)
        result = np.stack([np.searchsorted(r, q, side=how) for r, q in zip(rows, queries)]) if rows.shape[0] else \
            np.empty(queries.shape, np.int64)
        result = result.reshape(vals.shape)
    return fresh(_contiguous(np.asarray(result, dtype=out_dt)))

