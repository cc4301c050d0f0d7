"""Derivative formulas of the shape and indexing section: flips and rolls, repeats, triangles and diagonals,
the ``*_scatter`` family, ``index_*``, ``take``, ``masked_scatter`` and ``scatter_reduce``."""

from __future__ import annotations

import math
from typing import Any

import torchplug as T

from ._formulas import _into_zeros
from ._rules import nondifferentiable, rule

__all__: list[str] = []


def _slice(x: Any, dim: int, start: Any, end: Any, step: int) -> Any:
    return T.ops.aten.slice.Tensor(x, dim, start, end, step)


def _new_zeros(g: Any, shape: Any) -> Any:
    return T.zeros(list(shape), dtype=g.dtype, device=g.device)


@rule("_unsafe_view", "_reshape_alias", saves="self.shape")
def _unsafe_view(n, g, shape):
    return (g.reshape(list(shape)),)


@rule("diagonal_copy", saves="self.shape, offset, dim1, dim2")
def diagonal_copy(n, g, shape, offset, dim1, dim2):
    # diagonal's formula: the gradient written into the diagonal of zeros
    return (_new_zeros(g, shape).diagonal_scatter(g, offset, dim1, dim2),)


@rule("stack", saves="dim")
def stack(n, g, dim):
    # PyTorch's stack_tensors_backward: the k-th slice of the gradient along the new dim
    d = dim % g.dim()
    return tuple(n[k] and g.select(d, k) for k in range(len(n)))


# ---- reorderings and repeats -------------------------------------------------------------------------
@rule("flip", saves="dims")
def flip(n, g, dims):
    return (g.flip(dims),)


@rule("roll", saves="shifts, dims")
def roll(n, g, shifts, dims):
    return (g.roll([-s for s in shifts], dims),)


@rule("rot90", saves="k, dims")
def rot90(n, g, k, dims):
    return (g.rot90(-k, dims),)


@rule("repeat", saves="self.shape, repeats")
def repeat(n, g, shape, repeats):
    if 0 in repeats:
        return (_new_zeros(g, shape),)
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(list(range(lead)))
    sizes, dims = [], []
    for d, s in enumerate(shape):
        r = repeats[d + lead]
        if r != 1:
            sizes.append(r)
            dims.append(len(sizes) - 1)
        sizes.append(s)
    g = g.reshape(sizes)
    return (g.sum(dims) if dims else g,)


@rule("narrow_copy", saves="self.shape, dim, start, length")
def narrow_copy(n, g, shape, dim, start, length):
    return (_into_zeros(g, shape, lambda z: z.narrow(dim, start, length)),)


# ---- triangles and diagonals -----------------------------------------------------------------------
@rule("tril", saves="diagonal")
def tril(n, g, diagonal):
    return (g.tril(diagonal),)


@rule("triu", saves="diagonal")
def triu(n, g, diagonal):
    return (g.triu(diagonal),)


@rule("trace", saves="self.shape")
def trace(n, g, shape):
    return (T.eye(shape[0], shape[1], dtype=g.dtype, device=g.device) * g,)


@rule("diag_embed", saves="offset, dim1, dim2")
def diag_embed(n, g, offset, dim1, dim2):
    return (g.diagonal(offset, dim1, dim2),)


@rule("block_diag", saves="tensors.shapes")
def block_diag(n, g, shapes):
    out, r, c = [], 0, 0
    for k, shape in enumerate(shapes):
        rows, cols = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        if n[k]:
            out.append(g.narrow(0, r, rows).narrow(1, c, cols).reshape(list(shape)))
        else:
            out.append(None)
        r += rows
        c += cols
    return tuple(out)


# ---- scatters into views --------------------------------------------------------------------------
@rule("select_scatter", saves="src.shape, dim, index")
def select_scatter(n, g, src_shape, dim, index):
    return n[0] and g.select_scatter(_new_zeros(g, src_shape), dim, index), n[1] and g.select(dim, index)


@rule("slice_scatter", saves="src.shape, dim, start, end, step")
def slice_scatter(n, g, src_shape, dim, start, end, step):
    gs = n[0] and g.slice_scatter(_new_zeros(g, src_shape), dim, start, end, step)
    return gs, n[1] and _slice(g, dim, start, end, step)


