"""Reductions, scans, sorting/selection, quantiles, unique and counting cpu kernels against real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest


torch = pytest.importorskip("torch")

REAL = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOAT = ["float16", "bfloat16", "float32", "float64"]
ALL = REAL + ["complex64", "complex128"]
SHAPES = [(3, 4), (2, 3, 4), (5,), ()]
DIMS = [None, 0, -1, (0, 1)]


def _distinct(tc, dtype, shape, *, seed=0, layout="contiguous"):
    """Values without ties (so index results of sort/topk/median/kthvalue are unambiguous)."""
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(seed)
    arr = rng.permutation(n).reshape(shape).astype(np.float64) - n // 2
    if dtype == "bool":
        arr = arr > 0
    np_dt = tc.data(dtype, (1,)).dtype
    arr = np.asarray(arr).astype(np_dt)
    if layout == "transposed" and arr.ndim == 2:
        return tc.pair_from_numpy(np.ascontiguousarray(arr.T).T)
    return tc.pair_from_numpy(arr)


def _dims_for(shape):
    return [d for d in DIMS if d is None or (shape and (isinstance(d, int) or len(shape) >= 2))]


# ---- logsumexp / norms / nansum / nanmean ----------------------------------------------------------------------
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_logsumexp(tc, dtype, shape, keepdim):
    a = tc.pair(dtype, shape)
    for dim in _dims_for(shape):
        if dim is not None:
            tc.compare(lambda M, x: M.logsumexp(x, dim, keepdim=keepdim), a)
            tc.compare(lambda M, x: x.logsumexp(dim, keepdim), a)


def test_logsumexp_special(tc):
    arr = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [np.nan, 0.0], [1000.0, 1000.0]], dtype=np.float32)
    tc.compare(lambda M, x: M.logsumexp(x, 1), tc.pair_from_numpy(arr))
    tc.compare(lambda M, x: M.logsumexp(x, 0), tc.pair("float32", (0, 3)))
    tc.compare(lambda M, x: M.logsumexp(x, 1), tc.pair("float32", (0, 3)))
    tc.compare(lambda M, x: M.logsumexp(x, 1, out=M.empty(0)), tc.pair("float32", (2, 3)))


ORDS = [2, 1, float("inf"), -float("inf"), 0, 3, 0.5, -1, -2.5]


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("dtype", FLOAT + ["complex64", "complex128", "int64"])
def test_vector_norm(tc, dtype, ord):
    a = tc.pair(dtype, (3, 4), nonzero=ord < 0)
    for dim in (None, 0, 1, (0, 1), (-1,)):
        for keepdim in (False, True):
            tc.compare(lambda M, x: M.linalg.vector_norm(x, ord, dim, keepdim), a)
    tc.compare(lambda M, x: M.norm(x, ord), a)
    tc.compare(lambda M, x: M.norm(x, ord, 1, True), a)
    tc.compare(lambda M, x: x.norm(ord, dim=0), a)


def test_norm_variants(tc):
    a = tc.pair("float32", (3, 4), layout="transposed")
    tc.compare(lambda M, x: M.norm(x), a)
    tc.compare(lambda M, x: M.norm(x, "fro"), a)
    tc.compare(lambda M, x: M.norm(x, "fro", (0, 1)), a)
    tc.compare(lambda M, x: M.norm(x, "nuc"), a)
    tc.compare(lambda M, x: M.norm(x, dim=1), a)
    tc.compare(lambda M, x: x.norm(), a)
    tc.compare(lambda M, x: M.norm(x, dtype=M.float64), a)
    tc.compare(lambda M, x: M.linalg.vector_norm(x, dtype=M.float64), a)
    tc.compare(lambda M, x: M.linalg.vector_norm(x, dtype=M.int64), a)
    tc.compare(lambda M, x: M.linalg.vector_norm(x, dtype=M.float64), tc.pair("complex64", (3,)))
    tc.compare(lambda M, x: M.linalg.vector_norm(x, dtype=M.complex128), tc.pair("complex64", (3,)))
    tc.compare(lambda M, x: M.linalg.vector_norm(x), tc.pair("int64", (3,)))
    e = tc.pair("float32", (0, 3))
    for ord in (2, 1, 0, float("inf"), -1, -float("inf")):
        tc.compare(lambda M, x: M.linalg.vector_norm(x, ord), e)
        tc.compare(lambda M, x: M.linalg.vector_norm(x, ord, 0), e)
        tc.compare(lambda M, x: M.linalg.vector_norm(x, ord, 1), e)
    tc.compare(lambda M, x: M.norm(x), tc.pair("float32", ()))
    tc.compare(lambda M, x: M.norm(x, 2, out=M.empty(0, dtype=M.float64)), a)
    tc.compare(lambda M, x: M.norm(x, 2, out=M.empty(0)), a)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["nansum", "nanmean"])
def test_nansum_nanmean(tc, op, dtype):
    a = tc.pair(dtype, (3, 4), special=dtype in FLOAT)
    for dim in (None, 0, -1, (0, 1)):
        for keepdim in (False, True):
            tc.compare(lambda M, x: getattr(M, op)(x, dim, keepdim), a)
    tc.compare(lambda M, x: getattr(M, op)(x, dtype=M.float64), a)
    tc.compare(lambda M, x: getattr(M, op)(x, 0, out=M.empty(0, dtype=M.float64)), a)
    tc.compare(lambda M, x: getattr(M, op)(x), tc.pair(dtype, (0, 2)))
    tc.compare(lambda M, x: getattr(x, op)(), tc.pair(dtype, ()))


@pytest.mark.parametrize("dtype", ALL)
def test_count_nonzero(tc, dtype):
    a = tc.pair(dtype, (3, 4), special=dtype in FLOAT)
    for dim in (None, 0, -1, (0, 1)):
        tc.compare(lambda M, x: M.count_nonzero(x, dim), a)
        tc.compare(lambda M, x: x.count_nonzero(dim), a)
    tc.compare(lambda M, x: M.count_nonzero(x), tc.pair(dtype, ()))


@pytest.mark.parametrize("dtype", FLOAT + ["complex64", "int64"])
@pytest.mark.parametrize("op", ["var_mean", "std_mean"])
def test_var_std_mean(tc, op, dtype):
    a = tc.pair(dtype, (3, 4))
    for dim in (None, 0, 1, (0, 1)):
        for keepdim in (False, True):
            tc.compare(lambda M, x: getattr(M, op)(x, dim, keepdim=keepdim), a)
            tc.compare(lambda M, x: getattr(M, op)(x, dim, correction=0, keepdim=keepdim), a)
            tc.compare(lambda M, x: getattr(M, op)(x, dim, False, keepdim), a)
    tc.compare(lambda M, x: getattr(M, op)(x), a)
    tc.compare(lambda M, x: getattr(M, op)(x, False), a)
    tc.compare(lambda M, x: getattr(M, op)(x, 1, unbiased=True, correction=1), a)


@pytest.mark.parametrize("dtype", REAL + ["complex64"])
def test_aminmax(tc, dtype):
    a = tc.pair(dtype, (3, 4), special=dtype in FLOAT)
    tc.compare(lambda M, x: M.aminmax(x), a)
    tc.compare(lambda M, x: tuple(M.aminmax(x)), a)
    tc.compare(lambda M, x: M.aminmax(x, keepdim=True), a)
    for dim in (0, -1):
        tc.compare(lambda M, x: M.aminmax(x, dim=dim), a)
        tc.compare(lambda M, x: x.aminmax(dim=dim, keepdim=True), a)
    tc.compare(lambda M, x: M.aminmax(x).max, a)
    tc.compare(lambda M, x: M.aminmax(x), tc.pair(dtype, ()))
    e = tc.pair(dtype, (2, 0))
    tc.compare(lambda M, x: M.aminmax(x), e)
    tc.compare(lambda M, x: M.aminmax(x, dim=0), e)
    tc.compare(lambda M, x: M.aminmax(x, dim=1), e)


# ---- scans ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES + [(0, 3)], ids=str)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_cumsum_cumprod(tc, op, dtype, shape):
    a = tc.pair(dtype, shape, low=-2, high=2)
    for dim in ([0, -1] if shape else [0, -1]):
        tc.compare(lambda M, x: getattr(M, op)(x, dim), a)
        tc.compare(lambda M, x: getattr(x, op)(dim=dim), a)
        tc.compare(lambda M, x: getattr(M, op)(x, dim, dtype=M.float64), a)
    if dtype not in ("bool",):
        tc.compare(lambda M, x: getattr(x.clone(), op + "_")(0), a)
    tc.compare(lambda M, x: getattr(M, op)(x, 0, out=M.empty(0, dtype=M.int64)), a)
    tc.compare(lambda M, x: getattr(M, op)(x, 5), a)  # dim out of range


def test_cumsum_noncontiguous_and_special(tc):
    a = tc.pair("float32", (3, 4), layout="transposed", special=True)
    tc.compare(lambda M, x: M.cumsum(x, 1), a)
    tc.compare(lambda M, x: M.cumprod(x, 0), a)


@pytest.mark.parametrize("shape", SHAPES + [(0, 3)], ids=str)
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_cummin(tc, op, dtype, shape):
    a = tc.pair(dtype, shape, special=dtype in FLOAT)  # ties and NaN included: PyTorch's index rules
    for dim in (0, -1):
        tc.compare(lambda M, x: getattr(M, op)(x, dim), a)
        tc.compare(lambda M, x: getattr(x, op)(dim).indices, a)
    out = (lambda M, x: getattr(M, op)(x, 0, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))))
    tc.compare(out, a)


def test_cummax_nan_runs(tc):
    arr = np.array([1.0, np.nan, 3.0, np.nan, 0.5, 3.0, 3.0], dtype=np.float32)
    for op in ("cummax", "cummin"):
        tc.compare(lambda M, x: getattr(M, op)(x, 0), tc.pair_from_numpy(arr))
        tc.compare(lambda M, x: getattr(M, op)(x, 0), tc.pair_from_numpy(np.array([2, 2, 1, 3, 3, 1])))


# ---- sorting and selection ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("shape", SHAPES + [(0, 3)], ids=str)
@pytest.mark.parametrize("dtype", ALL)
def test_sort(tc, dtype, shape, descending):
    a = tc.pair(dtype, shape, special=dtype in FLOAT)  # ties: PyTorch's cpu sort is stable
    for dim in (0, -1):
        tc.compare(lambda M, x: M.sort(x, dim, descending, stable=True), a)
        tc.compare(lambda M, x: M.sort(x, dim=dim, descending=descending), a)
        tc.compare(lambda M, x: x.sort(dim, descending).values, a)
        tc.compare(lambda M, x: M.argsort(x, dim, descending, stable=True), a)
        tc.compare(lambda M, x: x.argsort(dim=dim, descending=descending), a)
    tc.compare(lambda M, x: M.msort(x), a)
    tc.compare(lambda M, x: x.msort(), a)
    tc.compare(lambda M, x: M.sort(x, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))), a)


def test_sort_noncontiguous(tc):
    a = _distinct(tc, "float32", (4, 5), layout="transposed")
    tc.compare(lambda M, x: M.sort(x, 0), a)
    tc.compare(lambda M, x: M.sort(x, 1, True), a)


@pytest.mark.parametrize("sorted_", [True, False])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", [d for d in REAL if d != "bool"] + ["complex64"])
def test_topk(tc, dtype, largest, sorted_):
    a = _distinct(tc, dtype, (4, 6))
    for k, dim in ((1, -1), (3, 1), (6, 1), (0, 1), (2, 0), (4, 0)):
        fn = lambda M, x: M.topk(x, k, dim, largest, sorted_)  # noqa: E731
        if sorted_:
            tc.compare(fn, a)
        else:  # order unspecified: compare as sets
            tc.compare(lambda M, x: M.sort(fn(M, x).values, dim).values, a)
    tc.compare(lambda M, x: x.topk(2, largest=largest).indices, a)
    tc.compare(lambda M, x: M.topk(x, 7), a)  # k out of range
    tc.compare(lambda M, x: M.topk(x, 1, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))), a)
    tc.compare(lambda M, x: M.topk(x[0, 0], 1), a)


def test_topk_nan(tc):
    arr = np.array([1.0, np.nan, 3.0, -np.inf, 2.0], dtype=np.float64)
    a = tc.pair_from_numpy(arr)
    tc.compare(lambda M, x: M.topk(x, 2), a)
    tc.compare(lambda M, x: M.topk(x, 2, largest=False), a)


@pytest.mark.parametrize("dtype", [d for d in REAL if d != "bool"] + ["complex64"])
def test_kthvalue(tc, dtype):
    a = _distinct(tc, dtype, (4, 5))
    for k, dim in ((1, -1), (3, 1), (5, 1), (2, 0), (4, 0)):
        for keepdim in (False, True):
            tc.compare(lambda M, x: M.kthvalue(x, k, dim, keepdim), a)
    tc.compare(lambda M, x: x.kthvalue(2).values, a)
    tc.compare(lambda M, x: M.kthvalue(x, 6), a)
    tc.compare(lambda M, x: M.kthvalue(x, 0), a)
    tc.compare(lambda M, x: M.kthvalue(x[0, 0], 1), a)
    tc.compare(lambda M, x: M.kthvalue(x, 2, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))), a)


@pytest.mark.parametrize("dtype", [d for d in REAL if d != "bool"] + ["complex64"])
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median(tc, op, dtype):
    for shape in ((4, 5), (3, 4), (7,), ()):
        a = _distinct(tc, dtype, shape)
        tc.compare(lambda M, x: getattr(M, op)(x), a)
        for dim in (0, -1):
            for keepdim in (False, True):
                tc.compare(lambda M, x: getattr(M, op)(x, dim, keepdim), a)
    tc.compare(lambda M, x: getattr(x, op)(0).indices, a)
    tc.compare(lambda M, x: getattr(M, op)(x, 0, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))),
               _distinct(tc, dtype, (3, 4)))


@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_nan_and_empty(tc, op):
    arr = np.array([[1.0, np.nan, 3.0, 0.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 2.0, 3.0, 1.0],
                    [5.0, np.nan, -1.0, 7.0]])
    a = tc.pair_from_numpy(arr)
    tc.compare(lambda M, x: getattr(M, op)(x), a)
    tc.compare(lambda M, x: getattr(M, op)(x, 1).values, a)
    # an all-NaN row's index comes from PyTorch's nth_element: not reproduced
    tc.compare(lambda M, x: getattr(M, op)(x, 1).indices[[0, 2, 3]], a)
    tc.compare(lambda M, x: getattr(M, op)(x, 0), a)
    tc.compare(lambda M, x: getattr(M, op)(x[2]), a)
    e = tc.pair("float32", (0, 3))
    tc.compare(lambda M, x: getattr(M, op)(x), e)
    tc.compare(lambda M, x: getattr(M, op)(x, 0), e)
    tc.compare(lambda M, x: getattr(M, op)(x, 1), e)


@pytest.mark.parametrize("dtype", [d for d in REAL if d != "bool"] + ["bool", "complex64"])
def test_mode(tc, dtype):
    a = tc.pair(dtype, (4, 6), low=-2, high=2)  # many ties: smallest value, last index
    for dim in (0, -1):
        for keepdim in (False, True):
            tc.compare(lambda M, x: M.mode(x, dim, keepdim), a)
    tc.compare(lambda M, x: x.mode().values, a)
    tc.compare(lambda M, x: M.mode(x[0, 0]), a)
    tc.compare(lambda M, x: M.mode(x, 0, out=(M.empty(0, dtype=x.dtype), M.empty(0, dtype=M.int64))), a)
    tc.compare(lambda M, x: M.mode(x), tc.pair(dtype, (2, 0)))
    tc.compare(lambda M, x: M.mode(x, 0), tc.pair(dtype, (2, 0)))


# ---- quantiles -----------------------------------------------------------------------------------------------------
INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile(tc, op, dtype, interpolation):
    a = tc.pair(dtype, (4, 5), special=False)
    n = tc.pair_from_numpy(np.array([[1.0, np.nan, 3.0, 0.0, 2.0], [np.nan] * 5, [4.0, 2.0, 3.0, 1.0, 0.5]],
                                    dtype=dtype))
    qs = [0.0, 0.3, 0.5, 0.875, 1.0, tc.pair_from_numpy(np.array([0.1, 0.5, 0.9], dtype=dtype)),
          tc.pair_from_numpy(np.array(0.25, dtype=dtype))]
    for q in qs:
        for x in (a, n):
            for dim in (None, 0, 1, -1):
                for keepdim in (False, True):
                    tc.compare(lambda M, t, q: getattr(M, op)(t, q, dim, keepdim, interpolation=interpolation), x, q)
    tc.compare(lambda M, t: getattr(t, op)(0.5, dim=0), a)
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5), tc.pair(dtype, ()))
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5, 0), tc.pair(dtype, ()))
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5, 0, out=M.empty(0, dtype=t.dtype)), a)


@pytest.mark.parametrize("op", ["quantile", "nanquantile"])
def test_quantile_errors(tc, op):
    a = tc.pair("float32", (4,))
    tc.compare(lambda M, t: getattr(M, op)(t, 1.5), a)
    tc.compare(lambda M, t: getattr(M, op)(t, M.tensor([0.5, 1.5])), a)
    tc.compare(lambda M, t: getattr(M, op)(t, M.tensor([0.5], dtype=M.float64)), a)
    tc.compare(lambda M, t: getattr(M, op)(t, M.ones(2, 2) / 2), a)
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5, interpolation="cubic"), a)
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5), tc.pair("int64", (4,)))
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5), tc.pair("float16", (4,)))
    tc.compare(lambda M, t: getattr(M, op)(t, 0.5), tc.pair("float32", (0,)))


# ---- unique ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", REAL)
def test_unique(tc, dtype):
    a = tc.pair(dtype, (4, 5), low=-3, high=3, special=dtype in ("float32", "float64"))
    b = tc.pair(dtype, (4, 5), low=-1, high=1)
    for inv in (False, True):
        for counts in (False, True):
            tc.compare(lambda M, x: M.unique(x, return_inverse=inv, return_counts=counts), a)
            tc.compare(lambda M, x: x.unique(sorted=True, return_inverse=inv, return_counts=counts), a)
            tc.compare(lambda M, x: M.unique_consecutive(x, return_inverse=inv, return_counts=counts), a)
            for dim in (0, 1, -1):  # (no NaN here: PyTorch's row order with NaN is comparator-dependent)
                tc.compare(lambda M, x: M.unique(x, return_inverse=inv, return_counts=counts, dim=dim), b)
                tc.compare(lambda M, x: M.unique_consecutive(x, return_inverse=inv, return_counts=counts, dim=dim), a)
    tc.compare(lambda M, x: M.unique(x), tc.pair(dtype, ()))
    tc.compare(lambda M, x: M.unique(x, return_inverse=True, return_counts=True), tc.pair(dtype, (0, 2)))
    tc.compare(lambda M, x: M.unique_consecutive(x, return_inverse=True, return_counts=True), tc.pair(dtype, (0,)))


def test_unique_rows(tc):
    arr = np.array([[1, 2], [0, 5], [1, 2], [1, 1], [0, 5], [0, 5]])
    a = tc.pair_from_numpy(arr)
    tc.compare(lambda M, x: M.unique(x, dim=0, return_inverse=True, return_counts=True), a)
    tc.compare(lambda M, x: M.unique_consecutive(x, dim=0, return_inverse=True, return_counts=True), a)
    tc.compare(lambda M, x: M.unique(x, dim=1, return_inverse=True, return_counts=True), a)
    tc.compare(lambda M, x: M.unique_consecutive(x.t(), return_inverse=True), a)


# ---- bincount / histc -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64", "bool", "float32"])
def test_bincount(tc, dtype):
    a = tc.pair(dtype, (10,), low=0, high=6)
    tc.compare(lambda M, x: M.bincount(x), a)
    tc.compare(lambda M, x: M.bincount(x, minlength=10), a)
    tc.compare(lambda M, x: x.bincount(minlength=2), a)
    for wdt in ("float32", "float64", "float16", "int64"):
        w = tc.pair(wdt, (10,), seed=1)
        tc.compare(lambda M, x, y: M.bincount(x, y), a, w)
        tc.compare(lambda M, x, y: M.bincount(x, weights=y, minlength=9), a, w)
    tc.compare(lambda M, x: M.bincount(x), tc.pair(dtype, (0,)))
    tc.compare(lambda M, x: M.bincount(x, minlength=3), tc.pair(dtype, (0,)))
    tc.compare(lambda M, x: M.bincount(x, minlength=-1), a)
    tc.compare(lambda M, x: M.bincount(x), tc.pair(dtype, (2, 3), low=0))
    tc.compare(lambda M, x, y: M.bincount(x, y), a, tc.pair("float32", (3,)))
    tc.compare(lambda M, x: M.bincount(x), tc.pair_from_numpy(np.array([1, -1, 2])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int64"])
def test_histc(tc, dtype):
    a = tc.pair(dtype, (5, 6), special=False)
    for bins, lo, hi in ((100, 0, 0), (4, 0, 0), (5, -2, 2), (3, -1.5, 1.5), (7, 0, 10), (1, -4, 4)):
        tc.compare(lambda M, x: M.histc(x, bins, lo, hi), a)
        tc.compare(lambda M, x: x.histc(bins=bins, min=lo, max=hi), a)
    tc.compare(lambda M, x: M.histc(x, 4, 3, 1), a)
    tc.compare(lambda M, x: M.histc(x, 0), a)
    tc.compare(lambda M, x: M.histc(x, 4), tc.pair(dtype, (0,)))
    tc.compare(lambda M, x: M.histc(x, 4, out=M.empty(0, dtype=x.dtype)), a)
    c = tc.pair_from_numpy(np.array([1.0, 1.0, np.nan, 2.0, np.inf], dtype=np.float32))
    tc.compare(lambda M, x: M.histc(x, 4, 0, 3), c)
    tc.compare(lambda M, x: M.histc(x[:2], 4), c)
