"""Pointwise math cpu kernels and composites against real PyTorch: values, dtypes, shapes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
LAYOUTS = [("contiguous", (3, 4)), ("transposed", (3, 4)), ("contiguous", ()), ("contiguous", (0, 3))]
LAYOUT_IDS = ["2d", "noncontig", "0dim", "empty"]

UNARY = ("erf erfc erfinv lgamma digamma deg2rad rad2deg sinc sgn logit nan_to_num signbit isposinf isneginf "
         "positive exp2 log2 log10 sign trunc frac sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh").split()
INPLACE_UNARY = "erf erfc erfinv lgamma digamma deg2rad rad2deg sinc sgn logit nan_to_num".split()
BINARY = "hypot logaddexp logaddexp2 xlogy copysign heaviside float_power clamp_min clamp_max fmod remainder".split()
WRAPPED = "xlogy copysign float_power clamp_min clamp_max fmod remainder".split()
INPLACE_BINARY = "hypot xlogy copysign heaviside clamp_min clamp_max".split()
MIXED = [("int64", "float32"), ("float16", "float32"), ("bfloat16", "float64"), ("int32", "int64"), ("bool", "float16"),
         ("float32", "complex64")]


def _call(op, **kw):
    return lambda M, *args: getattr(M, op)(*args, **kw)


def _unit(tc, dtype, shape, layout="contiguous"):
    """Values in (0, 1) for logit/erfinv so most results are finite."""
    arr = tc.data("float64" if dtype not in ("float16", "bfloat16", "float32") else dtype, shape, low=0, high=1)
    arr = np.abs(arr.astype(np.float64)) * 0.9 + 0.05
    arr = arr.astype(tc.data(dtype, (1,)).dtype)
    return tc.pair_from_numpy(arr.T if layout == "transposed" and arr.ndim == 2 else arr)


# ---- unary -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout,shape", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary(tc, op, dtype, layout, shape):
    special = not dtype.startswith("complex") and not (op == "signbit" and dtype == "bfloat16")  # NaN's sign bit
    if op in ("lgamma", "digamma") and dtype in ("float16", "bfloat16"):
        special = False  # poles at non-positive integers: half-precision rounding moves them
    a = tc.pair(dtype, shape, layout=layout, special=special)
    tc.compare(_call(op), a)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", ["logit", "erfinv"])
def test_unit_interval(tc, op, dtype):
    tc.compare(_call(op), _unit(tc, dtype, (4, 5)))


@pytest.mark.parametrize("eps", [None, 0.0, 0.1, 0.25])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64"])
def test_logit_eps(tc, dtype, eps):
    arr = np.array([-0.5, 0.0, 0.05, 0.3, 0.5, 0.95, 1.0, 1.5, np.nan])
    a = tc.pair_from_numpy(arr.astype(tc.data(dtype, (1,)).dtype) if dtype != "int64" else np.array([0, 1, 2]))
    tc.compare(lambda M, x: M.logit(x, eps), a)
    tc.compare(lambda M, x: M.logit(x, eps=eps), a)


def test_special_values(tc):
    arr = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1.5, 0.5, 100.0, -100.0, -1.0, -2.0, 1.0, 2.0],
                   dtype=np.float64)
    for op in UNARY:
        tc.compare(_call(op), tc.pair_from_numpy(arr))
        tc.compare(_call(op), tc.pair_from_numpy(arr.astype(np.float32)))


@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 7.0}, {"neginf": -3.0},
                                {"nan": 0.0, "posinf": 1e10, "neginf": -1e10}], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64", "int32", "bool"])
def test_nan_to_num(tc, dtype, kw):
    a = tc.pair(dtype, (3, 5), special=True)
    tc.compare(lambda M, x: M.nan_to_num(x, **kw), a)
    tc.compare(lambda M, x: x.nan_to_num(**kw), a)
    if not dtype.startswith("complex"):
        tc.compare(lambda M, x: x.clone().nan_to_num_(**kw), a)
    c = tc.pair_from_numpy(np.array([complex(np.nan, np.inf), complex(-np.inf, 1.0), 1 + 2j], dtype=np.complex128))
    tc.compare(lambda M, x: M.nan_to_num(x, **kw), c)


def test_sgn_complex(tc):
    arr = np.array([0j, 3 + 4j, -1j, 2.0 + 0j, -5 - 12j], dtype=np.complex64)
    tc.compare(_call("sgn"), tc.pair_from_numpy(arr))
    tc.compare(_call("sgn"), tc.pair_from_numpy(arr.astype(np.complex128)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "bool", "float16"])
@pytest.mark.parametrize("op", INPLACE_UNARY)
def test_unary_inplace_and_out(tc, op, dtype):
    a = tc.pair(dtype, (3, 4))
    tc.compare(lambda M, x: getattr(x.clone(), op + "_")(), a)
    tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(0, dtype=x.dtype)), a)
    tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(3, 4, dtype=x.dtype)), a)
    if dtype == "float64":
        tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(3, 4, dtype=M.complex128)), a)  # sgn: exact dtype
    tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(3, 4, dtype=M.int32)), a)  # cast error


@pytest.mark.parametrize("op", ["signbit", "isposinf", "isneginf"])
def test_classify_out(tc, op):
    a = tc.pair("float32", (3, 4), special=True)
    tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(3, 4, dtype=M.bool)), a)
    tc.compare(lambda M, x: getattr(M, op)(x, out=M.empty(3, 4)), a)  # cast error


def test_positive_is_identity():
    x = torchplug.ones(3)
    assert torchplug.positive(x) is x and x.positive() is x
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not supported."):
        torchplug.positive(torchplug.ones(2, dtype=torchplug.bool))


# ---- binary ------------------------------------------------------------------------------------------------
def _bin(tc, op, dtype, shape, layout="contiguous"):
    a = tc.pair(dtype, shape, layout=layout, special=dtype in ("float32", "float64"))
    b = tc.pair(dtype, shape, layout=layout, seed=1, nonzero=op in ("fmod", "remainder"))
    return a, b


@pytest.mark.parametrize("layout,shape", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary(tc, op, dtype, layout, shape):
    a, b = _bin(tc, op, dtype, shape, layout)
    tc.compare(_call(op), a, b)


@pytest.mark.parametrize("dtypes", MIXED, ids=["-".join(d) for d in MIXED])
@pytest.mark.parametrize("op", BINARY)
def test_binary_promotion(tc, op, dtypes):
    a = tc.pair(dtypes[0], (2, 3), low=1)
    b = tc.pair(dtypes[1], (2, 3), seed=1, nonzero=True)
    tc.compare(_call(op), a, b)
    tc.compare(_call(op), b, a)


@pytest.mark.parametrize("scalar", [2, -3, 2.5, True, 0], ids=repr)
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", WRAPPED)
def test_binary_scalar(tc, op, dtype, scalar):
    if op in ("fmod", "remainder") and scalar in (0, False):
        pytest.skip("integer division by zero")
    a = tc.pair(dtype, (3, 4), low=1)
    tc.compare(lambda M, x: getattr(M, op)(x, scalar), a)
    if op in ("xlogy", "float_power"):
        tc.compare(lambda M, x: getattr(M, op)(scalar, x), a)


def test_binary_broadcast(tc):
    a, b = tc.pair("float32", (3, 1)), tc.pair("float32", (4,), seed=1)
    for op in BINARY:
        tc.compare(_call(op), a, b)
    tc.compare(_call("hypot"), tc.pair("float32", (3, 2)), tc.pair("float32", (4, 3), seed=2))  # error


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("op", INPLACE_BINARY)
def test_binary_inplace_and_out(tc, op, dtype):
    a, b = tc.pair(dtype, (3, 4)), tc.pair(dtype, (3, 4), seed=1, nonzero=True)
    tc.compare(lambda M, x, y: getattr(x.clone(), op + "_")(y), a, b)
    tc.compare(lambda M, x, y: getattr(M, op)(x, y, out=M.empty(0, dtype=x.dtype)), a, b)
    tc.compare(lambda M, x, y: getattr(M, op)(x, y, out=M.empty(0, dtype=M.int32)), a, b)
    if op != "hypot" or dtype != "int64":  # (PyTorch checks the shape before the dtype there)
        col = tc.pair(dtype, (3, 1), seed=3)
        tc.compare(lambda M, x, y: getattr(x.clone(), op + "_")(y), col, a)  # broadcast into a smaller self


def test_logaddexp_values(tc):
    x = np.array([-np.inf, -np.inf, np.inf, 1000.0, -1000.0, 0.0, np.nan], dtype=np.float64)
    y = np.array([-np.inf, 1.0, np.inf, 1000.0, -999.0, 0.0, 1.0], dtype=np.float64)
    for op in ("logaddexp", "logaddexp2"):
        tc.compare(_call(op), tc.pair_from_numpy(x), tc.pair_from_numpy(y))
    c = tc.pair_from_numpy(np.array([1 + 2j, -3 + 0.5j, 0j], dtype=np.complex128))
    d = tc.pair_from_numpy(np.array([0.5 - 1j, 2 + 2j, 1j], dtype=np.complex128))
    tc.compare(_call("logaddexp"), c, d)


def test_xlogy_special(tc):
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, np.nan, 3.0], dtype=np.float32)
    y = np.array([0.0, np.nan, -1.0, 0.0, 2.0, 1.0, np.inf], dtype=np.float32)
    tc.compare(_call("xlogy"), tc.pair_from_numpy(x), tc.pair_from_numpy(y))


def test_heaviside_values(tc):
    x = tc.pair_from_numpy(np.array([-1.5, 0.0, -0.0, 2.0, np.nan], dtype=np.float32))
    v = tc.pair_from_numpy(np.array([0.5, 0.5, 7.0, 0.5, 0.5], dtype=np.float32))
    tc.compare(_call("heaviside"), x, v)
    tc.compare(_call("heaviside"), x, tc.pair("float64", (5,)))  # different dtypes


def test_copysign_zero_signs(tc):
    x = tc.pair_from_numpy(np.array([1.0, 2.0, 3.0, 0.0], dtype=np.float32))
    y = tc.pair_from_numpy(np.array([-0.0, 0.0, -np.inf, -1.0], dtype=np.float32))
    tc.compare(_call("copysign"), x, y)
    tc.compare(_call("copysign"), tc.pair("int64", (4,)), -0.0)


def test_float_power_inplace(tc):
    a = tc.pair("float64", (3, 4))
    tc.compare(lambda M, x: x.clone().float_power_(2), a)
    tc.compare(lambda M, x: x.clone().float_power_(x), a)
    tc.compare(lambda M, x: x.float().float_power_(2), a)  # dtype error
    tc.compare(lambda M, x: x.clone().float_power_(2j), a)  # needs complex128
    tc.compare(lambda M, x: M.float_power(x, 2, out=M.empty(0, dtype=M.float64)), a)
    tc.compare(lambda M, x: M.float_power(x, 2, out=M.empty(0)), a)  # out must be double
    tc.compare(lambda M, x: M.float_power(x, 2j, out=M.empty(0, dtype=M.float64)), a)  # ... complex double here


def test_lerp_addcmul_addcdiv(tc):
    for dt in ("float32", "float64", "float16", "bfloat16", "complex64"):
        a, b = tc.pair(dt, (3, 4)), tc.pair(dt, (3, 4), seed=1)
        w = tc.pair(dt, (3, 4), seed=2, low=0, high=1)
        for weight in (0.25, 0.75, w, 2):
            tc.compare(lambda M, x, y, z: M.lerp(x, y, z), a, b, weight)
            tc.compare(lambda M, x, y, z: x.clone().lerp_(y, z), a, b, weight)
        c = tc.pair(dt, (4,), seed=3, nonzero=True)
        for value in (1, 0.5, -2):
            tc.compare(lambda M, x, y, z: M.addcmul(x, y, z, value=value), a, b, c)
            tc.compare(lambda M, x, y, z: M.addcdiv(x, y, z, value=value), a, b, c)
            tc.compare(lambda M, x, y, z: x.clone().addcmul_(y, z, value=value), a, b, c)
            tc.compare(lambda M, x, y, z: x.clone().addcdiv_(y, z, value=value), a, b, c)
    i = tc.pair("int64", (3,))
    tc.compare(lambda M, x: M.addcdiv(x, x, x), i)
    tc.compare(lambda M, x: M.lerp(x, x, 0.5), i)
    tc.compare(lambda M, x, y: M.lerp(x, y, 0.5), tc.pair("float32", (3,)), tc.pair("float64", (3,)))


# ---- isclose / allclose / equal ------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"rtol": 0.1}, {"atol": 0.5}, {"rtol": 0, "atol": 0}, {"equal_nan": True}], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool", "complex64", "uint8"])
def test_isclose(tc, dtype, kw):
    a = tc.pair(dtype, (4, 5), special=True)
    b_np = tc.to_numpy(a.tp).copy()
    if dtype.startswith("float"):
        b_np = (b_np + 0.05 * np.arange(b_np.size).reshape(b_np.shape)).astype(b_np.dtype)
    b = tc.pair_from_numpy(b_np.astype(tc.data(dtype, (1,)).dtype))
    tc.compare(lambda M, x, y: M.isclose(x, y, **kw), a, b)
    tc.compare(lambda M, x, y: x.isclose(y, **kw), a, b)
    tc.compare(lambda M, x, y: M.allclose(x, y, **kw), a, b)
    tc.compare(lambda M, x, y: M.allclose(x, x, **kw), a, b)


def test_isclose_errors(tc):
    a, b = tc.pair("float32", (3,)), tc.pair("float64", (3,))
    tc.compare(lambda M, x, y: M.isclose(x, y), a, b)
    tc.compare(lambda M, x: M.isclose(x, x, rtol=-1.0), a)
    tc.compare(lambda M, x: M.isclose(x, x, atol=-0.5), a)
    tc.compare(lambda M, x, y: M.allclose(x, y), a, tc.pair("float32", (2,)))
    tc.compare(lambda M, x, y: M.isclose(x, y), tc.pair("float32", (3, 1)), tc.pair("float32", (4,)))


def test_equal(tc):
    a = tc.pair("float32", (3, 4))
    tc.compare(lambda M, x: M.equal(x, x.clone()), a)
    tc.compare(lambda M, x: M.equal(x, x.t()), a)
    tc.compare(lambda M, x: M.equal(x, x + 1), a)
    tc.compare(lambda M, x: x.equal(x.double()), a)
    tc.compare(lambda M, x: M.equal(x, x[:1]), a)
    n = tc.pair_from_numpy(np.array([np.nan, 1.0]))
    tc.compare(lambda M, x: M.equal(x, x), n)


# ---- clamp_min / clamp_max -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "uint8", "float16", "bfloat16", "float32", "float64", "bool", "complex64"])
def test_clamp_min_max(tc, dtype):
    a = tc.pair(dtype, (3, 4), special=dtype.startswith("float"))
    b = tc.pair(dtype, (4,), seed=1)
    for op in ("clamp_min", "clamp_max"):
        tc.compare(_call(op), a, b)
        tc.compare(lambda M, x: getattr(M, op)(x, 1), a)
        tc.compare(lambda M, x: getattr(M, op)(x, 0.5), a)
        if dtype not in ("bool", "complex64"):  # PyTorch's in-place messages differ from its functional ones there
            tc.compare(lambda M, x: getattr(x.clone(), op + "_")(1), a)
        tc.compare(lambda M, x, y: getattr(x.clone(), op + "_")(y), a, b)


# ---- errors -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", ["complex64", "bool"])
def test_unary_errors(tc, op, dtype):
    tc.compare(_call(op), tc.pair(dtype, (2,)))


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype", ["complex128", "bool", "uint8"])
def test_binary_errors(tc, op, dtype):
    tc.compare(_call(op), tc.pair(dtype, (2,)), tc.pair(dtype, (2,), seed=1, nonzero=True))
