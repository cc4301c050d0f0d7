"""Shape and indexing composites: ops written once over view ops, cat, copy_ and friends (backend-generic).

Views (``movedim``, ``unflatten``, ``broadcast_to``, ``tensor_split``, ``meshgrid``...) are built
from view ops, so they share storage with their input exactly where PyTorch's do.  Copies
(``repeat``, ``roll``, ``diag``, the ``*_scatter`` ops...) allocate through ``empty``/``zeros``/
``clone`` and write with ``copy_``, so any backend with the primitives runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import _broadcast_shapes
from torchplug._tensor.construct import unlink_view
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["COMPOSITES"]


def _fresh(t: Tensor) -> Tensor:
    """A result that is a view of an internal temporary: it owns its storage, like PyTorch's."""
    return unlink_view(t)


def _contiguous_copy(t: Tensor) -> Tensor:
    out = A.clone(t, memory_format="contiguous_format")
    return out


# ---- views ---------------------------------------------------------------------------------------------
def _unsafe_view(self: Tensor, size: Sequence[int]) -> Tensor:
    # PyTorch's _unsafe_view: the view of a result nobody else holds (an mm output, a clone), so autograd
    # records one UnsafeViewBackward0 node and does not track the output as a view of its input.
    return _fresh(A.view(self, size))


