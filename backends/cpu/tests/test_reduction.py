"""Reduction cpu kernels against real PyTorch: values, dtypes, dims, keepdim, empty inputs and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64"]
SHAPES = [("contiguous", (3, 4)), ("transposed", (3, 4)), ("contiguous", ()), ("contiguous", (0, 3)),
          ("contiguous", (2, 3, 4))]
SHAPE_IDS = ["2d", "noncontig", "0dim", "empty", "3d"]
DIMS = [(None, False), (0, False), (-1, True), ((0, 1), False), ((), False), (1, True), (2, False)]
DIM_IDS = ["all", "d0", "d-1-keep", "d01", "d()", "d1-keep", "d2"]


def _kw(dim, keepdim):
    kw = {} if dim is None else {"dim": dim}
    if keepdim:
        kw["keepdim"] = True
    return kw


REDUCTIONS = {
    "sum": lambda M, x, dim, keep: M.sum(x, **_kw(dim, keep)),
    "mean": lambda M, x, dim, keep: M.mean(x, **_kw(dim, keep)),
    "prod": lambda M, x, dim, keep: M.prod(x) if dim is None else M.prod(x, dim, keepdim=keep),
    "amax": lambda M, x, dim, keep: M.amax(x, **_kw(dim, keep)),
    "amin": lambda M, x, dim, keep: M.amin(x, **_kw(dim, keep)),
    "max": lambda M, x, dim, keep: M.max(x) if dim is None else tuple(M.max(x, dim, keep)),
    "min": lambda M, x, dim, keep: M.min(x) if dim is None else tuple(M.min(x, dim, keep)),
    "argmax": lambda M, x, dim, keep: M.argmax(x, dim=dim, keepdim=keep),
    "argmin": lambda M, x, dim, keep: M.argmin(x, dim=dim, keepdim=keep),
    "var": lambda M, x, dim, keep: M.var(x, **_kw(dim, keep)),
    "std": lambda M, x, dim, keep: M.std(x, **_kw(dim, keep)),
    "all": lambda M, x, dim, keep: M.all(x, **_kw(dim, keep)),
    "any": lambda M, x, dim, keep: M.any(x, **_kw(dim, keep)),
}


@pytest.mark.parametrize("dim,keepdim", DIMS, ids=DIM_IDS)
@pytest.mark.parametrize("layout,shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reduction(tc, op, dtype, layout, shape, dim, keepdim):
    x = tc.pair(dtype, shape, layout=layout)
    fn = REDUCTIONS[op]
    with warnings.catch_warnings():
        # var/std with degrees of freedom <= 0 warn (as torch does); test_var_std_unbiased_and_errors checks it
        warnings.filterwarnings("ignore", "(var|std)\\(\\): degrees of freedom", UserWarning)
        tc.compare(lambda M, t: fn(M, t, dim, keepdim), x)


@pytest.mark.parametrize("dtype", ["int64", "float32"])
@pytest.mark.parametrize("dim", [2, -3, (0, 0), (0, -2)], ids=str)
def test_dim_errors(tc, dtype, dim):
    x = tc.pair(dtype, (2, 3))
    tc.compare(lambda M, t: M.sum(t, dim), x)
    tc.compare(lambda M, t: M.amax(t, dim), x)
    if isinstance(dim, int):
        tc.compare(lambda M, t: M.max(t, dim), x)
        tc.compare(lambda M, t: M.argmin(t, dim), x)
        tc.compare(lambda M, t: M.prod(t, dim), x)


def test_dim_out_of_range_message():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        torchplug.ones(2, 3).sum(2)


@pytest.mark.parametrize("op", ["sum", "mean", "prod"])
@pytest.mark.parametrize("src,dst", [("int64", "float32"), ("float32", "int32"), ("bool", "int64"),
                                     ("float16", "float64"), ("uint8", "int8"), ("int32", "float64"),
                                     ("float32", "complex64")], ids=str)
def test_dtype_argument(tc, op, src, dst):
    x = tc.pair(src, (3, 4))
    tc.compare(lambda M, t: getattr(M, op)(t, dtype=getattr(M, dst)), x)
    if op != "prod":
        tc.compare(lambda M, t: getattr(M, op)(t, 1, dtype=getattr(M, dst)), x)
    tc.compare(lambda M, t: getattr(t, op)(dtype=getattr(M, dst)), x)


def test_integer_sums_promote_to_int64(tc):
    tc.compare(lambda M, t: t.sum(), tc.pair_from_numpy(np.array([200, 200], dtype=np.uint8)))
    tc.compare(lambda M, t: t.sum(), tc.pair_from_numpy(np.array([True, True])))
    tc.compare(lambda M, t: t.prod(), tc.pair_from_numpy(np.array([100, 100, 100], dtype=np.int8)))
    tc.compare(lambda M, t: t.sum(0), tc.pair_from_numpy(np.full((3, 2), 2**62, dtype=np.int64)))  # wraps


def test_half_accumulates_in_float32(tc):
    tc.compare(lambda M, t: t.sum(), tc.pair_from_numpy(np.full(100, 1000.0, dtype=np.float16)))  # inf
    tc.compare(lambda M, t: t.mean(), tc.pair_from_numpy(np.full(100, 1000.0, dtype=np.float16)))
    tc.compare(lambda M, t: t.sum(), tc.pair_from_numpy(np.full(4096, 0.1, dtype=np.float16)))


def test_mean_errors(tc):
    tc.compare(lambda M, t: t.mean(), tc.pair("int64"))
    tc.compare(lambda M, t: t.mean(dtype=M.int64), tc.pair("float32"))
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype. Input dtype must be either a "
                                           "floating point or complex dtype. Got: Long"):
        torchplug.tensor([1, 2]).mean()


def test_nan_handling(tc):
    arr = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.0, -1.0, 5.0]], dtype=np.float32)
    x = tc.pair_from_numpy(arr)
    for fn in (lambda M, t: t.max(), lambda M, t: tuple(t.max(1)), lambda M, t: tuple(t.min(1)),
               lambda M, t: t.argmax(), lambda M, t: t.argmin(1), lambda M, t: t.amax(0), lambda M, t: t.amin(1),
               lambda M, t: t.sum(1), lambda M, t: t.mean(0), lambda M, t: t.var(1), lambda M, t: t.any(1)):
        tc.compare(fn, x)


def test_ties_give_first_index(tc):
    x = tc.pair_from_numpy(np.array([[3, 1, 3, 1], [0, 0, 0, 0]]))
    tc.compare(lambda M, t: t.argmax(1), x)
    tc.compare(lambda M, t: t.argmin(1), x)
    tc.compare(lambda M, t: tuple(t.max(1)), x)
    tc.compare(lambda M, t: t.argmax(), x)


def test_empty_errors(tc):
    e = tc.pair("float32", (0, 3))
    for op in ("max", "min", "amax", "amin", "argmax", "argmin"):
        tc.compare(lambda M, t: getattr(M, op)(t), e)
        tc.compare(lambda M, t: getattr(M, op)(t, 0), e)
        out = tc.compare(lambda M, t: getattr(M, op)(t, 1), e)
        assert out is not None
    with pytest.raises(RuntimeError, match="max\\(\\): Expected reduction dim to be specified for input.numel\\(\\) "
                                           "== 0. Specify the reduction dim with the 'dim' argument."):
        torchplug.ones(0).max()
    assert torchplug.ones(0).sum().item() == 0


@pytest.mark.parametrize("correction", [0, 1, 2, 0.5, None])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_var_std_correction(tc, correction, dtype):
    x = tc.pair(dtype, (4, 5))
    for op in ("var", "std"):
        tc.compare(lambda M, t: getattr(M, op)(t, correction=correction), x)
        tc.compare(lambda M, t: getattr(M, op)(t, 1, correction=correction, keepdim=True), x)
        tc.compare(lambda M, t: getattr(t, op)((0, 1), correction=correction), x)


def test_var_std_unbiased_and_errors(tc):
    x = tc.pair("float32", (4, 5))
    tc.compare(lambda M, t: t.var(unbiased=False), x)
    tc.compare(lambda M, t: t.std(0, unbiased=True), x)
    tc.compare(lambda M, t: t.var(), tc.pair("int64"))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = torchplug.tensor([1.0]).var()
    assert np.isnan(r.item())


def test_all_any_uint8(tc):
    x = tc.pair_from_numpy(np.array([[1, 2], [0, 3]], dtype=np.uint8))
    tc.compare(lambda M, t: t.all(), x)
    tc.compare(lambda M, t: t.any(1), x)
    tc.compare(lambda M, t: t.all(0, keepdim=True), x)


def test_max_dim_returns_named_tuple():
    r = torchplug.tensor([[1, 5], [7, 2]]).max(1)
    assert r.values.tolist() == [5, 7] and r.indices.tolist() == [1, 0]
    assert r.indices.dtype == torchplug.int64


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "prod", "var", "all", "argmax"])
def test_out(tc, op):
    x = tc.pair("float32", (3, 4))

    def run(M, t):
        out = M.empty(0, dtype=M.bool if op == "all" else M.int64 if op == "argmax" else M.float32)
        r = getattr(M, op)(t, 1, out=out)
        assert r is out
        return out

    tc.compare(run, x)
