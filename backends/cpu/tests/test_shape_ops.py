"""Shape and indexing ops on cpu against PyTorch: values, dtypes, shapes, strides, storage sharing, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
X = (2, 3, 4)


def _layouts(tc, dtype, shape=X):
    yield tc.pair(dtype, shape)
    # a non-contiguous input: permuted view of a contiguous buffer
    arr = tc.data(dtype, tuple(reversed(shape)))
    yield tc.pair_from_numpy(np.ascontiguousarray(arr).transpose(tuple(range(len(shape)))[::-1]))


# ---- values vs torch, over dtypes ------------------------------------------------------------------------
UNARY = {
    "flip": lambda L, x: L.flip(x, (0, 2)),
    "flip_method": lambda L, x: x.flip(-1),
    "fliplr": lambda L, x: L.fliplr(x),
    "flipud": lambda L, x: L.flipud(x),
    "roll_flat": lambda L, x: L.roll(x, 5),
    "roll_dims": lambda L, x: L.roll(x, (1, -2), (0, 2)),
    "roll_method": lambda L, x: x.roll(-7, 2),
    "rot90": lambda L, x: L.rot90(x),
    "rot90_k2": lambda L, x: L.rot90(x, 2, (1, 2)),
    "rot90_k3": lambda L, x: L.rot90(x, -1, (2, 0)),
    "rot90_k4": lambda L, x: L.rot90(x, 4),
    "repeat": lambda L, x: x.repeat(2, 1, 1, 3),
    "repeat_tuple": lambda L, x: x.repeat((1, 2, 1)),
    "repeat_zero": lambda L, x: x.repeat(1, 0, 1),
    "tile": lambda L, x: L.tile(x, (2,)),
    "tile_more": lambda L, x: x.tile(2, 1, 1, 2),
    "repeat_interleave_int": lambda L, x: L.repeat_interleave(x, 2, dim=1),
    "repeat_interleave_flat": lambda L, x: x.repeat_interleave(3),
    "repeat_interleave_tensor": lambda L, x: L.repeat_interleave(x, L.tensor([2, 0, 1]), dim=1),
    "repeat_interleave_scalar_tensor": lambda L, x: x.repeat_interleave(L.tensor(2), dim=-1),
    "tril": lambda L, x: L.tril(x),
    "tril_k": lambda L, x: L.tril(x, -1),
    "triu": lambda L, x: L.triu(x, 1),
    "triu_big": lambda L, x: x.triu(-5),
    "diag_embed": lambda L, x: L.diag_embed(x),
    "diag_embed_args": lambda L, x: L.diag_embed(x, -1, 0, 2),
    "diagflat": lambda L, x: L.diagflat(x[0], 1),
    "diag_2d": lambda L, x: L.diag(x[0], 1),
    "diag_1d": lambda L, x: L.diag(x[0, 0], -2),
    "narrow_copy": lambda L, x: L.narrow_copy(x, 2, 1, 2),
    "unflatten": lambda L, x: x.unflatten(2, (2, -1)),
    "movedim": lambda L, x: L.movedim(x, 0, -1),
    "moveaxis": lambda L, x: L.moveaxis(x, (0, 1), (2, 0)),
    "movedim_method": lambda L, x: x.movedim((2,), (0,)),
    "swapaxes": lambda L, x: L.swapaxes(x, 0, 2),
    "broadcast_to": lambda L, x: L.broadcast_to(x[:, :1], (5, 2, 3, 4)),
    "tensor_split_n": lambda L, x: L.tensor_split(x, 3, dim=2),
    "tensor_split_idx": lambda L, x: x.tensor_split([1, 3, 10], 2),
    "tensor_split_tensor": lambda L, x: L.tensor_split(x, L.tensor([1, 2]), 1),
    "tensor_split_0d": lambda L, x: L.tensor_split(x, L.tensor(2), 1),
    "hsplit": lambda L, x: L.hsplit(x, 3),
    "vsplit": lambda L, x: L.vsplit(x, [1]),
    "dsplit": lambda L, x: x.dsplit(2),
    "atleast_1d": lambda L, x: L.atleast_1d(x[0, 0, 0]),
    "atleast_2d": lambda L, x: L.atleast_2d(x[0, 0]),
    "atleast_3d_many": lambda L, x: L.atleast_3d(x[0, 0, 0], x[0, 0], x[0], x),
    "atleast_3d_list": lambda L, x: L.atleast_3d([x[0, 0], x]),
    "hstack": lambda L, x: L.hstack([x[0], x[1]]),
    "hstack_1d": lambda L, x: L.hstack((x[0, 0], x[1, 1], x[0, 0, 0])),
    "vstack": lambda L, x: L.vstack([x[0, 0], x[1]]),
    "dstack": lambda L, x: L.dstack([x[0, 0], x[1, 1]]),
    "column_stack": lambda L, x: L.column_stack([x[0, 0], x[1].T, x[0, 0, 0]]),
    "select_scatter": lambda L, x: L.select_scatter(x, x[:, 0] * 0, 1, -1) if x.dtype != L.bool else x,
    "slice_scatter": lambda L, x: L.slice_scatter(x, x[:, :, ::2].flip(2), 2, 0, None, 2),
    "diagonal_scatter": lambda L, x: L.diagonal_scatter(x, x[:, 0, :3], 1, 1, 2),
    "squeeze_dims": lambda L, x: x[:1, :, None, :1].squeeze((0, 2, 3)),
    "trace": lambda L, x: L.trace(x[0]) if x.dtype != L.bool else x,
    "take": lambda L, x: L.take(x, L.tensor([[0, 5], [-1, 23]])),
    "take_along_dim": lambda L, x: L.take_along_dim(x, L.tensor([[[0], [2], [1]]]), 2),
    "take_along_dim_bcast": lambda L, x: L.take_along_dim(x, L.tensor([[[3, 0, 1]]]).mT, -1),
    "take_along_dim_none": lambda L, x: L.take_along_dim(x, L.tensor([0, 7, 23])),
    "masked_select": lambda L, x: L.masked_select(x, L.arange(4) % 2 == 0),
    "masked_select_bcast": lambda L, x: x[0, :, :1].masked_select(L.ones(3, 4, dtype=L.bool).tril()),
    "argwhere": lambda L, x: L.argwhere(x),
    "index_fill": lambda L, x: x.index_fill(1, L.tensor([0, -1]), 1),
    "index_fill_tensor": lambda L, x: L.index_fill(x, 2, L.tensor([3]), L.tensor(True) if x.dtype == L.bool else L.tensor(2).to(x.dtype)),
    "index_copy": lambda L, x: x.index_copy(2, L.tensor([3, 0]), x[:, :, 1:3].flip(2)),
    "masked_scatter": lambda L, x: x.masked_scatter(L.arange(4) > 1, x.flip(0)),
    "cartesian_prod": lambda L, x: L.cartesian_prod(x[0, 0], x[1, 1, :2]),
    "cartesian_prod_one": lambda L, x: L.cartesian_prod(x[0, 0]),
    "block_diag": lambda L, x: L.block_diag(x[0], x[1, 0], x[0, 0, 0], x[1, :2, :1]),
    "combinations": lambda L, x: L.combinations(x[0, 0]),
    "combinations_r": lambda L, x: L.combinations(x[0, 0], 3, with_replacement=True),
    "meshgrid_ij": lambda L, x: L.meshgrid(x[0, 0], x[1, 1, :2], x[0, 1, :3], indexing="ij"),
    "meshgrid_xy": lambda L, x: L.meshgrid([x[0, 0], x[1, 1, :2]], indexing="xy"),
    "broadcast_tensors": lambda L, x: L.broadcast_tensors(x[:, :1], x[0, 0]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_shape_op_values(tc, name, dtype):
    for p in _layouts(tc, dtype):
        tc.compare(UNARY[name], p)


# ---- indexing with reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "bfloat16", "float32", "float64", "complex128", "bool"])
@pytest.mark.parametrize("alpha", [1, 2])
def test_index_add(tc, dtype, alpha):
    x, src = tc.pair(dtype, X), tc.pair(dtype, (2, 4, 4), seed=1)
    if dtype == "bool" and alpha != 1:
        return
    tc.compare(lambda L, a, s: a.index_add(1, L.tensor([0, 2, 0, 1]), s, alpha=alpha), x, src)
    tc.compare(lambda L, a, s: L.index_add(a, 2, L.tensor([3, 3, 0, 1], dtype=L.int32), s.transpose(1, 2)[:, :3]), x, src)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "float16"])
def test_scatter_reduce(tc, reduce, include_self, dtype):
    x, src = tc.pair(dtype, (3, 4)), tc.pair(dtype, (2, 4), seed=3)
    index = np.array([[0, 1, 0, 2], [0, 0, 2, 2]])
    tc.compare(lambda L, a, s: a.scatter_reduce(0, L.tensor(index), s, reduce, include_self=include_self), x, src)
    tc.compare(lambda L, a, s: L.scatter_reduce(a, 1, L.tensor(index.T[:3] % 4), s.T[:3], reduce,
                                                 include_self=include_self), x, src)


def test_scatter_reduce_inplace(tc):
    x, src = tc.pair("float32", (3, 4)), tc.pair("float32", (2, 4), seed=3)
    index = [[0, 1, 0, 2], [0, 0, 2, 2]]
    tc.compare(lambda L, a, s: a.clone().scatter_reduce_(0, L.tensor(index), s, "amax"), x, src)


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_searchsorted(tc, dtype):
    seq = tc.pair_from_numpy(np.array([1, 2, 2, 4, 7]).astype(dtype))
    vals = tc.pair_from_numpy(np.array([[0, 2, 3], [7, 8, 2]]).astype(dtype))
    for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}):
        tc.compare(lambda L, s, v: L.searchsorted(s, v, **kw), seq, vals)
    tc.compare(lambda L, s: L.searchsorted(s, 2), seq)
    tc.compare(lambda L, s: L.searchsorted(s, 2.5, right=True), seq)
    nd = tc.pair_from_numpy(np.array([[1, 3, 5], [2, 4, 6]]).astype(dtype))
    tc.compare(lambda L, s, v: L.searchsorted(s, v), nd, vals)
    unsorted = tc.pair_from_numpy(np.array([4, 1, 7, 2]).astype(dtype))
    tc.compare(lambda L, s, v: L.searchsorted(s, v, sorter=L.tensor([1, 3, 0, 2])), unsorted, vals)
    tc.compare(lambda L, v, s: L.bucketize(v, s), vals, seq)
    tc.compare(lambda L, v, s: L.bucketize(v, s, right=True, out_int32=True), vals, seq)
    tc.compare(lambda L, s: L.bucketize(3, s), seq)


def test_searchsorted_mixed_dtypes(tc):
    seq = tc.pair_from_numpy(np.array([1.0, 2.0, 3.0], np.float32))
    vals = tc.pair_from_numpy(np.array([2, 3], np.int64))
    tc.compare(lambda L, s, v: L.searchsorted(s, v), seq, vals)


def test_repeat_interleave_repeats_only(tc):
    for dt in ("int64", "int32"):
        r = tc.pair_from_numpy(np.array([2, 0, 3]).astype(dt))
        tc.compare(lambda L, r: L.repeat_interleave(r), r)
        tc.compare(lambda L, r: L.repeat_interleave(r, output_size=5), r)


def test_index_put_still_works(tc):
    x = tc.pair("float32", (3, 4))
    tc.compare(lambda L, a: a.index_put((L.tensor([0, 2]),), L.tensor(5.0)), x)


# ---- in-place variants ---------------------------------------------------------------------------------------
INPLACE = {
    "tril_": lambda L, x: x.tril_(-1),
    "triu_": lambda L, x: x.triu_(1),
    "index_add_": lambda L, x: x.index_add_(0, L.tensor([1, 1]), L.ones(2, 4)),
    "index_copy_": lambda L, x: x.index_copy_(1, L.tensor([3, 0]), L.zeros(3, 2)),
    "index_fill_": lambda L, x: x.index_fill_(0, L.tensor([2]), -1.5),
    "index_fill_t": lambda L, x: x.index_fill_(0, L.tensor([2]), L.tensor(-1.5)),
    "masked_scatter_": lambda L, x: x.masked_scatter_(L.tensor([True, False, True, False]), L.arange(12.0)),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(tc, name):
    def run(L, x):
        y = x.clone()
        version = y._version
        r = INPLACE[name](L, y)
        assert r is y
        assert y._version > version
        return y

    tc.compare(run, tc.pair("float32", (3, 4)))


# ---- out= -----------------------------------------------------------------------------------------------------
OUT = {
    "flip": lambda L, x, out: L.flip(x, (0,), out=out),
    "roll": lambda L, x, out: L.roll(x, 1, 0, out=out) if L is torch else L.roll(x, 1, 0) if out is None else L.ops.aten.roll.out(x, [1], [0], out=out),
    "tril": lambda L, x, out: L.tril(x, out=out),
    "hstack": lambda L, x, out: L.hstack([x, x], out=out),
    "take": lambda L, x, out: L.take(x, L.tensor([1, 2]), out=out),
    "diag": lambda L, x, out: L.diag(x, out=out),
    "index_add": lambda L, x, out: L.index_add(x, 0, L.tensor([0]), L.ones(1, 4), out=out),
}


@pytest.mark.parametrize("name", list(OUT))
def test_out(tc, name):
    def run(L, x):
        out = L.empty(0)
        r = OUT[name](L, x, out)
        assert r is out
        return out

    tc.compare(run, tc.pair("float32", (3, 4)))


# ---- factories ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (5, 2, -10), (3, 3, 10)])
def test_tri_indices(tc, args):
    tc.compare(lambda L: L.tril_indices(*args))
    tc.compare(lambda L: L.triu_indices(*args))
    tc.compare(lambda L: L.tril_indices(*args, dtype=L.int32))


def test_empty_tensor_list():
    # Deviation: torch raises RuntimeError("hstack expects a non-empty TensorList"); the generated entry point
    # rejects an empty tensor list before any kernel runs (it cannot pick a backend) with a ValueError.
    with pytest.raises(ValueError, match="non-empty list of Tensors"):
        tp.hstack([])


def test_broadcast_shapes():
    assert tuple(tp.broadcast_shapes((2, 1), (3,), 1, ())) == tuple(torch.broadcast_shapes((2, 1), (3,), 1, ()))
    assert isinstance(tp.broadcast_shapes((2, 1)), tp.Size)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        tp.broadcast_shapes((2,), (3,))


def test_meshgrid_warns_without_indexing():
    with pytest.warns(UserWarning, match="indexing argument"):
        grids = tp.meshgrid(tp.ones(2), tp.ones(3))
    assert tuple(grids[0].shape) == (2, 3)


# ---- views share storage -------------------------------------------------------------------------------------
VIEWS = {
    "movedim": lambda L, x: L.movedim(x, 0, 2),
    "moveaxis": lambda L, x: x.moveaxis(-1, 0),
    "unflatten": lambda L, x: x.unflatten(1, (3, 1)),
    "broadcast_to": lambda L, x: L.broadcast_to(x, (2, 2, 3, 4)),
    "swapaxes": lambda L, x: x.swapaxes(1, 2),
    "diagonal": lambda L, x: L.diagonal(x, 1, 1, 2),
    "tensor_split": lambda L, x: L.tensor_split(x, 2, 2)[1],
    "hsplit": lambda L, x: L.hsplit(x, [1])[1],
    "meshgrid": lambda L, x: L.meshgrid(x[0, 0], x[0, 1], indexing="ij")[1],
    "broadcast_tensors": lambda L, x: L.broadcast_tensors(x, x[0])[1],
    "atleast_3d": lambda L, x: L.atleast_3d(x[0, 0]),
    "unbind": lambda L, x: x.unbind(1)[2],
    "squeeze_dims": lambda L, x: x[:, :1].squeeze((1, 0)),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_share_storage(tc, name):
    p = tc.pair("float32", X)
    ours, theirs = VIEWS[name](tp, p.tp), VIEWS[name](torch, p.th)
    tc.assert_same(ours, theirs)
    assert ours._storage is p.tp._storage
    assert ours._base is not None
    assert ours.stride() == theirs.stride()
    assert ours.storage_offset() == theirs.storage_offset()
    # a write through the view is visible in the base
    before = p.tp.clone()
    ours.fill_(-9.0)
    assert (p.tp == -9.0).any() and not (before == -9.0).any()


COPIES = ["flip", "roll_flat", "repeat", "tile", "rot90_k2", "narrow_copy", "diag_2d", "tril", "take",
          "repeat_interleave_int", "select_scatter"]


@pytest.mark.parametrize("name", COPIES)
def test_copies_own_storage(tc, name):
    p = tc.pair("float32", X)
    ours = UNARY[name](tp, p.tp)
    assert ours._base is None
    assert ours._storage is not p.tp._storage
    assert ours.stride() == UNARY[name](torch, p.th).stride()


@pytest.mark.parametrize("k", [1, 3])
def test_rot90_strides(tc, k):
    p = tc.pair("float32", X)
    ours, theirs = tp.rot90(p.tp, k), torch.rot90(p.th, k)
    assert ours.stride() == theirs.stride()


# ---- errors ---------------------------------------------------------------------------------------------------
ERRORS = {
    "movedim_len": lambda L, x: L.movedim(x, (0, 1), (0,)),
    "movedim_repeat_src": lambda L, x: L.movedim(x, (0, 0), (1, 2)),
    "movedim_repeat_dst": lambda L, x: L.movedim(x, (0, 1), (1, 1)),
    "movedim_range": lambda L, x: L.movedim(x, 3, 0),
    "unflatten_sizes": lambda L, x: x.unflatten(1, (2, 2)),
    "unflatten_empty": lambda L, x: x.unflatten(1, ()),
    "flip_repeat": lambda L, x: L.flip(x, (0, 0)),
    "flip_range": lambda L, x: L.flip(x, (5,)),
    "fliplr_1d": lambda L, x: L.fliplr(x[0, 0]),
    "flipud_0d": lambda L, x: L.flipud(x[0, 0, 0]),
    "roll_empty": lambda L, x: L.roll(x, ()),
    "roll_align": lambda L, x: L.roll(x, (1, 2), (0,)),
    "rot90_dims": lambda L, x: L.rot90(x, 1, (0, 1, 2)),
    "rot90_1d": lambda L, x: L.rot90(x[0, 0], 1),
    "rot90_same": lambda L, x: L.rot90(x, 1, (0, 0)),
    "rot90_range": lambda L, x: L.rot90(x, 1, (0, 5)),
    "repeat_few": lambda L, x: x.repeat(2, 2),
    "repeat_negative": lambda L, x: x.repeat(-1, 2, 2),
    "ri_2d": lambda L, x: L.repeat_interleave(L.ones(2, 2, dtype=L.long)),
    "ri_negative": lambda L, x: L.repeat_interleave(L.tensor([1, -1])),
    "ri_size": lambda L, x: L.repeat_interleave(x, L.tensor([1, 2]), dim=1),
    "ri_dims": lambda L, x: L.repeat_interleave(x, L.tensor([[1, 2]]), dim=0),
    "ri_int_negative": lambda L, x: L.repeat_interleave(x, -1),
    "ri_output_size": lambda L, x: L.repeat_interleave(L.tensor([1, 2]), output_size=5),
    "tril_1d": lambda L, x: L.tril(x[0, 0]),
    "triu_1d": lambda L, x: L.triu(x[0, 0]),
    "diag_3d": lambda L, x: L.diag(x),
    "diag_embed_same": lambda L, x: L.diag_embed(x, 0, 1, 1),
    "trace_3d": lambda L, x: L.trace(x),
    "trace_bool": lambda L, x: L.trace(x[0] > 0),
    "tensor_split_zero": lambda L, x: L.tensor_split(x, 0),
    "tensor_split_0d": lambda L, x: L.tensor_split(x[0, 0, 0], 2),
    "tensor_split_2d": lambda L, x: L.tensor_split(x, L.ones(2, 2, dtype=L.long)),
    "tensor_split_float": lambda L, x: L.tensor_split(x, L.ones(2)),
    "hsplit_0d": lambda L, x: L.hsplit(x[0, 0, 0], 2),
    "hsplit_divisible": lambda L, x: L.hsplit(x, 2),
    "vsplit_1d": lambda L, x: L.vsplit(x[0, 0], 2),
    "dsplit_divisible": lambda L, x: L.dsplit(x, 3),
    "meshgrid_indexing": lambda L, x: L.meshgrid(x[0, 0], indexing="foo"),
    "meshgrid_dtype": lambda L, x: L.meshgrid(x[0, 0], x[0, 0].double(), indexing="ij"),
    "cartesian_2d": lambda L, x: L.cartesian_prod(x[0]),
    "block_diag_3d": lambda L, x: L.block_diag(x),
    "combinations_2d": lambda L, x: L.combinations(x[0]),
    "combinations_negative": lambda L, x: L.combinations(x[0, 0], -1),
    "tril_indices_row": lambda L, x: L.tril_indices(-1, 3),
    "tril_indices_col": lambda L, x: L.tril_indices(3, -3),
    "tril_indices_dtype": lambda L, x: L.tril_indices(3, 3, dtype=L.float32),
    "select_scatter_shape": lambda L, x: L.select_scatter(x, L.ones(3), 0, 0),
    "slice_scatter_shape": lambda L, x: L.slice_scatter(x, L.ones(3), 0, 0),
    "diagonal_scatter_shape": lambda L, x: L.diagonal_scatter(x, L.ones(3)),
    "masked_select_mask": lambda L, x: x.masked_select(L.ones(3, 4)),
    "masked_select_bcast": lambda L, x: x.masked_select(L.ones(5, dtype=L.bool)),
    "masked_scatter_mask": lambda L, x: x.masked_scatter(L.ones(3, 4), L.ones(24)),
    "masked_scatter_few": lambda L, x: x.masked_scatter(L.ones(3, 4, dtype=L.bool), L.ones(11)),
    "masked_scatter_dtype": lambda L, x: x.masked_scatter(L.ones(3, 4, dtype=L.bool), L.ones(24).double()),
    "index_add_bounds": lambda L, x: x.index_add(0, L.tensor([0, 5]), L.ones(2, 3, 4)),
    "index_add_negative": lambda L, x: x.index_add(0, L.tensor([0, -1]), L.ones(2, 3, 4)),
    "index_add_float_index": lambda L, x: x.index_add(0, L.tensor([0, 1.0]), L.ones(2, 3, 4)),
    "index_add_2d_index": lambda L, x: x.index_add(0, L.tensor([[0, 1]]), L.ones(2, 3, 4)),
    "index_add_count": lambda L, x: x.index_add(0, L.tensor([0, 1]), L.ones(3, 3, 4)),
    "index_add_shape": lambda L, x: x.index_add(0, L.tensor([0, 1]), L.ones(2, 3, 5)),
    "index_add_dtype": lambda L, x: x.index_add(0, L.tensor([0, 1]), L.ones(2, 3, 4).double()),
    "index_copy_bounds": lambda L, x: x.index_copy(0, L.tensor([0, 5]), L.ones(2, 3, 4)),
    "index_copy_negative": lambda L, x: x.index_copy(0, L.tensor([0, -1]), L.ones(2, 3, 4)),
    "index_copy_count": lambda L, x: x.index_copy(0, L.tensor([0, 1]), L.ones(3, 3, 4)),
    "index_copy_shape": lambda L, x: x.index_copy(0, L.tensor([0, 1]), L.ones(2, 3, 5)),
    "index_copy_dtype": lambda L, x: x.index_copy(0, L.tensor([0, 1]), L.ones(2, 3, 4).double()),
    "index_copy_float_index": lambda L, x: x.index_copy(0, L.tensor([0, 1.0]), L.ones(2, 3, 4)),
    "index_fill_bounds": lambda L, x: x.index_fill(1, L.tensor([0, 5]), 1.0),
    "index_fill_int32": lambda L, x: x.index_fill(1, L.tensor([0, 1], dtype=L.int32), 1.0),
    "index_fill_value": lambda L, x: x.index_fill(1, L.tensor([0, 1]), L.ones(2)),
    "index_fill_2d": lambda L, x: x.index_fill(1, L.tensor([[0, 1]]), 1.0),
    "take_bounds": lambda L, x: x.take(L.tensor([0, 24])),
    "take_negative": lambda L, x: x.take(L.tensor([0, -25])),
    "take_int32": lambda L, x: x.take(L.tensor([0, 1], dtype=L.int32)),
    "take_empty": lambda L, x: L.zeros(0).take(L.tensor([0])),
    "take_along_dim_ndim": lambda L, x: L.take_along_dim(x, L.zeros(2, dtype=L.long), 0),
    "take_along_dim_dtype": lambda L, x: L.take_along_dim(x, L.zeros(2, 3, 4, dtype=L.int32), 0),
    "scatter_reduce_mode": lambda L, x: x.scatter_reduce(0, L.zeros(2, 3, 4, dtype=L.long), x, "foo"),
    "scatter_reduce_dtype": lambda L, x: x.scatter_reduce(0, L.zeros(2, 3, 4, dtype=L.long), x.double(), "sum"),
    "scatter_reduce_bounds": lambda L, x: x.scatter_reduce(0, L.full((2, 3, 4), 7), x, "sum"),
    "searchsorted_side": lambda L, x: L.searchsorted(x[0, 0], x[0, 0], side="foo"),
    "searchsorted_opposite": lambda L, x: L.searchsorted(x[0, 0], x[0, 0], side="left", right=True),
    "searchsorted_sorter_size": lambda L, x: L.searchsorted(x[0, 0], x[0, 0], sorter=L.tensor([0, 1])),
    "searchsorted_sorter_dtype": lambda L, x: L.searchsorted(x[0, 0], x[0, 0], sorter=L.tensor([0, 1, 2, 3], dtype=L.int32)),
    "searchsorted_leading": lambda L, x: L.searchsorted(x[0], x[1, :2]),
    "searchsorted_0d": lambda L, x: L.searchsorted(x[0, 0, 0], x[0, 0]),
    "bucketize_2d": lambda L, x: L.bucketize(x, x[0]),
    "broadcast_to_bad": lambda L, x: L.broadcast_to(x, (3, 3, 4)),
    "broadcast_tensors_bad": lambda L, x: L.broadcast_tensors(x, L.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(tc, name):
    p = tc.pair("float32", X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tc.compare(ERRORS[name], p)
    assert isinstance(result, Exception), f"torch accepted {name}"
