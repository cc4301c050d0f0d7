"""OpInfos for the shape and indexing rows (``_schemas/shape.py``): flips, rolls, repeats, triangles and
diagonals, split/stack helpers, ``index_*``/``take``, ``scatter_reduce``, ``searchsorted`` and views."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import ALL_DTYPES, COMPLEX_DTYPES, OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
REAL = tuple(d for d in ALL_DTYPES if d not in COMPLEX_DTYPES)
NUMERIC = tuple(d for d in ALL_DTYPES if d != "bool")
REAL_NUMERIC = tuple(d for d in REAL if d != "bool")
IDX = "int64"


def _idx(shape: tuple[int, ...], high: int) -> T:
    return T(shape, dtype=IDX, low=0, high=high)


def _one(*args, **kw):
    """A generator of samples for a (tensor, *args) op over a few layouts."""
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((2, 3, 4)), *args), dict(kw), name="3d")
        yield S((T((2, 3, 4), noncontig=True), *args), dict(kw), name="noncontig")
        yield S((T((2, 3, 4), transposed=True), *args), dict(kw), name="transposed")
    return gen


def _flip(dtype):
    yield from _one((0, 2))(dtype)
    yield S((T((0, 3)), (1,)), name="empty")


def _roll(dtype):
    yield S((T((2, 3, 4)), 5), name="flat")
    yield S((T((2, 3, 4), noncontig=True), (1, -2), (0, 2)), name="dims")
    yield S((T(()), 1), name="0d")


def _matrix(dtype):
    yield S((T((3, 4)),), name="2d")
    yield S((T((2, 3, 4), noncontig=True),), name="batched")
    yield S((T((3, 4)), -1), name="offset")


def _diag(dtype):
    yield S((T((4,)), 1), name="1d")
    yield S((T((3, 4)), -1), name="2d")
    yield S((T((3, 4), transposed=True),), name="transposed")


def _index_add(dtype):
    yield S((T((3, 4)), 0, _idx((5,), 2), T((5, 4))), name="rows")
    yield S((T((3, 4)), 1, _idx((2,), 3), T((3, 2))), {"alpha": 2} if dtype != "bool" else {}, name="alpha")


def _index_copy(dtype):
    yield S((T((3, 4)), 1, T((2,), dtype=IDX, values=[3, 0]), T((3, 2))), name="cols")


def _index_fill(dtype):
    yield S((T((3, 4)), 1, T((2,), dtype=IDX, values=[0, -1]), 1), name="scalar")
    yield S((T((3, 4)), 0, T((1,), dtype=IDX, values=[2]), T(())), name="tensor")


def _take(dtype):
    yield S((T((3, 4)), T((2, 2), dtype=IDX, low=-12, high=11)), name="2d")
    yield S((T((3, 4), noncontig=True), _idx((5,), 11)), name="noncontig")


def _scatter_reduce(reduce: str, include_self: bool):
    def gen(dtype):
        yield S((T((3, 4)), 0, _idx((2, 4), 2), T((2, 4)), reduce), {"include_self": include_self}, name="rows")
        yield S((T((3, 4)), 1, _idx((3, 2), 3), T((3, 2)), reduce), {"include_self": include_self}, name="cols")
    return gen


def _searchsorted(dtype):
    yield S((T((5,), values=[1, 2, 2, 3, 4]), T((2, 3))), name="1d")
    yield S((T((5,), values=[1, 2, 2, 3, 4]), T((2, 3))), {"right": True}, name="right")
    yield S((T((2, 3), values=[[0, 1, 2], [1, 2, 3]]), T((2, 4))), {"side": "right", "out_int32": True}, name="nd")


def _stack_like(dtype):
    yield S(([T((3,)), T((3,))],), name="1d")
    yield S(([T((2, 3)), T((2, 3), noncontig=True)],), name="2d")


def _scatter_into(view: str):
    def gen(dtype):
        if view == "select":
            yield S((T((3, 4)), T((4,)), 0, 1), name="select")
        elif view == "slice":
            yield S((T((4, 3)), T((2, 3)), 0, 0, 4, 2), name="slice")
        else:
            yield S((T((3, 4)), T((3,)), 1), name="diagonal")
    return gen


OPS = [
    OpInfo("flip", _flip, aten=("flip",), supports_out=True, compare_strides_on_data=True),
    OpInfo("fliplr", _one(), aten=("fliplr",)),
    OpInfo("flipud", _one(), aten=("flipud",)),
    OpInfo("roll", _roll, aten=("roll",)),
    OpInfo("rot90", _one(1, (1, 2)), aten=("rot90",)),
    OpInfo("Tensor.repeat", _one(2, 1, 1, 2), aten=("repeat",)),
    OpInfo("tile", _one((2, 1)), aten=("tile",)),
    OpInfo("repeat_interleave.self_int", _one(2, dim=1), op="repeat_interleave",
           aten=("repeat_interleave.self_int",)),
    OpInfo("repeat_interleave.self_Tensor", lambda d: iter([S((T((3, 2)), T((3,), dtype=IDX, low=0, high=2)), {"dim": 0})]),
           op="repeat_interleave", aten=("repeat_interleave.self_Tensor", "repeat_interleave.Tensor"), data_dependent=True),
    OpInfo("tril", _matrix, aten=("tril",), supports_out=True, inplace_variant="Tensor.tril_"),
    OpInfo("triu", _matrix, aten=("triu",), supports_out=True, inplace_variant="Tensor.triu_"),
    OpInfo("diag", _diag, aten=("diag",)),
    OpInfo("diag_embed", _one(1, 0, 2), aten=("diag_embed",)),
    OpInfo("diagflat", _diag, aten=("diagflat",)),
    OpInfo("trace", lambda d: iter([S((T((3, 4)),)), S((T((4, 3), transposed=True),))]), dtypes=NUMERIC, aten=("trace",)),
    OpInfo("narrow_copy", _one(2, 1, 2), aten=("narrow_copy",)),
    OpInfo("movedim", _one((0, 1), (2, 0)), aten=("movedim.intlist",), view=True),
    OpInfo("unflatten", _one(2, (2, 2)), op="Tensor.unflatten", aten=("unflatten.int",), view=True,
           skips=(Skip("torch's view fails for these layouts", samples=("noncontig", "transposed")),)),
    OpInfo("broadcast_to", lambda d: iter([S((T((3, 1)), (2, 3, 4)))]), aten=("broadcast_to",), view=True),
    OpInfo("tensor_split", _one(3, 2), aten=("tensor_split.sections",), view=True),
    OpInfo("tensor_split.indices", _one([1, 3], 2), op="tensor_split", aten=("tensor_split.indices",), view=True),
    OpInfo("hstack", _stack_like, aten=("hstack",), supports_out=True),
    OpInfo("vstack", _stack_like, aten=("vstack",), supports_out=True),
    OpInfo("dstack", _stack_like, aten=("dstack",), supports_out=True),
    OpInfo("column_stack", _stack_like, aten=("column_stack",), supports_out=True),
    OpInfo("atleast_3d", lambda d: iter([S((T(()),)), S((T((3,)),)), S((T((2, 3)),))]), aten=("atleast_3d",)),
    OpInfo("select_scatter", _scatter_into("select"), aten=("select_scatter",)),
    OpInfo("slice_scatter", _scatter_into("slice"), aten=("slice_scatter",)),
    OpInfo("diagonal_scatter", _scatter_into("diagonal"), aten=("diagonal_scatter",)),
    OpInfo("index_add", _index_add, aten=("index_add",), inplace_variant="Tensor.index_add_"),
    OpInfo("index_copy", _index_copy, aten=("index_copy",), inplace_variant="Tensor.index_copy_"),
    OpInfo("index_fill", _index_fill, aten=("index_fill.int_Scalar", "index_fill.int_Tensor"),
           inplace_variant="Tensor.index_fill_"),
    OpInfo("take", _take, aten=("take",), supports_out=True),
    OpInfo("take_along_dim", lambda d: iter([S((T((3, 4)), _idx((3, 2), 3), 1)), S((T((3, 4)), _idx((5,), 11)))]),
           aten=("take_along_dim",)),
    OpInfo("masked_select", lambda d: iter([S((T((3, 4)), T((4,), dtype="bool")))]), aten=("masked_select",),
           data_dependent=True),
    OpInfo("masked_scatter", lambda d: iter([S((T((3, 4)), T((4,), dtype="bool"), T((12,))))]), aten=("masked_scatter",),
           inplace_variant="Tensor.masked_scatter_"),
    OpInfo("argwhere", lambda d: iter([S((T((3, 4)),))]), aten=("argwhere",), data_dependent=True),
    *[OpInfo(f"scatter_reduce.{r}{'' if inc else '_exclude'}", _scatter_reduce(r, inc), op="scatter_reduce",
             dtypes=("int64", "float32", "float64"), aten=("scatter_reduce.two",), inplace_variant="Tensor.scatter_reduce_")
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    OpInfo("searchsorted", _searchsorted, dtypes=REAL_NUMERIC, aten=("searchsorted.Tensor",)),
    OpInfo("bucketize", lambda d: iter([S((T((2, 3)), T((4,), values=[-1, 0, 1, 2])), {"right": True})]), dtypes=REAL_NUMERIC,
           aten=("bucketize.Tensor",)),
    OpInfo("cartesian_prod", lambda d: iter([S((T((2,)), T((3,))))]), aten=("cartesian_prod",)),
    OpInfo("block_diag", lambda d: iter([S((T((2, 2)), T((3,)), T(())))]), aten=("block_diag",)),
    OpInfo("combinations", lambda d: iter([S((T((4,)),)), S((T((3,)), 2, True))]), aten=("combinations",)),
    OpInfo("tril_indices", lambda d: iter([S((3, 4, 1))]), dtypes=("int64",), aten=("tril_indices",), factory=True),
    OpInfo("triu_indices", lambda d: iter([S((4, 3, -1))]), dtypes=("int64",), aten=("triu_indices",), factory=True),
]
