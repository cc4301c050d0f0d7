"""OpInfos for ``_schemas/more.py`` and the nn additions next to it: fmax/fmin, nextafter, igamma/igammac,
ldexp, gcd/lcm, dist, logcumsumexp, diff, renorm, cov/corrcoef, put, index_reduce, fill_diagonal_,
pdist, lp_pool, embedding_bag and max_unpool."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import FLOAT_DTYPES, INT_DTYPES, OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
REAL_NUMERIC = INT_DTYPES + FLOAT_DTYPES
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}
REDUCE_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5), "complex64": (1e-4, 1e-5)}
IDX = "int64"


def _binary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), seed=1)), name="same")
    yield S((T((2, 1, 4)), T((3, 1), seed=1)), name="broadcast", inplace_ok=False)
    yield S((T((3, 4), noncontig=True), T((3, 4), transposed=True, seed=1)), name="noncontig")
    yield S((T((0, 3)), T((3,), seed=1)), name="empty")


def _special_binary(dtype: str) -> Iterator[SampleInput]:
    yield from _binary(dtype)
    yield S((T((3, 4), special=True), T((3, 4), seed=1, special=True)), name="special")


def _positive(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0.1, high=4), T((3, 4), low=0.1, high=4, seed=1)), name="same")
    yield S((T((2, 1, 4), low=0.1, high=4), T((3, 1), low=0.1, high=4, seed=1)), name="broadcast", inplace_ok=False)
    yield S((T((3, 4), low=0.1, high=4, noncontig=True), T((4,), low=0.1, high=4, seed=1)), name="noncontig")


def _ldexp(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), dtype="int64", low=-4, high=4)), name="int_exponent")
    yield S((T((3, 4), noncontig=True), T((4,), dtype="int32", low=-3, high=3)), name="broadcast")


def _dist(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), seed=1)), name="p2")
    yield S((T((3, 4)), T((4,), seed=1), 1), name="p1_broadcast")
    yield S((T((3, 4), noncontig=True), T((3, 4), seed=1), float("inf")), name="pinf")
    yield S((T((3, 4)), T((3, 4), seed=1), 0), name="p0")


def _scan(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 5), low=-3, high=3), 1), name="dim")
    yield S((T((4, 3), noncontig=True, low=-3, high=3), 0), name="noncontig")
    yield S((T((7,), low=-3, high=3), -1), name="1d")
    yield S((T(()), 0), name="0d")


def _diff(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 5)),), name="default")
    yield S((T((3, 5), noncontig=True), 2, 0), name="n2_dim0")
    yield S((T((3, 5)),), {"prepend": T((3, 2), seed=1), "append": T((3, 1), seed=2)}, name="prepend_append")
    yield S((T((4,)), 6), name="n_too_big")


def _renorm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 2, 0, 1.0), name="p2")
    yield S((T((2, 3, 4), noncontig=True), 1, 1, 2.5), name="p1")
    yield S((T((3, 4)), 3, -1, 0.5), name="p3")


def _cov(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 6)),), name="2d")
    yield S((T((6,)),), name="1d")
    yield S((T((3, 6), noncontig=True),), {"correction": 0}, name="correction0")
    yield S((T((3, 6)),), {"fweights": T((6,), dtype="int64", low=0, high=3, seed=1)}, name="fweights")
    if dtype in FLOAT_DTYPES:
        yield S((T((3, 6)),), {"aweights": T((6,), low=0.1, high=2, seed=1)}, name="aweights")


def _corrcoef(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 6)),), name="2d")
    yield S((T((3, 6), noncontig=True),), name="noncontig")


def _put(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((5,), dtype=IDX, values=[0, 5, -1, 11, 3]), T((5,), seed=1)), name="flat")
    yield S((T((3, 4), noncontig=True), T((2, 2), dtype=IDX, values=[[1, 2], [7, -3]]), T((2, 2), seed=1)),
            name="noncontig")
    yield S((T((3, 4)), T((4,), dtype=IDX, values=[1, 1, 2, 1]), T((4,), seed=1), True), name="accumulate")


def _index_reduce(reduce: str):
    def gen(dtype: str) -> Iterator[SampleInput]:
        index = T((5,), dtype=IDX, values=[0, 2, 0, 1, 2])
        yield S((T((3, 4), low=1, high=3), 0, index, T((5, 4), low=1, high=3, seed=1), reduce), name="rows")
        yield S((T((3, 4), low=1, high=3, noncontig=True), 1, T((4,), dtype=IDX, values=[3, 0, 3, 1]),
                 T((3, 4), low=1, high=3, seed=1), reduce), {"include_self": False}, name="exclude_self")
    return gen


def _fill_diagonal(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1), name="wide")
    yield S((T((7, 3)), 1, True), name="tall_wrap")
    yield S((T((7, 3)), 1, False), name="tall")
    yield S((T((3, 3, 3), noncontig=True), 0), name="cube")


def _pdist(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 3)),), name="p2")
    yield S((T((4, 3), noncontig=True), 1), name="p1")
    yield S((T((4, 2)), float("inf")), name="pinf")
    yield S((T((1, 3)),), name="one_row")


def _lp_pool1d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 8), low=0.1, high=2), 2, 3), name="p2")
    yield S((T((2, 3, 9), low=0.1, high=2), 1.5, 2, 2, True), name="ceil")


def _lp_pool2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 6, 6), low=0.1, high=2), 2, 2), name="p2")
    yield S((T((1, 2, 7, 5), low=0.1, high=2), 3, (3, 2), (2, 1)), name="rect")


def _embedding_bag(dtype: str) -> Iterator[SampleInput]:
    idx = T((6,), dtype=IDX, values=[1, 2, 4, 5, 4, 3])
    offsets = T((3,), dtype=IDX, values=[0, 2, 2])
    for mode in ("sum", "mean", "max"):
        yield S((idx, T((7, 3))), {"offsets": offsets, "mode": mode}, name=f"{mode}_offsets")
        yield S((T((2, 3), dtype=IDX, values=[[1, 0, 4], [6, 2, 0]]), T((7, 3))),
                {"mode": mode, "padding_idx": 0}, name=f"{mode}_2d_padding")
    yield S((idx, T((7, 3))), {"offsets": T((4,), dtype=IDX, values=[0, 1, 4, 6]), "include_last_offset": True},
            name="last_offset")
    yield S((idx, T((7, 3))), {"offsets": offsets, "per_sample_weights": T((6,), seed=3)}, name="weights")


# one plane of unique max positions per (n, c): unpooling with duplicates is order-dependent in torch
_UNPOOL_PLANES = {1: [1, 2], 2: [[0, 6], [9, 15]], 3: [[[0, 3], [12, 15]], [[48, 51], [61, 63]]]}


def _max_unpool(nd: int):
    def gen(dtype: str) -> Iterator[SampleInput]:
        shape = (2, 3) + (2,) * nd
        indices = T(shape, dtype=IDX, values=[[_UNPOOL_PLANES[nd]] * 3] * 2)
        yield S((T(shape), indices, 2), name="k2")
        yield S((T(shape, noncontig=True), indices, 2), {"output_size": (5,) * nd}, name="output_size")
    return gen


def _inplace_view(*args):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((2, 3)), *args), name="2d")
        yield S((T((2, 3), noncontig=True), *args), name="noncontig")
    return gen


def _squeeze_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 1, 3, 1)),), name="all")
    yield S((T((2, 1, 3, 1)), 1), name="dim")
    yield S((T((2, 1, 3, 1)), (1, 3)), name="dims")


def _resize_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3)), (3, 2)), name="same_numel")
    yield S((T((2, 3)), (2, 2)), name="smaller")


_SCAN_DTYPES = FLOAT_DTYPES  # (complex: equal to torch's up to 2*pi*i in the imaginary part, see test_more_ops)

OPS = [
    *(OpInfo(n, _special_binary, dtypes=REAL_NUMERIC, aten=(n,), supports_out=True, tolerances=TOL)
      for n in ("fmax", "fmin")),
    OpInfo("nextafter", _special_binary, dtypes=FLOAT_DTYPES, aten=("nextafter",), supports_out=True,
           inplace_variant="Tensor.nextafter_"),
    *(OpInfo(n, _positive, dtypes=("float32", "float64"), aten=(n,), supports_out=True,
             inplace_variant=f"Tensor.{n}_", tolerances={"float32": (1e-4, 1e-6)}) for n in ("igamma", "igammac")),
    OpInfo("ldexp", _ldexp, dtypes=FLOAT_DTYPES, aten=("ldexp.Tensor",), supports_out=True,
           inplace_variant="Tensor.ldexp_", tolerances=TOL),
    *(OpInfo(n, _binary, dtypes=INT_DTYPES, aten=(n,), supports_out=True, inplace_variant=f"Tensor.{n}_")
      for n in ("gcd", "lcm")),
    OpInfo("dist", _dist, dtypes=("float32", "float64"), aten=("dist",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("logcumsumexp", _scan, dtypes=_SCAN_DTYPES, aten=("logcumsumexp",), supports_out=True,
           tolerances=REDUCE_TOL),
    OpInfo("diff", _diff, dtypes=REAL_NUMERIC + ("bool",), aten=("diff",), supports_out=True, tolerances=TOL,
           skips=(Skip("torch's meta sub of half types strides a size-1 dim differently (no effect on layout)",
                       devices=("meta",), dtypes=("float16", "bfloat16"), samples=("n2_dim0",)),)),
    OpInfo("renorm", _renorm, dtypes=("float32", "float64"), aten=("renorm",), supports_out=True,
           inplace_variant="Tensor.renorm_", tolerances=REDUCE_TOL),
    OpInfo("cov", _cov, dtypes=("int64", "float32", "float64", "complex64"), aten=("cov",), tolerances=REDUCE_TOL,
           skips=(Skip("torch's meta cov reads the weights' values (item() of a meta tensor)", devices=("meta",),
                       samples=("fweights", "aweights")),)),
    OpInfo("corrcoef", _corrcoef, dtypes=("float32", "float64", "complex64"), aten=("corrcoef",), tolerances=REDUCE_TOL),
    OpInfo("put", _put, dtypes=REAL_NUMERIC, aten=("put",), supports_out=True, inplace_variant="Tensor.put_",
           skips=(Skip("torch accumulates duplicate float16/bfloat16 positions in another order",
                       dtypes=("float16", "bfloat16"), samples=("accumulate",)),)),
    *(OpInfo(f"index_reduce_{r}", _index_reduce(r), op="index_reduce", dtypes=REAL_NUMERIC, aten=("index_reduce",),
             supports_out=True, inplace_variant="Tensor.index_reduce_", tolerances=TOL)
      for r in ("prod", "mean", "amax", "amin")),
    OpInfo("fill_diagonal_", _fill_diagonal, op="Tensor.fill_diagonal_", dtypes=REAL_NUMERIC,
           aten=("fill_diagonal_",)),
    OpInfo("nn.functional.pdist", _pdist, dtypes=("float32", "float64"), tolerances=REDUCE_TOL),
    OpInfo("nn.functional.lp_pool1d", _lp_pool1d, dtypes=("float32", "float64"), tolerances=REDUCE_TOL),
    OpInfo("nn.functional.lp_pool2d", _lp_pool2d, dtypes=("float32", "float64"), tolerances=REDUCE_TOL),
    OpInfo("nn.functional.embedding_bag", _embedding_bag, dtypes=("float32", "float64"), tolerances=REDUCE_TOL,
           meta_ok=False),
    *(OpInfo(f"nn.functional.max_unpool{nd}d", _max_unpool(nd), dtypes=("float32", "float64"))
      for nd in (1, 2, 3)),
    # metadata changed in place (Tensor methods only)
    OpInfo("Tensor.t_", _inplace_view(), dtypes=("int64", "float32")),
    OpInfo("Tensor.unsqueeze_", _inplace_view(1), dtypes=("int64", "float32")),
    OpInfo("Tensor.transpose_", _inplace_view(0, 1), dtypes=("int64", "float32")),
    OpInfo("Tensor.swapdims_", _inplace_view(1, 0), dtypes=("int64", "float32")),
    OpInfo("Tensor.swapaxes_", _inplace_view(0, -1), dtypes=("int64", "float32")),
    OpInfo("Tensor.squeeze_", _squeeze_, dtypes=("int64", "float32")),
    OpInfo("Tensor.resize_", _resize_, dtypes=("int64", "float32")),
]