@rule("diagonal_scatter", saves="src.shape, offset, dim1, dim2")
def diagonal_scatter(n, g, src_shape, offset, dim1, dim2):
    gs = n[0] and g.diagonal_scatter(_new_zeros(g, src_shape), offset, dim1, dim2)
    return gs, n[1] and g.diagonal(offset, dim1, dim2)


# ---- indexing ------------------------------------------------------------------------------------
@rule("index_add", saves="dim, index, source.shape, alpha")
def index_add(n, g, dim, index, source_shape, alpha):
    gsrc = False
    if n[1]:
        gsrc = g.index_select(dim, index) if g.dim() else g.reshape(1).index_select(0, index)
        if len(source_shape) == 0:
            gsrc = gsrc.reshape(())
        if alpha != 1:
            gsrc = gsrc * alpha
    return g, gsrc


@rule("index_copy", saves="dim, index, source.shape")
def index_copy(n, g, dim, index, source_shape):
    gs = n[0] and g.index_fill(dim, index, 0)
    gsrc = False
    if n[1]:
        gsrc = g.index_select(dim, index) if g.dim() else g.reshape(1).index_select(0, index)
        if len(source_shape) == 0:
            gsrc = gsrc.reshape(())
    return gs, gsrc


@rule("index_fill.int_Scalar", saves="dim, index")
def index_fill(n, g, dim, index):
    return (g.index_fill(dim, index, 0),)


@rule("index_fill.int_Tensor", saves="dim, index")
def index_fill_tensor(n, g, dim, index):
    gs = n[0] and g.index_fill(dim, index, 0)
    gv = False
    if n[1]:
        idx = T.unique(index.reshape(-1))
        gv = (g.index_select(dim, idx) if g.dim() else g.reshape(1).index_select(0, idx)).sum()
    return gs, gv


@rule("masked_scatter", saves="mask, source.shape")
def masked_scatter(n, g, mask, source_shape):
    gs = n[0] and g.masked_fill(mask, 0)
    gsrc = False
    if n[1]:
        picked = g.masked_select(mask)
        missing = math.prod(source_shape) - picked.numel()
        if missing > 0:
            picked = T.cat([picked, _new_zeros(g, (missing,))])
        gsrc = picked.reshape(list(source_shape))
    return gs, gsrc


@rule("take", saves="self.shape, index")
def take(n, g, shape, index):
    numel = math.prod(shape)
    idx = index.reshape(-1)
    idx = T.where(idx < 0, idx + numel, idx)
    return (_new_zeros(g, (numel,)).index_add(0, idx, g.reshape(-1)).reshape(list(shape)),)


@rule("scatter_reduce.two", saves="self, dim, index, src, reduce, include_self, result")
def scatter_reduce(n, g, self, dim, index, src, reduce, include_self, result):
    if reduce == "sum":
        gs, gsrc = g, n[1] and g.gather(dim, index)
    elif reduce == "mean":
        count = T.ones_like(g) if include_self else T.zeros_like(g)
        count = count.scatter_add(dim, index, T.ones_like(src))
        count = count.masked_fill(count == 0, 1)
        gs = g / count
        gsrc = n[1] and g.gather(dim, index) / count.gather(dim, index)
    elif reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        masked_result = masked_self.scatter_reduce(dim, index, src, "prod", include_self=include_self)
        gs = g * masked_result / masked_self
        gsrc = False
        if n[1]:
            src_zero = src == 0
            zeros_at = T.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index)
            single = src_zero.logical_and(zeros_at == 1)
            masked_src = src.masked_fill(single, 1)
            masked_src_result = self.scatter_reduce(dim, index, masked_src, "prod", include_self=include_self)
            gsrc = T.where(single, (g * masked_src_result).gather(dim, index),
                           (g * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        self_is = (self == result).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        share = g / self_is.scatter_add(dim, index, src_is)
        gs = self_is * share
        gsrc = n[1] and src_is * share.gather(dim, index)
    else:  # pragma: no cover - the kernel rejects other reductions first
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not include_self and n[0]:
        gs = gs.scatter(dim, index, 0)
    return n[0] and gs, gsrc


# ---- not differentiable -------------------------------------------------------------------------------
nondifferentiable("searchsorted.Tensor", "repeat_interleave.Tensor")

