"""meta kernels for shape and indexing primitives: flip, tril/triu, index_add/copy/fill, take, masked_scatter,
scatter_reduce, searchsorted and repeat_interleave (data-dependent without ``output_size``)."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .indexing import DATA_DEPENDENT, _scatter_check

TABLE = KernelTable("Meta")

_INDEX_DTYPES = (D.int64, D.int32)


@TABLE.impl("aten::flip")
def flip(self: C.Tensor, dims: Any) -> C.Tensor:
    seen: list[int] = []
    for d in dims:
        w = C.wrap_dim(d, self.dim())
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return C.new_like(self)


def _triangle(name: str, self: C.Tensor) -> C.Tensor:
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return C.new(C.shape(self), self._dtype)  # contiguous, like torch's tril/triu


@TABLE.impl("aten::tril")
def tril(self: C.Tensor, diagonal: int = 0) -> C.Tensor:
    return _triangle("tril", self)


@TABLE.impl("aten::triu")
def triu(self: C.Tensor, diagonal: int = 0) -> C.Tensor:
    return _triangle("triu", self)


@TABLE.impl("aten::repeat_interleave.Tensor")
def repeat_interleave(repeats: C.Tensor, output_size: int | None = None) -> C.Tensor:
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._dtype not in _INDEX_DTYPES:
        raise RuntimeError("repeats has to be Long or Int tensor")
    if output_size is None:
        raise NotImplementedError(DATA_DEPENDENT.format(what="repeat_interleave without output_size"))
    return C.new((output_size,), repeats._dtype)


def _index_dim(op: str, self: C.Tensor, dim: int, index: C.Tensor, source: C.Tensor | None) -> int:
    d = C.wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError(
            f"{op}(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{C.scalar_type_name(index._dtype)} and size: {list(C.shape(index))}"
        )
    return d


@TABLE.impl("aten::index_add")
def index_add(self: C.Tensor, dim: int, index: C.Tensor, source: C.Tensor, alpha: Any = 1) -> C.Tensor:
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {C.scalar_type_name(index._dtype)}")
    d = _index_dim("index_add_", self, dim, index, source)
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"index_add_(): self ({C.scalar_type_name(self._dtype)}) and source ({C.scalar_type_name(source._dtype)}) "
            "must have the same scalar type"
        )
    size, ssize = C.shape(self), C.shape(source)
    src_d = ssize[d] if ssize else 1
    if index.numel() != src_d:
        if not ssize:  # PyTorch's message reads source.size(dim) of the 0-dim source, which raises
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        raise RuntimeError(
            f"index_add_(): Number of indices ({index.numel()}) should be equal to source.size(dim): ({src_d}), for dim: {d}"
        )
    if size and ssize and (len(ssize) != len(size) or any(ssize[k] != size[k] for k in range(len(size)) if k != d)):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(size)} source.shape = {list(ssize)}"
        )
    return C.new(size, self._dtype)


@TABLE.impl("aten::index_copy")
def index_copy(self: C.Tensor, dim: int, index: C.Tensor, source: C.Tensor) -> C.Tensor:
    d = C.wrap_dim(dim, self.dim())
    if index._dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {C.scalar_type_name(index._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{C.scalar_type_name(self._dtype)} and (source) {C.scalar_type_name(source._dtype)}"
        )
    ssize = C.shape(source)
    src_d = ssize[d] if ssize else 1
    if index.numel() != src_d:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({src_d})")
    return C.new(C.shape(self), self._dtype)


def _index_fill(self: C.Tensor, dim: int, index: C.Tensor) -> C.Tensor:
    C.wrap_dim(dim, self.dim())
    if index._dtype is not D.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::index_fill.int_Scalar")
def index_fill_scalar(self: C.Tensor, dim: int, index: C.Tensor, value: Any) -> C.Tensor:
    return _index_fill(self, dim, index)


@TABLE.impl("aten::index_fill.int_Tensor")
def index_fill_tensor(self: C.Tensor, dim: int, index: C.Tensor, value: C.Tensor) -> C.Tensor:
    if value.dim() != 0:
        raise RuntimeError(
            f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )
    return _index_fill(self, dim, index)


@TABLE.impl("aten::take")
def take(self: C.Tensor, index: C.Tensor) -> C.Tensor:
    if index._dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {C.scalar_type_name(index._dtype)}")
    return C.new(C.shape(index), self._dtype)


@TABLE.impl("aten::masked_scatter")
def masked_scatter(self: C.Tensor, mask: C.Tensor, source: C.Tensor) -> C.Tensor:
    if mask._dtype is not D.bool_:
        raise RuntimeError(
            f"masked_scatter_ only supports boolean masks, but got mask with dtype {C.scalar_type_name(mask._dtype)}"
        )
    if source._dtype is not self._dtype:
        raise RuntimeError(
            f"masked_scatter: expected self and source to have same dtypes but got{C.scalar_type_name(self._dtype)} and "
            f"{C.scalar_type_name(source._dtype)}"
        )
    return C.new(C.broadcast_shapes(C.shape(self), C.shape(mask)), self._dtype)


@TABLE.impl("aten::scatter_reduce.two")
def scatter_reduce(self: C.Tensor, dim: int, index: C.Tensor, src: C.Tensor, reduce: str,
                   include_self: bool = True) -> C.Tensor:
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    _scatter_check("scatter", self, dim, index, src)
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::searchsorted.Tensor")
def searchsorted(sorted_sequence: C.Tensor, self: C.Tensor, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: C.Tensor | None = None) -> C.Tensor:
    seq_shape, val_shape = C.shape(sorted_sequence), C.shape(self)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(
                "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True"
            )
    if sorter is not None:
        if sorter._dtype is not D.int64:
            raise RuntimeError(
                f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                f"{C.scalar_type_name(sorter._dtype)}"
            )
        if C.shape(sorter) != seq_shape:
            raise RuntimeError(
                f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor "
                f"{list(seq_shape)}and got sorter tensor {list(C.shape(sorter))}"
            )
    if not seq_shape:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension")
    if len(seq_shape) > 1 and (len(val_shape) != len(seq_shape) or val_shape[:-1] != seq_shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(seq_shape)} and input "
            f"value tensor {list(val_shape)}"
        )
    return C.new(val_shape, D.int32 if out_int32 else D.int64)
