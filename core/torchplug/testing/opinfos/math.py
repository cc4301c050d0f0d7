"""OpInfos for the math area (``_schemas/pointwise.py`` and ``_schemas/reduction.py``): special functions,
binary math, comparisons, reductions, scans, sorting/selection, quantiles, unique and counting."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, Dtype, OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
REAL = tuple(d for d in ALL_DTYPES if d not in COMPLEX_DTYPES)
REAL_NUMERIC = tuple(d for d in REAL if d != "bool")
FLOAT_COMPLEX = FLOAT_DTYPES + COMPLEX_DTYPES
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
REDUCE_TOL = {"float16": (5e-3, 5e-3), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
_DISTINCT = T((4, 5), values=[[3, -7, 12, 0, 5], [-2, 9, 1, -11, 6], [8, -4, 14, 2, -9], [13, -1, 4, 10, -6]])


# ---- sample generators ------------------------------------------------------------------------------------
def _unary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="2d")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")
    yield S((T((3, 4), noncontig=True),), name="noncontig")


def _unit(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0.05, high=0.95),), name="unit")
    yield S((T((3, 4), low=0.05, high=0.95, noncontig=True),), name="noncontig")
    yield S((T(()),), name="0d")


def _logit(dtype: str) -> Iterator[SampleInput]:
    yield from _unit(dtype)
    yield S((T((3, 4), low=-0.5, high=1.5), 0.1), name="eps")


def _nan_to_num(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="default")
    yield S((T((3, 4), special=True), 1.5, 7.0, -3.0), name="values")
    yield S((T((3, 4), noncontig=True),), {"nan": 0.0}, name="noncontig")


def _binary(scalar: bool = False):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4)), T((3, 4), seed=1)), name="same")
        yield S((T((2, 1, 4)), T((3, 1), seed=1)), name="broadcast", inplace_ok=False)
        yield S((T((3, 4), noncontig=True), T((3, 4), transposed=True, seed=1)), name="noncontig")
        yield S((T((0, 3)), T((3,), seed=1)), name="empty")
        if scalar:  # (in place on integers, PyTorch's cast message spells C++ type names: not reproduced)
            yield S((T((3, 4)), 2.5), name="scalar", inplace_ok=False)

    return gen


def _heaviside(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=-1, high=1), T((3, 4), seed=1)), name="same")
    yield S((T((3, 4), noncontig=True, low=-1, high=1), T((4,), seed=1)), name="broadcast")


def _isclose(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4))), name="equal")
    yield S((T((3, 4)), T((3, 4), seed=1)), {"atol": 1.0}, name="atol")
    yield S((T((3, 4), special=True), T((3, 4), special=True)), {"equal_nan": True}, name="equal_nan")


def _equal(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4))), name="equal")
    yield S((T((3, 4)), T((3, 4), seed=1)), name="different")
    yield S((T((3, 4)), T((4,))), name="shapes")


def _dim_reduce(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), 1), name="dim")
    yield S((T((2, 3, 4), noncontig=True), (0, 2), True), name="dims_keepdim")
    yield S((T(()), 0), name="0d")


def _logsumexp(dtype: str) -> Iterator[SampleInput]:
    yield from _dim_reduce(dtype)
    yield S((T((0, 3)), 0), name="empty")


def _vector_norm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="default")
    for i, ord in enumerate((1, float("inf"), -float("inf"), 0, 3)):
        yield S((T((3, 4), nonzero=True), ord, 1), name=f"ord{i}")
    yield S((T((2, 3, 4), noncontig=True), 2, (0, 2), True), name="dims_keepdim")


def _nanreduce(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=dtype in FLOAT_DTYPES),), name="all")
    yield S((T((3, 4), special=dtype in FLOAT_DTYPES), 1, True), name="dim_keepdim")
    yield S((T((0, 3)),), name="empty")


def _count_nonzero(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="all")
    yield S((T((3, 4), noncontig=True), 0), name="dim")
    yield S((T((2, 3, 4)), (0, 2)), name="dims")


def _var_mean(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="all")
    yield S((T((3, 4)), 1), {"keepdim": True}, name="dim")
    yield S((T((3, 4), noncontig=True), (0, 1)), {"correction": 0}, name="correction")


def _aminmax(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="all")
    yield S((T((3, 4), noncontig=True),), {"dim": 1, "keepdim": True}, name="dim")
    yield S((T(()),), name="0d")


def _scan(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=-2, high=2), 1), name="dim")
    yield S((T((3, 4), noncontig=True, low=-2, high=2), 0), name="noncontig")
    yield S((T(()), 0), name="0d")
    yield S((T((0, 3)), 1), name="empty")


def _scan_dtype(dtype: str) -> Iterator[SampleInput]:
    yield from _scan(dtype)
    yield S((T((3, 4), low=-2, high=2), 1), {"dtype": Dtype("float64")},
            name="dtype", out_ok=False, inplace_ok=False)


def _sort(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=dtype in FLOAT_DTYPES),), name="default")
    yield S((T((3, 4), noncontig=True), 0, True), name="descending")
    yield S((T((3, 4)),), {"stable": True, "descending": True}, name="stable")
    yield S((T(()),), name="0d")


def _distinct(dtype: str) -> Iterator[SampleInput]:
    yield S((_DISTINCT,), name="default")


def _topk(dtype: str) -> Iterator[SampleInput]:
    yield S((_DISTINCT, 2), name="k2")
    yield S((_DISTINCT, 3, 0, False), name="smallest_dim0")


def _kthvalue(dtype: str) -> Iterator[SampleInput]:
    yield S((_DISTINCT, 2), name="k2")
    yield S((_DISTINCT, 3, 0, True), name="dim0_keepdim")


def _median_dim(dtype: str) -> Iterator[SampleInput]:
    yield S((_DISTINCT, 1), name="dim")
    yield S((_DISTINCT, 0, True), name="dim0_keepdim")


def _mode(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 6), low=-2, high=2),), name="default")
    yield S((T((4, 6), low=-2, high=2), 0, True), name="dim0_keepdim")


def _quantile(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 5)), 0.3), name="scalar_q")
    yield S((T((4, 5)), T((3,), low=0, high=1), 1, True), name="tensor_q")
    for mode in ("lower", "higher", "midpoint", "nearest"):
        yield S((T((4, 5)), 0.4, 0), {"interpolation": mode}, name=mode)


def _unique(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 5), low=-2, high=2),), {"return_inverse": True, "return_counts": True}, name="flat",
            data_dependent=True)
    yield S((T((4, 5), low=-1, high=1),), {"dim": 0, "return_counts": True}, name="dim", data_dependent=True)


def _bincount(dtype: str) -> Iterator[SampleInput]:
    yield S((T((10,), low=0, high=6),), name="default", data_dependent=True)
    yield S((T((10,), low=0, high=6), T((10,), dtype="float32")), {"minlength": 9}, name="weights",
            data_dependent=True)


def _histc(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 6)),), name="default")
    yield S((T((5, 6)), 7, -2, 2), name="range")


# ---- the table -------------------------------------------------------------------------------------------------
def _unary_op(name: str, dtypes: tuple[str, ...] = ALL_DTYPES, **kw: object) -> OpInfo:
    return OpInfo(name, kw.pop("sample_inputs", _unary), dtypes=dtypes, aten=(name,), supports_out=True,  # type: ignore[arg-type]
                  inplace_variant=kw.pop("inplace_variant", f"Tensor.{name}_"), tolerances=TOL, **kw)  # type: ignore[arg-type]


_BINARY_DTYPES = {"hypot": FLOAT_DTYPES, "logaddexp": FLOAT_COMPLEX, "logaddexp2": FLOAT_DTYPES}

OPS = [
    *(_unary_op(n, REAL) for n in ("erf", "erfc", "lgamma", "digamma", "deg2rad", "rad2deg")),
    _unary_op("erfinv", REAL, sample_inputs=_unit),
    _unary_op("sinc"),
    _unary_op("sgn"),
    _unary_op("logit", REAL, sample_inputs=_logit),
    _unary_op("nan_to_num", sample_inputs=_nan_to_num),
    *(_unary_op(n, REAL, inplace_variant=None, skips=(
        Skip("the sign bit of bfloat16 NaN depends on how the test data was converted", dtypes=("bfloat16",),
             samples=("2d",)),)) for n in ("signbit", "isposinf", "isneginf")),
    OpInfo("positive", _unary, dtypes=tuple(d for d in ALL_DTYPES if d != "bool"), aten=("positive",)),
    *(OpInfo(n, _binary(), dtypes=d, aten=(n,), supports_out=True, tolerances=TOL,
             inplace_variant="Tensor.hypot_" if n == "hypot" else None) for n, d in _BINARY_DTYPES.items()),
    *(OpInfo(n, _binary(scalar=True), dtypes=REAL, aten=(f"{n}.Tensor",), supports_out=True, tolerances=TOL,
             inplace_variant=f"Tensor.{n}_") for n in ("xlogy", "copysign")),
    OpInfo("float_power", _binary(scalar=True), dtypes=ALL_DTYPES, aten=("float_power.Tensor_Tensor",), tolerances=TOL),
    *(OpInfo(n, _binary(scalar=True), dtypes=REAL_NUMERIC, aten=(n,), supports_out=True,
             inplace_variant=f"Tensor.{n}_") for n in ("clamp_min", "clamp_max")),
    OpInfo("heaviside", _heaviside, dtypes=REAL, aten=("heaviside",), supports_out=True,
           inplace_variant="Tensor.heaviside_"),
    OpInfo("isclose", _isclose, aten=("isclose",)),
    OpInfo("allclose", _isclose, aten=("allclose",), meta_ok=False),
    OpInfo("equal", _equal, aten=("equal",), meta_ok=False),
    # reductions
    OpInfo("logsumexp", _logsumexp, dtypes=REAL + ("complex64",), aten=("logsumexp",), supports_out=True,
           tolerances=REDUCE_TOL),
    OpInfo("linalg.vector_norm", _vector_norm, dtypes=FLOAT_COMPLEX, aten=("linalg_vector_norm",),
           tolerances=REDUCE_TOL),
    OpInfo("norm", _vector_norm, dtypes=FLOAT_COMPLEX, aten=("linalg_vector_norm",), tolerances=REDUCE_TOL),
    OpInfo("nansum", _nanreduce, dtypes=REAL, aten=("nansum",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("nanmean", _nanreduce, dtypes=FLOAT_COMPLEX, aten=("nanmean",), supports_out=True, tolerances=REDUCE_TOL),
    OpInfo("count_nonzero", _count_nonzero, aten=("count_nonzero",)),
    *(OpInfo(n, _var_mean, dtypes=FLOAT_COMPLEX, aten=(n,), tolerances=REDUCE_TOL) for n in ("var_mean", "std_mean")),
    OpInfo("aminmax", _aminmax, dtypes=REAL, aten=("aminmax",)),
    # scans
    *(OpInfo(n, _scan_dtype, dtypes=ALL_DTYPES, aten=(n,), supports_out=True, inplace_variant=f"Tensor.{n}_",
             tolerances=REDUCE_TOL,
             skips=(Skip("bool -> int64 results cannot be written back in place", dtypes=("bool",), variant="inplace"),))
      for n in ("cumsum", "cumprod")),
    *(OpInfo(n, _scan, dtypes=REAL, aten=(n,)) for n in ("cummax", "cummin")),
    # sorting and selection
    OpInfo("sort", _sort, dtypes=REAL, aten=("sort",)),
    OpInfo("argsort", _sort, dtypes=REAL, aten=("argsort",)),
    OpInfo("msort", _distinct, dtypes=REAL_NUMERIC, aten=("msort",), supports_out=True),
    OpInfo("topk", _topk, dtypes=REAL_NUMERIC, aten=("topk",)),
    OpInfo("kthvalue", _kthvalue, dtypes=REAL_NUMERIC, aten=("kthvalue",)),
    *(OpInfo(n, _distinct, dtypes=REAL_NUMERIC, aten=(n,)) for n in ("median", "nanmedian")),
    *(OpInfo(f"{n}.dim", _median_dim, dtypes=REAL_NUMERIC, op=n, aten=(f"{n}.dim",)) for n in ("median", "nanmedian")),
    OpInfo("mode", _mode, dtypes=REAL, aten=("mode",)),
    *(OpInfo(n, _quantile, dtypes=("float32", "float64"), aten=(n,), supports_out=True, skips=(
        Skip("torch's meta quantile reports the strides of its internal transposition", devices=("meta",),
             samples=("tensor_q",)),)) for n in ("quantile", "nanquantile")),
    # data-dependent shapes (skipped on meta)
    OpInfo("unique", _unique, dtypes=REAL, aten=("_unique2", "unique_dim"), data_dependent=True),
    OpInfo("unique_consecutive", _unique, dtypes=REAL, aten=("unique_consecutive",), data_dependent=True),
    OpInfo("bincount", _bincount, dtypes=("uint8", "int8", "int16", "int32", "int64"), aten=("bincount",),
           data_dependent=True),
    OpInfo("histc", _histc, dtypes=FLOAT_DTYPES, aten=("histc",), supports_out=True),
]
