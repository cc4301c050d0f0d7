"""OpInfos for every op of the foundation's table (``_schemas/base.py``): pointwise, reductions, linalg,
joining, indexing, copies, views, factories and random ops."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, Attr, Dtype, OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
REAL = tuple(d for d in ALL_DTYPES if d not in COMPLEX_DTYPES)
NUMERIC = tuple(d for d in ALL_DTYPES if d != "bool")
REAL_NUMERIC = tuple(d for d in REAL if d != "bool")
INTEGRAL = ("bool",) + INT_DTYPES
FLOATING = FLOAT_DTYPES
FLOAT_COMPLEX = FLOAT_DTYPES + COMPLEX_DTYPES
MATMUL = ("int64", "float16", "bfloat16", "float32", "float64", "complex64")
MATMUL_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-4), "complex64": (1e-5, 1e-4)}
REDUCE_TOL = {"float16": (5e-3, 5e-3), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}


# ---- sample generators ---------------------------------------------------------------------------------
def _unary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="2d")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")
    yield S((T((3, 4), noncontig=True),), name="noncontig")
    yield S((T((2, 3, 4), transposed=True),), name="transposed")
    yield S((T((3, 1), expand=(3, 4)),), name="expanded")


def _binary_factory(divisor: bool = False, shift: bool = False, exponent: bool = False, scalars: tuple = (2, 2.5, True)):
    def other(**kw):
        if divisor:
            kw.setdefault("nonzero", True)
        if shift:
            kw.setdefault("low", 0)
            kw.setdefault("high", 3)
        if exponent:
            kw.setdefault("low", 0)
            kw.setdefault("high", 3)
        return T(**kw)

    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4)), other(shape=(3, 4))), name="same")
        yield S((T((2, 1, 4)), other(shape=(3, 1))), name="broadcast")
        yield S((T((3, 4)), other(shape=())), name="0d_other")
        yield S((T(()), other(shape=(3,))), name="0d_self", inplace_ok=False)
        yield S((T((0, 3)), other(shape=(3,))), name="empty")
        yield S((T((3, 4), noncontig=True), other(shape=(3, 4), transposed=True)), name="noncontig")
        yield S((T((3, 4)), other(shape=(4,), dtype="int64" if dtype != "int64" else "float32")), name="mixed")
        yield S((T((3, 4)), other(shape=(), dtype="float64")), name="mixed_0d")
        for i, scalar in enumerate(scalars):
            if (shift or exponent) and isinstance(scalar, float):
                continue
            yield S((T((3, 4)), scalar), name=f"scalar{i}")

    return gen


def _add_sub(dtype: str) -> Iterator[SampleInput]:
    yield from _binary_factory()(dtype)
    if dtype != "bool":
        yield S((T((3, 4)), T((4,))), {"alpha": 2}, name="alpha")


def _div(dtype: str) -> Iterator[SampleInput]:
    yield from _binary_factory(divisor=True)(dtype)
    for mode in ("trunc", "floor"):
        yield S((T((3, 4)), T((3, 4), nonzero=True)), {"rounding_mode": mode}, name=mode)
        yield S((T((3, 4)), 3), {"rounding_mode": mode}, name=f"{mode}_scalar")


def _where(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), dtype="bool"), T((3, 4)), T((3, 4))), name="same")
    yield S((T((2, 1), dtype="bool"), T((3,)), T((2, 3))), name="broadcast")
    yield S((T((3, 4), dtype="bool", transposed=True), T((3, 4), noncontig=True), T(())), name="noncontig")
    yield S((T((3, 4), dtype="bool"), T((3, 4)), 0), name="scalar")
    yield S((T((0, 4), dtype="bool"), T((4,)), T((0, 4))), name="empty")
    yield S((T((3, 4), dtype="bool"), T((3, 4)), T((3, 4), dtype="float64")), name="mixed")


def _lerp(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4)), 0.5), name="scalar_weight")
    yield S((T((3, 4)), T((4,)), T((3, 1), low=0, high=1)), name="tensor_weight")
    yield S((T((3, 4), noncontig=True), T((3, 4)), T(())), name="noncontig")
    yield S((T(()), T(()), 0.25), name="0d")
    yield S((T((0, 4)), T((0, 4)), 0.5), name="empty")


def _addc(divisor: bool):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4)), T((3, 4)), T((3, 4), nonzero=divisor)), name="same")
        yield S((T((3, 4)), T((4,)), T((3, 1), nonzero=divisor)), {"value": 2}, name="broadcast_value")
        yield S((T((3, 4), noncontig=True), T(()), T((3, 4), nonzero=divisor, transposed=True)), name="noncontig")
        yield S((T(()), T(()), T((), nonzero=divisor)), name="0d")
        yield S((T((0, 4)), T((4,)), T((0, 4), nonzero=divisor)), name="empty")

    return gen


def _masked_fill(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), dtype="bool"), 1), name="scalar")
    yield S((T((3, 4)), T((4,), dtype="bool"), True), name="broadcast_mask")
    yield S((T((3, 4), noncontig=True), T((3, 4), dtype="bool", transposed=True), 0), name="noncontig")
    yield S((T((3, 4)), T((3, 4), dtype="bool"), T(())), name="tensor_value")
    yield S((T(()), T((), dtype="bool"), 2), name="0d")
    yield S((T((0, 4)), T((0, 4), dtype="bool"), 1), name="empty")


def _clamp(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True), -1, 2), name="both")
    yield S((T((3, 4)),), {"min": 0}, name="min")
    yield S((T((3, 4), noncontig=True),), {"max": 1}, name="max_noncontig")
    yield S((T(()), -2, 2), name="0d")
    yield S((T((0, 4)), 0, 1), name="empty")
    if dtype != "bool":
        yield S((T((3, 4)), 0.5, 2.5), name="float_bounds", inplace_ok=dtype in FLOAT_COMPLEX)


def _clamp_tensor(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4)), T((3, 4), low=2, high=5)), name="both")
    yield S((T((3, 4)), T((4,))), name="min_broadcast")
    yield S((T((3, 4), noncontig=True),), {"max": T((3, 1))}, name="max_noncontig")
    yield S((T(()), T(()), T(())), name="0d")
    yield S((T((0, 4)), T((4,)), None), name="empty")


def _round(dtype: str) -> Iterator[SampleInput]:
    yield from _unary(dtype)
    if dtype in FLOATING:
        yield S((T((3, 4), values=[[1.25, 2.5, -0.125, 3.5]] * 3),), {"decimals": 1}, name="decimals")


# reductions
def _sum_like(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="full")
    yield S((T((3, 4)), 1), name="dim1")
    yield S((T((2, 3, 4), noncontig=True), (0, 2), True), name="dims_keepdim")
    yield S((T((3, 4), transposed=True), -1), name="negdim")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")
    yield S((T((0, 3)), 0), name="empty_dim")
    yield S((T((3, 4)), []), name="empty_dimlist")


def _sum_dtype(dtype: str) -> Iterator[SampleInput]:
    yield from _sum_like(dtype)
    yield S((T((3, 4)),), {"dtype": Dtype("float64")}, name="dtype_kw", out_ok=False)


def _prod(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=-2, high=2),), name="full")
    yield S((T((3, 4), low=-2, high=2), 1), name="dim1")
    yield S((T((2, 3, 4), low=-2, high=2, noncontig=True), 2, True), name="keepdim_noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)), 1), name="empty")


def _amax(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="all")
    yield S((T((3, 4)), 1), name="dim1")
    yield S((T((2, 3, 4), noncontig=True), (0, 2), True), name="dims_keepdim")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)), 1), name="empty_ok")
    yield S((T((0, 3)),), name="empty_error")


def _full_minmax(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="2d")
    yield S((T((3, 4), noncontig=True),), name="noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty_error")


def _dim_minmax(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), values=[[1, 3, 3, 0], [2, 2, 1, 1], [0, 0, 0, 0]]), 1), name="ties")
    yield S((T((2, 3, 4), noncontig=True), 0, True), name="keepdim_noncontig")
    yield S((T((3, 4)), -1), name="negdim")
    yield S((T(()), 0), name="0d")
    yield S((T((3, 0)), 0), name="empty_ok")


def _arg(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), values=[[1, 3, 3, 0], [2, 2, 1, 1], [0, 0, 0, 0]]),), name="flat_ties")
    yield S((T((3, 4)), 1), name="dim1")
    yield S((T((2, 3, 4), noncontig=True), 0, True), name="keepdim_noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty_error")


def _var(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="full")
    yield S((T((3, 4)), 1), name="dim1")
    yield S((T((2, 3, 4), noncontig=True), (0, 2)), {"keepdim": True}, name="dims_keepdim")
    yield S((T((3, 4)), 0), {"correction": 0}, name="correction0")
    yield S((T((3, 4)),), {"unbiased": False}, name="unbiased_false")
    yield S((T((3, 4)), None), {"correction": 2}, name="correction2")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)), 1), name="empty")


def _all_any(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="full")
    yield S((T((3, 4)), 1), name="dim1")
    yield S((T((2, 3, 4), noncontig=True), (0, 2), True), name="dims_keepdim")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")
    yield S((T((0, 3)), 1), name="empty_dim")


# linear algebra
def _mm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((4, 5))), name="2d")
    yield S((T((3, 4), noncontig=True), T((4, 2), transposed=True)), name="noncontig")
    yield S((T((0, 4)), T((4, 3))), name="empty")
    yield S((T((3, 0)), T((0, 2))), name="empty_inner")
    yield S((T((3, 4)), T((5, 2))), name="mismatch")


def _bmm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4)), T((2, 4, 5))), name="3d")
    yield S((T((2, 3, 4), noncontig=True), T((2, 4, 2), transposed=True)), name="noncontig")
    yield S((T((0, 3, 4)), T((0, 4, 2))), name="empty")


def _mv(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((4,))), name="2d")
    yield S((T((3, 4), transposed=True), T((4,), noncontig=True)), name="noncontig")
    yield S((T((0, 4)), T((4,))), name="empty")


def _dot(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4,)), T((4,))), name="1d")
    yield S((T((4,), noncontig=True), T((4,), noncontig=True)), name="noncontig")
    yield S((T((0,)), T((0,))), name="empty")
    yield S((T((4,)), T((3,))), name="mismatch")


def _matmul(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4,)), T((4,))), name="1d_1d")
    yield S((T((3, 4)), T((4,))), name="2d_1d")
    yield S((T((4,)), T((4, 3))), name="1d_2d")
    yield S((T((3, 4)), T((4, 5))), name="2d_2d")
    yield S((T((2, 3, 4)), T((4, 5))), name="3d_2d")
    yield S((T((4,)), T((2, 4, 3))), name="1d_3d")
    yield S((T((2, 1, 3, 4)), T((5, 4, 2))), name="batch_broadcast")
    yield S((T((2, 3, 4), noncontig=True), T((2, 4, 2), transposed=True)), name="noncontig")
    yield S((T((0, 3, 4)), T((4, 2))), name="empty")


def _addmm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 5)), T((3, 4)), T((4, 5))), name="2d")
    yield S((T((5,)), T((3, 4)), T((4, 5))), {"beta": 2, "alpha": 3}, name="broadcast_beta_alpha", inplace_ok=False)
    yield S((T((3, 2), noncontig=True), T((3, 4), transposed=True), T((4, 2))), name="noncontig")
    yield S((T((0, 2)), T((0, 4)), T((4, 2))), name="empty")


# joining
def _cat(dtype: str) -> Iterator[SampleInput]:
    yield S(([T((2, 3)), T((1, 3)), T((4, 3))],), name="dim0")
    yield S(([T((2, 3)), T((2, 1), noncontig=True)], 1), name="dim1_noncontig")
    yield S(([T((2, 3)), T((2, 3), dtype="float64")], -1), name="promote")
    yield S(([T((2, 3)), T((0,))],), name="legacy_empty")
    yield S(([T((0, 3)), T((0, 3))],), name="empty")
    yield S(([T((2, 3)), T((2, 4))],), name="mismatch")
    yield S(([T(())],), name="0d_error")


def _stack(dtype: str) -> Iterator[SampleInput]:
    yield S(([T((2, 3)), T((2, 3)), T((2, 3))],), name="dim0")
    yield S(([T((2, 3), noncontig=True), T((2, 3))], 2), name="last_noncontig")
    yield S(([T(()), T(())], 0), name="0d")
    yield S(([T((2, 3)), T((2, 3), dtype="int64")], -1), name="promote")
    yield S(([T((2, 3)), T((3, 2))],), name="mismatch")


def _split(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), 2), name="int")
    yield S((T((5, 4), noncontig=True), 3, 1), name="int_dim1")
    yield S((T((5, 4)), [1, 4]), name="sizes")
    yield S((T((5, 4)), [2, 0, 2], 1), name="sizes_zero")
    yield S((T((0, 4)), 2), name="empty")


def _split_with_sizes(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), [1, 4]), name="sizes")
    yield S((T((5, 4), transposed=True), [3, 1], 1), name="dim1")
    yield S((T((5, 4)), [2, 2]), name="bad_sum")


def _chunk(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), 2), name="uneven")
    yield S((T((6, 4), noncontig=True), 3, 1), name="dim1")
    yield S((T((2, 4)), 5), name="more_chunks")
    yield S((T((0, 4)), 2), name="empty")


def _unbind(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="dim0")
    yield S((T((2, 3, 4), noncontig=True), 2), name="dim2")
    yield S((T((0, 4)), 0), name="empty")


# indexing
def _gather(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1, T((3, 2), dtype="int64", low=0, high=3)), name="dim1")
    yield S((T((3, 4), noncontig=True), 0, T((2, 4), dtype="int64", low=0, high=2)), name="dim0_noncontig")
    yield S((T((3, 4)), -1, T((3, 4), dtype="int64", values=[[0, 1, 2, 3], [3, 2, 1, 0], [0, -5, 0, 0]])),
            name="negative_index_error")
    yield S((T(()), 0, T((), dtype="int64", low=0, high=0)), name="0d")
    yield S((T((3, 4)), 1, T((3, 0), dtype="int64")), name="empty_index")
    yield S((T((3, 4)), 1, T((3, 2), dtype="float32", low=0, high=3)), name="float_index_error")


def _scatter_src(dtype: str) -> Iterator[SampleInput]:
    # unique indices per row: scatter's result is deterministic
    yield S((T((3, 4)), 1, T((3, 2), dtype="int64", values=[[0, 2], [1, 3], [3, 0]]), T((3, 4))), name="dim1")
    yield S((T((3, 4), noncontig=True), 0, T((2, 4), dtype="int64", values=[[0, 1, 2, 0], [2, 0, 1, 1]]), T((2, 4))),
            name="dim0_noncontig")
    yield S((T((3, 4)), 1, T((3, 0), dtype="int64"), T((3, 4))), name="empty_index")
    yield S((T((3, 4)), 1, T((3, 2), dtype="int64", values=[[0, 4], [0, 0], [0, 0]]), T((3, 4))), name="out_of_range")


def _scatter_value(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1, T((3, 2), dtype="int64", values=[[0, 2], [1, 1], [3, 0]])), {"value": 1}, name="dim1")
    yield S((T((3, 4), noncontig=True), 0, T((2, 4), dtype="int64", low=0, high=2)), {"value": 0}, name="noncontig")


def _scatter_reduce_legacy(dtype: str) -> Iterator[SampleInput]:
    # scatter(src, reduce='add'|'multiply'): unique indices per row, so the reduction order cannot matter
    for reduce in ("add", "multiply"):
        yield S((T((3, 4)), 1, T((3, 2), dtype="int64", values=[[0, 2], [1, 3], [3, 0]]), T((3, 4))),
                {"reduce": reduce}, name=f"dim1_{reduce}")
        yield S((T((3, 4), noncontig=True), 0, T((2, 4), dtype="int64", values=[[0, 1, 2, 0], [2, 0, 1, 1]]),
                 T((2, 4))), {"reduce": reduce}, name=f"dim0_noncontig_{reduce}")


def _scatter_value_reduce(dtype: str) -> Iterator[SampleInput]:
    for reduce in ("add", "multiply"):
        yield S((T((3, 4)), 1, T((3, 2), dtype="int64", values=[[0, 2], [1, 1], [3, 0]])), {"value": 2, "reduce": reduce},
                name=f"dim1_{reduce}")


def _scatter_add(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1, T((3, 3), dtype="int64", low=0, high=3), T((3, 4))), name="dim1_repeats")
    yield S((T((3, 4), noncontig=True), 0, T((5, 4), dtype="int64", low=0, high=2), T((5, 4))), name="dim0_noncontig")
    yield S((T(()), 0, T((), dtype="int64", low=0, high=0), T(())), name="0d")


def _index_select(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1, T((5,), dtype="int64", low=0, high=3)), name="dim1")
    yield S((T((3, 4), noncontig=True), 0, T((2,), dtype="int32", low=0, high=2)), name="int32_noncontig")
    yield S((T((3, 4)), 0, T((0,), dtype="int64")), name="empty_index")
    yield S((T(()), 0, T((1,), dtype="int64", low=0, high=0)), name="0d")
    yield S((T((3, 4)), 0, T((2,), dtype="float32", low=0, high=2)), name="float_index_error")
    yield S((T((3, 4)), 0, T((2,), dtype="int64", values=[0, 3])), name="out_of_range")


def _index(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), [T((2,), dtype="int64", low=0, high=2)]), name="int")
    yield S((T((3, 4), noncontig=True), [None, T((2, 2), dtype="int64", low=-4, high=3)]), name="none_2d_noncontig")
    yield S((T((3, 4)), [T((2,), dtype="int64", low=0, high=2), T((2,), dtype="int64", low=0, high=3)]), name="pair")
    yield S((T((3, 4)), [T((3, 4), dtype="bool")]), name="bool_mask", data_dependent=True)
    yield S((T((3, 4)), [T((0,), dtype="int64")]), name="empty_index")
    yield S((T((3, 4)), [T((2,), dtype="int64", values=[0, 3])]), name="out_of_range")


def _index_put(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), [T((2,), dtype="int64", values=[0, 2])], T((4,))), name="rows")
    yield S((T((3, 4)), [T((3,), dtype="int64", values=[0, 0, 2]), T((3,), dtype="int64", values=[1, 1, 3])], T(())),
            {"accumulate": True}, name="accumulate_repeats")
    yield S((T((3, 4), noncontig=True), [None, T((2,), dtype="int64", values=[3, 1])], T((3, 2))), name="none_noncontig")
    yield S((T((3, 4)), [T((3, 4), dtype="bool")], T(())), name="bool_mask")


def _nonzero(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="2d")
    yield S((T((2, 3, 4), noncontig=True),), name="noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")


# copies
def _copy(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), dtype="float64")), name="from_float64")
    yield S((T((3, 4)), T((4,), dtype="int32")), name="broadcast_int32")
    yield S((T((3, 4), noncontig=True), T((3, 4), transposed=True)), name="noncontig")
    yield S((T(()), T((), dtype="bool")), name="0d_bool")
    yield S((T((0, 4)), T((4,))), name="empty")
    yield S((T((3, 4)), T((3, 4), dtype="complex64")), name="from_complex")
    yield S((T((3, 4)), T((2, 4))), name="bad_shape")


def _fill_scalar(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1), name="int")
    yield S((T((3, 4), noncontig=True), True), name="bool_noncontig")
    yield S((T(()), 2), name="0d")
    yield S((T((0, 4)), 1), name="empty")
    if dtype in FLOAT_COMPLEX:
        yield S((T((3, 4)), 2.5), name="float")


def _fill_tensor(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T(())), name="0d_value")
    yield S((T((3, 4), noncontig=True), T((), dtype="int64")), name="int_value_noncontig")
    yield S((T((3, 4)), T((1,))), name="1d_value_error")


def _self_only(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="2d")
    yield S((T((3, 4), noncontig=True),), name="noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 4)),), name="empty")


def _clone(dtype: str) -> Iterator[SampleInput]:
    yield from _self_only(dtype)
    yield S((T((3, 4), transposed=True),), name="transposed_preserve")
    yield S((T((2, 3, 4, 5), noncontig=True),), {"memory_format": Attr("contiguous_format")}, name="contiguous_format")


def _to(dtype: str) -> Iterator[SampleInput]:
    for target in ("bool", "int32", "float64", "bfloat16", "complex64"):
        yield S((T((3, 4)), Dtype(target)), name=f"to_{target}")
    yield S((T((3, 4), noncontig=True), Dtype("float32")), name="noncontig")
    yield S((T(()), Dtype("int64")), name="0d")
    yield S((T((0, 4)), Dtype("float16")), name="empty")


# views
def _as_strided(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), (2, 2), (1, 2)), name="overlap")
    yield S((T((3, 4)), (2, 3), (4, 1), 1), name="offset")
    yield S((T((3, 4)), (0, 2), (1, 1)), name="empty")
    yield S((T((3, 4)), (), ()), name="0d")


def _view(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), (4, 3)), name="2d")
    yield S((T((3, 4)), (-1,)), name="infer")
    yield S((T((2, 3, 4), noncontig=True), (2, 3, 2, 2)), name="split_last")
    yield S((T((3, 4), transposed=True), (12,)), name="incompatible")
    yield S((T(()), (1, 1)), name="0d")
    yield S((T((0, 4)), (4, 0)), name="empty")
    yield S((T((3, 4)), (5, -1)), name="invalid")


def _view_dtype(dtype: str) -> Iterator[SampleInput]:
    same = {"bool": "uint8", "uint8": "int8", "int8": "bool", "int16": "float16", "int32": "float32",
            "int64": "float64", "float16": "bfloat16", "bfloat16": "int16", "float32": "int32", "float64": "int64",
            "complex64": "float64", "complex128": "complex128"}
    yield S((T((3, 4)), Dtype(same[dtype])), name="same_size")
    yield S((T((0, 4)), Dtype(same[dtype])), name="empty")


def _reshape(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), (4, 3)), name="view")
    yield S((T((3, 4), transposed=True), (12,)), name="copy")
    yield S((T((2, 3, 4), noncontig=True), (6, -1)), name="noncontig")
    yield S((T(()), (1,)), name="0d")
    yield S((T((0, 4)), (0, 2, 2)), name="empty")
    yield S((T((3, 4)), (5, -1)), name="invalid")


def _permute(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4)), (2, 0, 1)), name="3d")
    yield S((T((2, 3, 4), noncontig=True), (-1, 1, 0)), name="negative_noncontig")
    yield S((T(()), ()), name="0d")
    yield S((T((2, 3)), (0, 0)), name="repeated")


def _transpose(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4)), 0, 2), name="3d")
    yield S((T((3, 4), noncontig=True), -1, 0), name="negative")
    yield S((T(()), 0, -1), name="0d")
    yield S((T((3, 4)), 0, 2), name="out_of_range")


def _t(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="2d")
    yield S((T((4,)),), name="1d")
    yield S((T(()),), name="0d")
    yield S((T((3, 4), noncontig=True),), name="noncontig")
    yield S((T((2, 3, 4)),), name="3d_error")


def _expand(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 1)), (3, 4)), name="2d")
    yield S((T((4,)), (2, 3, 4)), name="new_dims")
    yield S((T((3, 1), noncontig=True), (-1, 5)), name="minus_one_noncontig")
    yield S((T(()), (2, 2)), name="0d")
    yield S((T((3, 2)), (3, 4)), name="bad")


def _squeeze(dtype: str) -> Iterator[SampleInput]:
    yield S((T((1, 3, 1, 4)),), name="all")
    yield S((T((1, 3, 1, 4)), 2), name="dim")
    yield S((T((1, 3, 1, 4), noncontig=True), (0, 1)), name="dims_noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 1)),), name="empty")


def _unsqueeze(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0), name="front")
    yield S((T((3, 4), noncontig=True), -1), name="back_noncontig")
    yield S((T(()), 0), name="0d")
    yield S((T((3, 4)), 3), name="out_of_range")


def _narrow(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), 0, 1, 3), name="dim0")
    yield S((T((5, 4), noncontig=True), 1, -3, 2), name="negative_start")
    yield S((T((5, 4)), 0, 2, 0), name="empty")
    yield S((T((5, 4)), 0, 3, 3), name="too_long")


def _select(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0, 1), name="dim0")
    yield S((T((3, 4), noncontig=True), 1, -1), name="negative_noncontig")
    yield S((T((3, 4)), 0, 3), name="out_of_range")


def _slice(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), 0, 1, 4, 2), name="step")
    yield S((T((5, 4), noncontig=True), 1, -3, None), name="negative_start")
    yield S((T((5, 4)), 0, 3, 1), name="empty")
    yield S((T((5, 4)), 1, 0, 100), name="clamped_end")


def _unfold(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 7)), 1, 3, 2), name="dim1")
    yield S((T((6, 4), noncontig=True), 0, 2, 2), name="dim0_noncontig")
    yield S((T(()), 0, 1, 1), name="0d")
    yield S((T((3, 4)), 1, 5, 1), name="too_big")


def _diagonal(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="main")
    yield S((T((3, 4)), 1), name="offset")
    yield S((T((3, 4)), -2), name="negative_offset")
    yield S((T((2, 3, 4), noncontig=True), 0, 2, 0), name="dims_noncontig")
    yield S((T((3, 4)), 5), name="empty")


def _flatten(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4)),), name="all")
    yield S((T((2, 3, 4)), 1), name="start1")
    yield S((T((2, 3, 4), noncontig=True), 0, 1), name="noncontig_copy")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")


# factories
def _empty(dtype: str) -> Iterator[SampleInput]:
    yield S(((3, 4),), {"dtype": Dtype(dtype)}, name="2d")
    yield S(((),), {"dtype": Dtype(dtype)}, name="0d")
    yield S(((0, 2),), {"dtype": Dtype(dtype)}, name="empty")


def _empty_strided(dtype: str) -> Iterator[SampleInput]:
    yield S(((3, 4), (1, 3)), {"dtype": Dtype(dtype)}, name="transposed")
    yield S(((2, 3), (0, 1)), {"dtype": Dtype(dtype)}, name="stride0")


def _full(dtype: str) -> Iterator[SampleInput]:
    yield S(((3, 4), 1), {"dtype": Dtype(dtype)}, name="int_value")
    yield S(((), True), {"dtype": Dtype(dtype)}, name="0d")
    yield S(((0, 2), 1), {"dtype": Dtype(dtype)}, name="empty")
    yield S(((2, 2), 2.5), name="infer_float")
    yield S(((2, 2), 3), name="infer_int")
    yield S(((2, 2), False), name="infer_bool")


def _arange(dtype: str) -> Iterator[SampleInput]:
    yield S((0, 5, 1), {"dtype": Dtype(dtype)}, name="ints")
    yield S((5, 0, -2), {"dtype": Dtype(dtype)}, name="descending")
    yield S((0, 0, 1), {"dtype": Dtype(dtype)}, name="empty")
    yield S((0.5, 3.0, 0.5), name="infer_float")
    yield S((1, 10, 3), name="infer_int")


def _linspace(dtype: str) -> Iterator[SampleInput]:
    yield S((0, 10, 5), {"dtype": Dtype(dtype)}, name="five")
    yield S((-1, 1, 1), {"dtype": Dtype(dtype)}, name="one")
    yield S((0, 1, 0), {"dtype": Dtype(dtype)}, name="zero")
    yield S((1.5, -2.5, 7), name="default_dtype")


def _logspace(dtype: str) -> Iterator[SampleInput]:
    yield S((0, 2, 3), {"dtype": Dtype(dtype)}, name="base10")
    yield S((0, 3, 4, 2.0), {"dtype": Dtype(dtype)}, name="base2")
    yield S((0, 1, 0), {"dtype": Dtype(dtype)}, name="zero")


def _eye(dtype: str) -> Iterator[SampleInput]:
    yield S((3,), {"dtype": Dtype(dtype)}, name="square")
    yield S((2, 4), {"dtype": Dtype(dtype)}, name="rect")
    yield S((0,), {"dtype": Dtype(dtype)}, name="empty")


def _randperm(dtype: str) -> Iterator[SampleInput]:
    yield S((5,), {"dtype": Dtype(dtype)}, name="five")
    yield S((0,), {"dtype": Dtype(dtype)}, name="empty")


# random (in place on an allocated tensor)
def _uniform(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    yield S((T((3, 4), noncontig=True), -1.0, 1.0), name="range_noncontig")
    yield S((T(()),), name="0d")


def _normal(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    yield S((T((3, 4), noncontig=True), 2.0, 0.5), name="mean_std_noncontig")


def _random(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0, 2), name="from_to")
    yield S((T((3, 4), noncontig=True), 2), name="to_noncontig")
    yield S((T((3, 4)),), name="default")


def _bernoulli(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0, high=1),), name="probs")
    yield S((T((3, 4), low=0, high=1, noncontig=True),), name="noncontig")


def _bernoulli_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0.3), name="p")
    yield S((T((3, 4), noncontig=True),), name="default_noncontig")
    yield S((T((3, 4)), T((4,), dtype="float64", low=0, high=1)), name="tensor_p")


def _bernoulli_p(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0.3), name="p")
    yield S((T((2, 5), noncontig=True), 0.7), name="p_noncontig")


def _exponential_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    yield S((T((3, 4), noncontig=True), 2.5), name="lambd_noncontig")


def _geometric_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 0.3), name="p")
    yield S((T((3, 4), noncontig=True), 0.8), name="p_noncontig")


def _log_normal_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    yield S((T((3, 4), noncontig=True), 0.5, 0.25), name="mean_std_noncontig")


def _cauchy_(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    yield S((T((3, 4), noncontig=True), -1.0, 0.5), name="median_sigma_noncontig")


def _poisson(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0, high=30),), name="rates")
    yield S((T((3, 4), low=0, high=5, noncontig=True),), name="noncontig")


def _multinomial(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4,), low=0.1, high=1), 2), name="1d")
    yield S((T((3, 4), low=0.1, high=1), 5, True), name="2d_replacement")


# ---- the table ---------------------------------------------------------------------------------------------
def _unary_op(name: str, dtypes: tuple[str, ...] = ALL_DTYPES, **kw: object) -> OpInfo:
    return OpInfo(name, kw.pop("sample_inputs", _unary), dtypes=dtypes, aten=kw.pop("aten", (name,)),  # type: ignore[arg-type]
                  supports_out=kw.pop("supports_out", True), inplace_variant=kw.pop("inplace_variant", f"Tensor.{name}_"),  # type: ignore[arg-type]
                  **kw)  # type: ignore[arg-type]


_TRANSCENDENTAL = ("exp log sqrt rsqrt sin cos tan tanh sigmoid reciprocal log1p expm1 log2 log10 exp2 asin acos atan "
                   "sinh cosh asinh acosh atanh").split()
_TRANS_TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}

UNARY_OPS = [
    _unary_op("abs"), _unary_op("neg"), _unary_op("sign"), _unary_op("square"),
    *(_unary_op(n, tolerances=_TRANS_TOL) for n in _TRANSCENDENTAL),
    *(_unary_op(n, REAL) for n in ("floor", "ceil", "trunc", "frac")),
    _unary_op("round", REAL, sample_inputs=_round, aten=("round",)),
    _unary_op("relu", REAL, supports_out=False),
    _unary_op("logical_not"), _unary_op("bitwise_not"),
    *(_unary_op(n, supports_out=False, inplace_variant=None) for n in ("isnan", "isinf", "isfinite")),
]

_BINARY_PLAIN = {
    "mul": ALL_DTYPES, "maximum": REAL, "minimum": REAL, "atan2": REAL, "logical_and": ALL_DTYPES,
    "logical_or": ALL_DTYPES, "logical_xor": ALL_DTYPES, "bitwise_and": ALL_DTYPES, "bitwise_or": ALL_DTYPES,
    "bitwise_xor": ALL_DTYPES,
}
BINARY_OPS = [
    OpInfo("add", _add_sub, aten=("add.Tensor",), supports_out=True, inplace_variant="Tensor.add_"),
    OpInfo("sub", _add_sub, aten=("sub.Tensor",), supports_out=True, inplace_variant="Tensor.sub_"),
    OpInfo("div", _div, aten=("div.Tensor",), supports_out=True, inplace_variant="Tensor.div_", tolerances=_TRANS_TOL,
           skips=(Skip("known cpu bug: bfloat16 div(rounding_mode='trunc') rounds the quotient to bfloat16 before "
                       "truncating (torch truncates the float32 quotient)", dtypes=("bfloat16",), samples=("trunc",)),)),
    OpInfo("pow", _binary_factory(exponent=True), aten=("pow.Tensor_Tensor",), supports_out=True,
           inplace_variant="Tensor.pow_", tolerances=_TRANS_TOL,
           skips=(Skip("known meta gap: pow of two bool tensors returns bool instead of raising torch cpu's "
                       "NotImplementedError (torch's own meta kernel returns int64)", dtypes=("bool",),
                       devices=("meta",)),)),
    *(OpInfo(n, _binary_factory(), aten=(f"{n}.Tensor",), supports_out=True, inplace_variant=f"Tensor.{n}_")
      for n in ("eq", "ne", "lt", "le", "gt", "ge")),
    *(OpInfo(n, _binary_factory(), dtypes=d, aten=(n,), supports_out=True,
             inplace_variant=None if n in ("maximum", "minimum") else f"Tensor.{n}_",  # torch has no maximum_
             tolerances=_TRANS_TOL) for n, d in _BINARY_PLAIN.items()),
    *(OpInfo(n, _binary_factory(divisor=True), dtypes=REAL, aten=(n,), supports_out=True, inplace_variant=f"Tensor.{n}_")
      for n in ("remainder", "fmod", "floor_divide")),
    *(OpInfo(n, _binary_factory(shift=True, scalars=(1, True)), dtypes=INTEGRAL + ("float32",), aten=(n,),
             supports_out=True, inplace_variant=f"Tensor.{n}_")
      for n in ("bitwise_left_shift", "bitwise_right_shift")),
]

TERNARY_OPS = [
    OpInfo("where", _where, aten=("where.self",), supports_out=True),
    OpInfo("lerp", _lerp, dtypes=FLOAT_COMPLEX, aten=("lerp.Tensor",), supports_out=True, inplace_variant="Tensor.lerp_",
           tolerances=_TRANS_TOL),
    OpInfo("addcmul", _addc(False), dtypes=NUMERIC, aten=("addcmul",), supports_out=True,
           inplace_variant="Tensor.addcmul_"),
    OpInfo("addcdiv", _addc(True), dtypes=NUMERIC, aten=("addcdiv",), supports_out=True,
           inplace_variant="Tensor.addcdiv_", tolerances=_TRANS_TOL),
    OpInfo("masked_fill", _masked_fill, aten=("masked_fill.Scalar", "masked_fill.Tensor"),
           inplace_variant="Tensor.masked_fill_"),
    OpInfo("clamp", _clamp, dtypes=REAL, aten=("clamp",), supports_out=True, inplace_variant="Tensor.clamp_",
           skips=(Skip("torch's clamp_ cast error spells the output type 'bool' (elsewhere 'Bool')", dtypes=("bool",),
                       variant="inplace"),)),
    OpInfo("clamp.Tensor", _clamp_tensor, dtypes=REAL_NUMERIC, op="clamp", aten=("clamp.Tensor",), supports_out=True,
           inplace_variant="Tensor.clamp_"),
]

REDUCTION_OPS = [
    OpInfo("sum", _sum_dtype, aten=("sum",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("mean", _sum_dtype, aten=("mean",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("prod", _prod, aten=("prod",), supports_out=True, tolerances=REDUCE_TOL),
    *(OpInfo(n, _amax, dtypes=REAL, aten=(n,), supports_out=True) for n in ("amax", "amin")),
    OpInfo("max", _full_minmax, dtypes=REAL, aten=("max",)),
    OpInfo("min", _full_minmax, dtypes=REAL, aten=("min",)),
    OpInfo("max.dim", _dim_minmax, dtypes=REAL, op="max", aten=("max.dim",)),
    OpInfo("min.dim", _dim_minmax, dtypes=REAL, op="min", aten=("min.dim",)),
    *(OpInfo(n, _arg, dtypes=REAL, aten=(n,), supports_out=True) for n in ("argmax", "argmin")),
    OpInfo("var", _var, dtypes=FLOAT_COMPLEX + ("int64",), aten=("var",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("std", _var, dtypes=FLOAT_COMPLEX + ("int64",), aten=("std",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("all", _all_any, aten=("all",), supports_out=True),
    OpInfo("any", _all_any, aten=("any",), supports_out=True),
]

LINALG_OPS = [
    OpInfo("mm", _mm, dtypes=MATMUL + ("bool",), aten=("mm",), supports_out=True, tolerances=MATMUL_TOL,
           skips=(Skip("torch's mm returns an empty bool result without its dtype check; torchplug checks first",
                       dtypes=("bool",), samples=("empty", "empty_inner")),)),
    OpInfo("bmm", _bmm, dtypes=MATMUL, aten=("bmm",), supports_out=True, tolerances=MATMUL_TOL),
    OpInfo("mv", _mv, dtypes=MATMUL, aten=("mv",), supports_out=True, tolerances=MATMUL_TOL),
    OpInfo("dot", _dot, dtypes=MATMUL, aten=("dot",), supports_out=True, tolerances=MATMUL_TOL),
    OpInfo("matmul", _matmul, dtypes=MATMUL, aten=("matmul",), supports_out=True, tolerances=MATMUL_TOL),
    OpInfo("addmm", _addmm, dtypes=MATMUL, aten=("addmm",), supports_out=True, inplace_variant="Tensor.addmm_",
           tolerances=MATMUL_TOL),
]

JOIN_OPS = [
    OpInfo("cat", _cat, aten=("cat",), supports_out=True),
    OpInfo("stack", _stack, aten=("stack",), supports_out=True),
    OpInfo("split", _split, aten=("split.Tensor",), view=True),
    OpInfo("split_with_sizes", _split_with_sizes, op="ops.aten.split_with_sizes.default", aten=("split_with_sizes",), view=True),
    OpInfo("chunk", _chunk, aten=("chunk",), view=True),
    OpInfo("unbind", _unbind, aten=("unbind.int",), view=True),
]

INDEX_OPS = [
    OpInfo("gather", _gather, aten=("gather",), supports_out=True),
    OpInfo("scatter.src", _scatter_src, op="scatter", aten=("scatter.src",), supports_out=True,
           inplace_variant="Tensor.scatter_"),
    OpInfo("scatter.value", _scatter_value, op="scatter", aten=("scatter.value",), supports_out=True,
           inplace_variant="Tensor.scatter_"),
    OpInfo("scatter_add", _scatter_add, dtypes=NUMERIC, aten=("scatter_add",), supports_out=True,
           inplace_variant="Tensor.scatter_add_"),
    OpInfo("scatter.reduce", _scatter_reduce_legacy, op="scatter", dtypes=NUMERIC, aten=("scatter.reduce",),
           supports_out=True, inplace_variant="Tensor.scatter_"),
    OpInfo("scatter.value_reduce", _scatter_value_reduce, op="scatter", dtypes=NUMERIC, aten=("scatter.value_reduce",),
           supports_out=True, inplace_variant="Tensor.scatter_"),
    OpInfo("index_select", _index_select, aten=("index_select",), supports_out=True,
           skips=(Skip("known cpu bug: an out-of-range index raises NumPy's RuntimeError, torch raises IndexError "
                       "'index out of range in self'", devices=("cpu", "cuda"), samples=("out_of_range",)),)),
    OpInfo("index.Tensor", _index, op="ops.aten.index.Tensor", aten=("index.Tensor",)),
    OpInfo("index_put", _index_put, dtypes=NUMERIC, op="Tensor.index_put", aten=("index_put",),
           inplace_variant="Tensor.index_put_"),
    OpInfo("nonzero", _nonzero, aten=("nonzero",), supports_out=True, data_dependent=True),
]

COPY_OPS = [
    OpInfo("copy_", _copy, op="Tensor.copy_", aten=("copy_",)),
    OpInfo("fill_.Scalar", _fill_scalar, op="Tensor.fill_", aten=("fill_.Scalar",)),
    OpInfo("fill_.Tensor", _fill_tensor, op="Tensor.fill_", aten=("fill_.Tensor",)),
    OpInfo("zero_", _self_only, op="Tensor.zero_", aten=("zero_",)),
    OpInfo("clone", _clone, aten=("clone",)),
    OpInfo("_to_copy", _to, op="Tensor.to", aten=("_to_copy",),
           skips=(Skip("known cpu bug: complex -> bool casts only the real part (torch: nonzero real or imaginary)",
                       dtypes=COMPLEX_DTYPES, samples=("to_bool",), devices=("cpu",)),)),
]

VIEW_OPS = [
    OpInfo("as_strided", _as_strided, aten=("as_strided",), view=True),
    OpInfo("view", _view, op="Tensor.view", aten=("view",), view=True),
    OpInfo("view.dtype", _view_dtype, op="Tensor.view", aten=("view.dtype",), view=True),
    OpInfo("reshape", _reshape, aten=("reshape",), view=True),
    OpInfo("permute", _permute, aten=("permute",), view=True),
    OpInfo("transpose", _transpose, aten=("transpose.int",), view=True),
    OpInfo("t", _t, aten=("t",), view=True),
    OpInfo("expand", _expand, op="Tensor.expand", aten=("expand",), view=True),
    OpInfo("squeeze", _squeeze, aten=("squeeze",), view=True),
    OpInfo("unsqueeze", _unsqueeze, aten=("unsqueeze",), view=True),
    OpInfo("narrow", _narrow, aten=("narrow",), view=True),
    OpInfo("select", _select, aten=("select.int",), view=True),
    OpInfo("slice", _slice, op="ops.aten.slice.Tensor", aten=("slice.Tensor",), view=True),
    OpInfo("unfold", _unfold, op="Tensor.unfold", aten=("unfold",), view=True),
    OpInfo("diagonal", _diagonal, aten=("diagonal",), view=True),
    OpInfo("alias", _self_only, op="ops.aten.alias.default", aten=("alias",), view=True),
    OpInfo("detach", _self_only, aten=("detach",), view=True),
    OpInfo("flatten", _flatten, aten=("flatten.using_ints",), view=True),
]

FACTORY_OPS = [
    OpInfo("empty", _empty, aten=("empty.memory_format",), factory=True, random=True),
    OpInfo("empty_strided", _empty_strided, aten=("empty_strided",), factory=True, random=True),
    OpInfo("zeros", _empty, aten=("zeros",), factory=True),
    OpInfo("ones", _empty, aten=("ones",), factory=True),
    OpInfo("full", _full, aten=("full",), factory=True),
    OpInfo("arange", _arange, dtypes=REAL_NUMERIC, aten=("arange.start_step",), factory=True),
    OpInfo("linspace", _linspace, dtypes=REAL_NUMERIC + COMPLEX_DTYPES, aten=("linspace",), factory=True,
           tolerances=_TRANS_TOL),
    OpInfo("logspace", _logspace, dtypes=REAL_NUMERIC, aten=("logspace",), factory=True, tolerances=_TRANS_TOL),
    OpInfo("eye", _eye, aten=("eye.m",), factory=True),
    OpInfo("randperm", _randperm, dtypes=("int64", "int32", "float32"), aten=("randperm",), factory=True, random=True),
]

RANDOM_OPS = [
    OpInfo("uniform_", _uniform, dtypes=FLOATING, op="Tensor.uniform_", aten=("uniform_",), random=True),
    OpInfo("normal_", _normal, dtypes=FLOATING, op="Tensor.normal_", aten=("normal_",), random=True),
    OpInfo("random_", _random, dtypes=REAL, op="Tensor.random_", aten=("random_.from", "random_"), random=True),
    OpInfo("bernoulli", _bernoulli, dtypes=FLOATING, aten=("bernoulli",), random=True),
    OpInfo("bernoulli_", _bernoulli_, dtypes=FLOATING + ("int64",), op="Tensor.bernoulli_",
           aten=("bernoulli_.float", "bernoulli_.Tensor"), random=True),
    OpInfo("Tensor.bernoulli", _bernoulli_p, dtypes=FLOATING, op="Tensor.bernoulli", aten=("bernoulli.p",), random=True),
    OpInfo("exponential_", _exponential_, dtypes=FLOATING, op="Tensor.exponential_", aten=("exponential_",),
           random=True),
    OpInfo("geometric_", _geometric_, dtypes=FLOATING + ("int64",), op="Tensor.geometric_", aten=("geometric_",),
           random=True),
    OpInfo("log_normal_", _log_normal_, dtypes=FLOATING, op="Tensor.log_normal_", aten=("log_normal_",), random=True),
    OpInfo("cauchy_", _cauchy_, dtypes=FLOATING, op="Tensor.cauchy_", aten=("cauchy_",), random=True),
    OpInfo("poisson", _poisson, dtypes=FLOATING, aten=("poisson",), random=True),
    OpInfo("multinomial", _multinomial, dtypes=("float32", "float64"), aten=("multinomial",), random=True),
]

OPS: list[OpInfo] = [
    *UNARY_OPS, *BINARY_OPS, *TERNARY_OPS, *REDUCTION_OPS, *LINALG_OPS, *JOIN_OPS, *INDEX_OPS, *COPY_OPS, *VIEW_OPS,
    *FACTORY_OPS, *RANDOM_OPS,
]
_ = Skip  # re-exported for area files that copy this one
