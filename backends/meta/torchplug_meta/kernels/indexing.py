"""meta kernels for joining and indexing: cat, gather/scatter, index_select, advanced indexing.

Results whose size depends on values (nonzero, boolean-mask indexing) cannot be computed
without data: they raise NotImplementedError, as PyTorch's meta tensors do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

DATA_DEPENDENT = (
    "{what} on meta tensors: the output size depends on the values of the input, which meta tensors do not have. "
    "Run it on a device with data, or compute the size separately."
)
_INDEX_DTYPES = (D.int64, D.int32)


@TABLE.impl("aten::cat")
def cat(tensors: Sequence[C.Tensor], dim: int = 0) -> C.Tensor:
    if len(tensors) == 0:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = C.result_dtype(*[t for t in tensors if t.dim() > 0]) if len(tensors) > 1 else tensors[0]._dtype
    # Legacy rule: 1-D empty tensors are skipped whatever their shape.
    real = [(i, t) for i, t in enumerate(tensors) if not (t.dim() == 1 and C.shape(t)[0] == 0)]
    if not real:
        return C.new((0,), dtype)
    first_i, first = real[0]
    ref = list(C.shape(first))
    d = C.wrap_dim(dim, len(ref))
    total = 0
    for i, t in real:
        size = C.shape(t)
        if len(size) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(size)}")
        for j, (a, b) in enumerate(zip(ref, size)):
            if j != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got size {b} for "
                    f"tensor number {i} in the list."
                )
        total += size[d]
    ref[d] = total
    return C.new(tuple(ref), dtype)


def _check_index(op: str, index: C.Tensor) -> None:
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")


@TABLE.impl("aten::gather")
def gather(self: C.Tensor, dim: int, index: C.Tensor, sparse_grad: bool = False) -> C.Tensor:
    ndim = max(self.dim(), 1)
    d = C.wrap_dim(dim, self.dim())
    _check_index("gather", index)
    if index.numel() and max(index.dim(), 1) != ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.numel() and self.dim():
        size, isize = C.shape(self), C.shape(index)
        for j in range(len(size)):
            if j != d and isize[j] > size[j]:
                raise RuntimeError(
                    f"Size does not match at dimension {j} expected index {list(isize)} to be no larger than self "
                    f"{list(size)} apart from dimension {d}"
                )
    return C.new(C.shape(index), self._dtype)


def _scatter_check(op: str, self: C.Tensor, dim: int, index: C.Tensor, src: C.Tensor | None) -> None:
    d = C.wrap_dim(dim, self.dim())
    _check_index(op, index)
    if src is not None and src._dtype is not self._dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype")
    if not index.numel():
        return
    ndim = max(self.dim(), 1)
    if max(index.dim(), 1) != ndim or (src is not None and max(src.dim(), 1) != ndim):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if not self.dim():
        return
    size, isize = C.shape(self), C.shape(index)
    ssize = C.shape(src) if src is not None else None
    for j in range(len(size)):
        too_big = (j != d and isize[j] > size[j]) or (ssize is not None and isize[j] > ssize[j])
        if too_big:
            extra = f" and to be no larger size than src {list(ssize)}" if ssize is not None else ""
            raise RuntimeError(
                f"Expected index {list(isize)} to be no larger than self {list(size)} apart from dimension {d}{extra}"
            )


@TABLE.impl("aten::scatter.src")
def scatter(self: C.Tensor, dim: int, index: C.Tensor, src: C.Tensor) -> C.Tensor:
    _scatter_check("scatter", self, dim, index, src)
    return C.new(C.shape(self), self._dtype)  # torch's meta scatter results are contiguous


@TABLE.impl("aten::scatter.value")
def scatter_value(self: C.Tensor, dim: int, index: C.Tensor, value: Any) -> C.Tensor:
    _scatter_check("scatter", self, dim, index, None)
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::scatter_add")
def scatter_add(self: C.Tensor, dim: int, index: C.Tensor, src: C.Tensor) -> C.Tensor:
    _scatter_check("scatter_add", self, dim, index, src)
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::index_select")
def index_select(self: C.Tensor, dim: int, index: C.Tensor) -> C.Tensor:
    d = C.wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    size = list(C.shape(self))
    if not size:
        return C.new((), self._dtype)
    size[d] = index.numel()
    return C.new(tuple(size), self._dtype)


def _index_shape(self: C.Tensor, indices: Sequence[C.Tensor | None], op: str) -> tuple[tuple[int, ...], bool]:
    """Shape of ``self[indices]`` for integer index tensors (None = full slice); (shape, has_mask)."""
    size = C.shape(self)
    has_mask = False
    # Boolean/byte masks index as many dims as they have.
    consumed = sum((t.dim() if t._dtype in (D.bool_, D.uint8) else 1) if t is not None else 1 for t in indices)
    if consumed > len(size):
        raise IndexError(f"too many indices for tensor of dimension {len(size)} (got {consumed})")
    positions: list[int] = []
    shapes: list[tuple[int, ...]] = []
    dim = 0
    for t in indices:
        if t is None:
            dim += 1
            continue
        if t._dtype in (D.bool_, D.uint8):
            has_mask = True
            for j, s in enumerate(C.shape(t)):
                if s != size[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(C.shape(t))} at index {j} does not match the shape of the "
                        f"indexed tensor {list(size)} at index {dim + j}"
                    )
            positions.extend(range(dim, dim + t.dim()))
            dim += t.dim()
            continue
        if t._dtype not in _INDEX_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        positions.append(dim)
        shapes.append(C.shape(t))
        dim += 1
    if not positions:
        return size, False
    try:
        bshape = C.broadcast_shapes(*shapes) if shapes else ()
    except RuntimeError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(list(s)) for s in shapes)
        ) from None
    indexed = set(positions)
    before = [s for i, s in enumerate(size) if i < positions[0] and i not in indexed]
    after = [s for i, s in enumerate(size) if i > positions[-1] and i not in indexed]
    middle = [s for i, s in enumerate(size) if positions[0] < i < positions[-1] and i not in indexed]
    if middle:  # indexed dims not adjacent: the broadcast index dims go first
        return tuple(bshape) + tuple(before + middle + after), has_mask
    return tuple(before) + tuple(bshape) + tuple(after), has_mask


@TABLE.impl("aten::index.Tensor")
def index(self: C.Tensor, indices: Sequence[C.Tensor | None]) -> C.Tensor:
    shape, has_mask = _index_shape(self, indices, "index")
    if has_mask:
        raise NotImplementedError(DATA_DEPENDENT.format(what="Indexing with a boolean mask"))
    return C.new(shape, self._dtype)


@TABLE.impl("aten::index_put")
def index_put(self: C.Tensor, indices: Sequence[C.Tensor | None], values: C.Tensor, accumulate: bool = False) -> C.Tensor:
    shape, has_mask = _index_shape(self, indices, "index_put")
    if values._dtype is not self._dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {C.scalar_type_name(self._dtype)} for "
            f"the destination and {C.scalar_type_name(values._dtype)} for the source."
        )
    if not has_mask:  # with a mask the indexed count is data-dependent: values cannot be checked
        vshape = C.shape(values)
        try:
            ok = C.broadcast_shapes(shape, vshape) == tuple(shape)
        except RuntimeError:
            ok = False
        if not ok:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(vshape)} cannot be broadcast to indexing result of "
                f"shape {list(shape)}"
            )
    return C.new_like(self)


@TABLE.impl("aten::nonzero")
def nonzero(self: C.Tensor) -> C.Tensor:
    raise NotImplementedError(DATA_DEPENDENT.format(what="aten::nonzero"))