def diagonal_copy(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _contiguous_copy(A.diagonal(self, offset, dim1, dim2))


def _reshape_alias(self: Tensor, size: Sequence[int], stride: Sequence[int]) -> Tensor:
    return A.as_strided(self, list(size), list(stride), self.storage_offset())


def movedim(self: Tensor, source: Sequence[int], destination: Sequence[int]) -> Tensor:
    n = self.dim()
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain the same number "
            f"of dims as destination ({list(destination)} dims)"
        )
    src = [_wrap_dim(d, n) for d in source]
    dst = [_wrap_dim(d, n) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if n == 0:
        return A.alias(self)
    order: list[int | None] = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    perm = [o if o is not None else next(rest) for o in order]
    return A.permute(self, perm)


def unflatten(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = _wrap_dim(dim, self.dim())
    sizes = list(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    size = self.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or size % known:
            raise RuntimeError(
                f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({size}) in the input tensor"
            )
        sizes[sizes.index(-1)] = size // known
    elif known != size:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({size}) in the input tensor"
        )
    shape = list(self.shape)
    return A.view(self, shape[:d] + sizes + shape[d + 1 :])


def broadcast_to(self: Tensor, size: Sequence[int]) -> Tensor:
    return A.expand(self, list(size))


def broadcast_tensors(tensors: Sequence[Tensor]) -> list[Tensor]:
    shape: list[int] = []
    for t in tensors:
        shape = _broadcast_shapes(shape, list(t.shape))
    return [A.expand(t, shape) for t in tensors]


def _split_input(self: Tensor, dim: int) -> int:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    return _wrap_dim(dim, self.dim())


def tensor_split_sections(self: Tensor, sections: int, dim: int = 0) -> list[Tensor]:
    d = _split_input(self, dim)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size = self.shape[d]
    base, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        length = base + (1 if i < extra else 0)
        out.append(A.slice(self, d, start, start + length, 1))
        start += length
    return out


def tensor_split_indices(self: Tensor, indices: Sequence[int], dim: int = 0) -> list[Tensor]:
    d = _split_input(self, dim)
    out, start = [], 0
    for idx in indices:
        out.append(A.slice(self, d, start, idx, 1))
        start = idx
    out.append(A.slice(self, d, start, None, 1))
    return out


def meshgrid(tensors: Sequence[Tensor], indexing: str = "ij") -> list[Tensor]:
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    tensors = list(tensors)
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    n = len(tensors)
    grids = []
    for i, t in enumerate(tensors):
        view = [1] * n
        view[i] = -1
        grids.append(A.expand(A.view(t, view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def atleast_1d(self: Tensor) -> Tensor:
    return A.reshape(self, [1]) if self.dim() == 0 else self


def atleast_2d(self: Tensor) -> Tensor:
    n = self.dim()
    if n == 0:
        return A.reshape(self, [1, 1])
    return A.unsqueeze(self, 0) if n == 1 else self


def atleast_3d(self: Tensor) -> Tensor:
    n = self.dim()
    if n == 0:
        return A.reshape(self, [1, 1, 1])
    if n == 1:
        return A.unsqueeze(A.unsqueeze(self, 0), -1)
    return A.unsqueeze(self, -1) if n == 2 else self


# ---- copies that reorder or repeat ------------------------------------------------------------------
def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return A.flip(self, [1])


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return A.flip(self, [0])


def roll(self: Tensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> Tensor:
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        flat = A.reshape(self, [-1])
        return _fresh(A.view(roll(flat, shifts, [0]), list(self.shape)))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if self.numel() == 0:  # torch's roll_cpu clones an empty tensor before looking at a dim
        return _contiguous_copy(self)
    out = self
    for s, dim in zip(shifts, dims):
        if self.dim() == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _wrap_dim(dim, self.dim())
        size = self.shape[d]
        if size == 0:
            continue
        s %= size
        if s:
            out = A.cat([A.narrow(out, d, size - s, s), A.narrow(out, d, 0, size - s)], d)
    return _contiguous_copy(out) if out is self else out


def rot90(self: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    dims = list(dims)
    n = self.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    k %= 4
    if k == 1:
        return _fresh(A.transpose(A.flip(self, [d1]), d0, d1))
    if k == 2:
        return A.flip(self, [d0, d1])
    if k == 3:
        return _fresh(A.transpose(A.flip(self, [d0]), d0, d1))
    return _contiguous_copy(self)


def _repeat_copy(expanded: Tensor, shape: list[int]) -> Tensor:
    return _fresh(A.view(_contiguous_copy(expanded), shape))


def repeat(self: Tensor, repeats: Sequence[int]) -> Tensor:
    repeats = list(repeats)
    if len(repeats) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    padded = [1] * (len(repeats) - self.dim()) + list(self.shape)
    target = [r * s for r, s in zip(repeats, padded)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(t for t in target if t < 0)}: {target}")
    if 0 in target:
        return A.empty(target, dtype=self.dtype, device=self.device)
    interleaved = [v for s in padded for v in (1, s)]
    expand_to = [v for r, s in zip(repeats, padded) for v in (r, s)]
    return _repeat_copy(A.expand(A.reshape(self, interleaved), expand_to), target)


def tile(self: Tensor, dims: Sequence[int]) -> Tensor:
    dims = list(dims)
    if len(dims) < self.dim():
        dims = [1] * (self.dim() - len(dims)) + dims
    return A.repeat(self, dims)  # through the op: autograd records RepeatBackward0 as PyTorch's tile does


def repeat_interleave_self_tensor(self: Tensor, repeats: Tensor, dim: int | None = None, output_size: int | None = None) -> Tensor:
    x = self
    if dim is None:
        x, dim = A.reshape(self, [-1]), 0
    d = _wrap_dim(dim, x.dim())
    size = x.shape[d] if x.dim() else 1
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
        repeats = A.expand(A.reshape(repeats, [1]), [size])
    elif repeats.dim() == 1:
        if repeats.shape[0] != size:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = {repeats.shape[0]} "
                f"and input.size({d}) = {size}"
            )
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    return A.index_select(x, d, A["repeat_interleave.Tensor"](repeats, output_size=output_size))


def repeat_interleave_self_int(self: Tensor, repeats: int, dim: int | None = None, output_size: int | None = None) -> Tensor:
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = self
    if dim is None:
        x, dim = A.reshape(self, [-1]), 0
    if x.dim() == 0:
        x = A.reshape(x, [1])
    d = _wrap_dim(dim, x.dim())
    shape = list(x.shape)
    target = shape[:d] + [shape[d] * repeats] + shape[d + 1 :]
    if output_size is not None and output_size != target[d]:
        raise RuntimeError("allocated size does not match required size")
    if 0 in target:
        return A.empty(target, dtype=x.dtype, device=x.device)
    expand_to = shape[: d + 1] + [repeats] + shape[d + 1 :]
    return _repeat_copy(A.expand(A.unsqueeze(x, d + 1), expand_to), target)


def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    return _contiguous_copy(A.narrow(self, dim, start, length))


# ---- joining ----------------------------------------------------------------------------------------------
def _nonempty(tensors: Sequence[Tensor], name: str) -> None:
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty(tensors, "hstack")
    ts = [atleast_1d(t) for t in tensors]
    return A.cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty(tensors, "vstack")
    return A.cat([atleast_2d(t) for t in tensors], 0)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty(tensors, "dstack")
    return A.cat([atleast_3d(t) for t in tensors], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    _nonempty(tensors, "column_stack")
    return A.cat([A.reshape(t, [t.numel(), 1]) if t.dim() <= 1 else t for t in tensors], 1)


def cartesian_prod(tensors: Sequence[Tensor]) -> Tensor:
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(tensors, "ij")
    return A.stack([A.reshape(g, [-1]) for g in grids], 1)


def block_diag(tensors: Sequence[Tensor]) -> Tensor:
    mats = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.dim()} dimensions"
            )
        mats.append(A.reshape(t, [1, -1] if t.dim() == 1 else [1, 1]) if t.dim() < 2 else t)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = D.promote_types(dtype, m.dtype)
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = A.zeros([rows, cols], dtype=dtype, device=mats[0].device)
    r = c = 0
    for m in mats:
        h, w = m.shape
        if h and w:
            A.copy_(A.narrow(A.narrow(out, 0, r, h), 1, c, w), m)
        r, c = r + h, c + w
    out._storage.version = 0
    return out


def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return A.empty([0], dtype=self.dtype, device=self.device)
    # ATen's: the r-fold meshgrid of self, each grid's entries where the indices increase (i < j < ...; <= with
    # replacement) picked by masked_select, stacked: the graph is torch's (StackBackward0 over MaskedSelectBackward0)
    n = self.shape[0]
    if self.device.type == "meta":  # no data for masked_select: the picked indices, counted here
        return _combinations_by_index(self, r, with_replacement)
    positions = A.arange(0, n, 1, dtype=D.int64, device=self.device)
    index_grids = A["meshgrid.indexing"]([positions] * r, indexing="ij")
    increasing = A["le.Tensor"] if with_replacement else A["lt.Tensor"]
    mask = A.full(list(index_grids[0].shape), True, dtype=D.bool_, device=self.device)
    for i in range(r - 1):
        mask = A.logical_and(mask, increasing(index_grids[i], index_grids[i + 1]))
    grids = A["meshgrid.indexing"]([self] * r, indexing="ij")
    return A.stack([A.masked_select(g, mask) for g in grids], 1)


def _combinations_by_index(self: Tensor, r: int, with_replacement: bool) -> Tensor:
    import itertools

    from torchplug._tensor.creation import tensor

    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    combos = list(pick(range(self.shape[0]), r))
    if not combos:
        return A.empty([0, r], dtype=self.dtype, device=self.device)
    columns = [tensor([c[j] for c in combos], dtype=D.int64, device=self.device) for j in range(r)]
    return A.stack([A.index_select(self, 0, col) for col in columns], 1)


# ---- triangles and diagonals --------------------------------------------------------------------------
def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    n = self.dim()
    if n == 1:
        return A.diag_embed(self, diagonal, 0, 1)  # as ATen: one DiagEmbedBackward0 node
    if n == 2:
        return A.diagonal_copy(self, diagonal, 0, 1)  # as ATen: DiagonalBackward0_copy
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    n = self.dim() + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = list(self.shape)
    length = (shape.pop() if shape else 1) + abs(offset)
    lo, hi = sorted((d1, d2))
    shape.insert(lo, length)
    shape.insert(hi, length)
    out = A.zeros(shape, dtype=self.dtype, device=self.device)
    A.copy_(A.diagonal(out, offset, d1, d2), self)
    out._storage.version = 0
    return out


def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    flat = A.view(self if self.is_contiguous() else _contiguous_copy(self), [-1])
    return diag(flat, offset)  # ATen: self.contiguous().view(-1).diag(offset)


def trace(self: Tensor) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    if self.dtype is D.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return A.sum(A.diagonal(self, 0, 0, 1))


def _tri_indices(lower: bool) -> Callable[..., Tensor]:
    name = "tril_indices" if lower else "triu_indices"

    def kernel(row: int, col: int, offset: int = 0, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> Tensor:
        import numpy as np

        from torchplug._ops.composites import scalar_type_name
        from torchplug._tensor.creation import tensor

        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dtype = dtype or D.int64
        if dtype not in (D.int64, D.int32):
            raise NotImplementedError(f"\"{name}\" not implemented for '{scalar_type_name(dtype)}'")
        rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
        return tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype, device=device)

    kernel.__name__ = name
    return kernel


# ---- scatters into views --------------------------------------------------------------------------------
def _scatter_into(self: Tensor, src: Tensor, view_of: Callable[[Tensor], Tensor]) -> Tensor:
    out = A.clone(self)
    target = view_of(out)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(
            f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, slice size = "
            f"{list(target.shape)}"
        )
    A.copy_(target, src)
    out._storage.version = 0
    return out


def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    return _scatter_into(self, src, lambda t: A.select(t, dim, index))


def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    return _scatter_into(self, src, lambda t: A.slice(t, dim, start, end, step))


def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _scatter_into(self, src, lambda t: A.diagonal(t, offset, dim1, dim2))


# ---- indexing -----------------------------------------------------------------------------------------------
def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    if mask.dtype is not D.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shape = _broadcast_shapes(list(mask.shape), list(self.shape))
    if not shape:
        shape = [1]
    return A.index(A.expand(A.reshape(self, [1]) if self.dim() == 0 else self, shape),
                   [A.expand(A.reshape(mask, [1]) if mask.dim() == 0 else mask, shape)])


def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    from torchplug._ops.composites import scalar_type_name

    if indices.dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {scalar_type_name(indices.dtype)}")
    if dim is None:
        return A.gather(A.view(self, [-1]), 0, A.view(indices, [-1]))
    if self.dim() != indices.dim():
        raise RuntimeError(
            f"torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
            f"{self.dim()} dimensions for input, and {indices.dim()} dimensions for indices"
        )
    d = _wrap_dim(dim, self.dim())
    self_sizes, idx_sizes = list(self.shape), list(indices.shape)
    if self_sizes:
        self_sizes[d] = indices.shape[d]
        self_sizes = _broadcast_shapes(self_sizes, idx_sizes)
        idx_sizes = list(self_sizes)
        idx_sizes[d] = indices.shape[d]
        self_sizes[d] = self.shape[d]
    return A.gather(A.expand(self, self_sizes), d, A.expand(indices, idx_sizes))


def argwhere(self: Tensor) -> Tensor:
    return A.nonzero(self)


def bucketize(self: Tensor, boundaries: Tensor, out_int32: bool = False, right: bool = False) -> Tensor:
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return A["searchsorted.Tensor"](boundaries, self, out_int32=out_int32, right=right)


COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "_unsafe_view": ("CompositeExplicitAutograd", _unsafe_view),
    "_reshape_alias": ("CompositeExplicitAutograd", _reshape_alias),
    "diagonal_copy": ("CompositeExplicitAutograd", diagonal_copy),
    "movedim.intlist": ("CompositeImplicitAutograd", movedim),
    "unflatten.int": ("CompositeImplicitAutograd", unflatten),
    "broadcast_to": ("CompositeImplicitAutograd", broadcast_to),
    "broadcast_tensors": ("CompositeImplicitAutograd", broadcast_tensors),
    "tensor_split.sections": ("CompositeImplicitAutograd", tensor_split_sections),
    "tensor_split.indices": ("CompositeImplicitAutograd", tensor_split_indices),
    "meshgrid.indexing": ("CompositeImplicitAutograd", meshgrid),
    "atleast_1d": ("CompositeImplicitAutograd", atleast_1d),
    "atleast_2d": ("CompositeImplicitAutograd", atleast_2d),
    "atleast_3d": ("CompositeImplicitAutograd", atleast_3d),
    "fliplr": ("CompositeImplicitAutograd", fliplr),
    "flipud": ("CompositeImplicitAutograd", flipud),
    "roll": ("CompositeExplicitAutograd", roll),
    "rot90": ("CompositeExplicitAutograd", rot90),
    "repeat": ("CompositeExplicitAutograd", repeat),
    "tile": ("CompositeImplicitAutograd", tile),
    "repeat_interleave.self_Tensor": ("CompositeImplicitAutograd", repeat_interleave_self_tensor),
    "repeat_interleave.self_int": ("CompositeImplicitAutograd", repeat_interleave_self_int),
    "narrow_copy": ("CompositeExplicitAutograd", narrow_copy),
    "hstack": ("CompositeImplicitAutograd", hstack),
    "vstack": ("CompositeImplicitAutograd", vstack),
    "dstack": ("CompositeImplicitAutograd", dstack),
    "column_stack": ("CompositeImplicitAutograd", column_stack),
    "cartesian_prod": ("CompositeImplicitAutograd", cartesian_prod),
    "block_diag": ("CompositeExplicitAutograd", block_diag),
    "combinations": ("CompositeImplicitAutograd", combinations),
    "diag": ("CompositeImplicitAutograd", diag),
    "diag_embed": ("CompositeExplicitAutograd", diag_embed),
    "diagflat": ("CompositeImplicitAutograd", diagflat),
    "trace": ("CompositeExplicitAutograd", trace),
    "tril_indices": ("CompositeExplicitAutograd", _tri_indices(True)),
    "triu_indices": ("CompositeExplicitAutograd", _tri_indices(False)),
    "select_scatter": ("CompositeExplicitAutograd", select_scatter),
    "slice_scatter": ("CompositeExplicitAutograd", slice_scatter),
    "diagonal_scatter": ("CompositeExplicitAutograd", diagonal_scatter),
    "masked_select": ("CompositeExplicitAutograd", masked_select),  # one MaskedSelectBackward0 node
    "take_along_dim": ("CompositeImplicitAutograd", take_along_dim),
    "argwhere": ("CompositeImplicitAutograd", argwhere),
    "bucketize.Tensor": ("CompositeImplicitAutograd", bucketize),
}
