"""Pointwise cpu kernels against real PyTorch: values, dtypes (promotion), shapes and errors."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import torchplug

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
LAYOUTS = [("contiguous", (3, 4)), ("transposed", (3, 4)), ("contiguous", ()), ("contiguous", (0, 3))]
LAYOUT_IDS = ["2d", "noncontig", "0dim", "empty"]

UNARY = ("abs neg exp log sqrt rsqrt sin cos tan tanh sigmoid reciprocal log1p expm1 log2 log10 exp2 floor ceil "
         "trunc sign asin acos atan sinh cosh asinh acosh atanh frac square round relu logical_not bitwise_not "
         "isnan isinf isfinite").split()
BINARY = ("add sub mul div pow eq ne lt le gt ge maximum minimum remainder fmod atan2 floor_divide logical_and "
          "logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift").split()
DIVISORS = {"div", "remainder", "fmod", "floor_divide"}
REFLECTED = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv, "pow": operator.pow,
    "remainder": operator.mod, "floor_divide": operator.floordiv, "eq": operator.eq, "ne": operator.ne,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "bitwise_and": operator.and_,
    "bitwise_or": operator.or_, "bitwise_xor": operator.xor, "bitwise_left_shift": operator.lshift,
    "bitwise_right_shift": operator.rshift,
}
MIXED = [("uint8", "int8"), ("bool", "int64"), ("int32", "float16"), ("float16", "bfloat16"), ("int64", "float32"),
         ("float32", "float64"), ("int32", "complex64"), ("bool", "float32"), ("int8", "int32"), ("float16", "complex64"),
         ("uint8", "bool"), ("bfloat16", "int64")]
SCALARS = [2, -3, 2.5, True, 1.5j, 1000]


def tc_np_dtype(name):
    import ml_dtypes

    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _call(op):
    return lambda M, *args, **kw: getattr(M, op)(*args, **kw)


# ---- unary ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout,shape", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY)
def test_unary(tc, op, dtype, layout, shape):
    # nan/inf inputs only for real dtypes: NumPy's and PyTorch's complex special-value handling differ
    a = tc.pair(dtype, shape, layout=layout, special=not dtype.startswith("complex"))
    tc.compare(_call(op), a)


@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_decimals(tc, dtype, decimals):
    if dtype == "int64" and decimals == 0:
        pytest.skip("torch's round.decimals rejects ints even for decimals=0; torchplug has one round overload")
    arr = np.array([1234.5678, 2.5, 3.5, -2.5, 0.125, -0.05, 1.005, 15.0], dtype=np.float64)
    if dtype == "int64":
        arr = arr * 100
    a = tc.pair_from_numpy(arr.astype(tc_np_dtype(dtype)))
    tc.compare(lambda M, x: M.round(x, decimals=decimals), a)


def test_unary_special_values(tc):
    arr = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1.5, 0.5, 100.0, -100.0], dtype=np.float32)
    for op in UNARY:
        tc.compare(_call(op), tc.pair_from_numpy(arr))


def test_unary_int_edge_cases(tc):
    tc.compare(_call("abs"), tc.pair_from_numpy(np.array([-128, 127, 0], dtype=np.int8)))
    tc.compare(_call("neg"), tc.pair_from_numpy(np.array([0, 1, 255], dtype=np.uint8)))
    tc.compare(_call("sign"), tc.pair_from_numpy(np.array([0, 3], dtype=np.uint8)))
    tc.compare(_call("reciprocal"), tc.pair_from_numpy(np.array([0, 2, -4])))
    tc.compare(_call("square"), tc.pair_from_numpy(np.array([True, False])))


def test_unary_errors():
    b = torchplug.tensor([True, False])
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        -b
    with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        torchplug.bitwise_not(torchplug.ones(2))
    with pytest.raises(TypeError, match=r"~ \(operator.invert\) is only implemented on integer and Boolean-type tensors"):
        ~torchplug.ones(2)  # torch's operator checks the dtype before dispatch
    with pytest.raises(NotImplementedError, match="floor is not supported for complex inputs"):
        torchplug.floor(torchplug.tensor([1j]))


# ---- binary ----------------------------------------------------------------------------------------
def _binary_pair(tc, op, dtype, shape, layout="contiguous", seed=0):
    a = tc.pair(dtype, shape, layout=layout, seed=seed)
    b = tc.pair(dtype, shape, layout=layout, seed=seed + 1, nonzero=op in DIVISORS)
    return a, b


@pytest.mark.parametrize("layout,shape", LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINARY)
def test_binary_same_dtype(tc, op, dtype, layout, shape):
    a, b = _binary_pair(tc, op, dtype, shape, layout)
    tc.compare(_call(op), a, b)


@pytest.mark.parametrize("dtypes", MIXED, ids=["-".join(d) for d in MIXED])
@pytest.mark.parametrize("op", BINARY)
def test_binary_promotion(tc, op, dtypes):
    a = tc.pair(dtypes[0], (2, 3))
    b = tc.pair(dtypes[1], (2, 3), seed=1, nonzero=op in DIVISORS)
    tc.compare(_call(op), a, b)
    tc.compare(_call(op), b, a if op not in DIVISORS else tc.pair(dtypes[0], (2, 3), nonzero=True))


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32", "float64", "complex64"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_python_scalar(tc, op, dtype, scalar):
    if isinstance(scalar, complex) and dtype in ("float16", "bfloat16"):
        pytest.skip("torchplug has no complex32: half + complex gives complex64")
    a = tc.pair(dtype, (2, 3), nonzero=op in DIVISORS)
    tc.compare(_call(op), a, scalar)
    if op in REFLECTED:
        fn = REFLECTED[op]
        tc.compare(lambda M, x: fn(scalar, x), a)
        tc.compare(lambda M, x: fn(x, scalar), a)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "eq", "lt", "maximum", "pow", "remainder", "bitwise_and"])
@pytest.mark.parametrize("dims,zero", [("int64", "float64"), ("int32", "int64"), ("float16", "float64"),
                                       ("uint8", "int8"), ("float32", "complex128"), ("bool", "int8"), ("int8", "bool")])
def test_zero_dim_promotion(tc, op, dims, zero):
    a = tc.pair(dims, (2, 3), nonzero=True)
    z = tc.pair(zero, (), seed=3, nonzero=True)
    tc.compare(_call(op), a, z)
    tc.compare(_call(op), z, a)


BROADCAST = [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((0, 3), (1, 3)), ((4, 1, 3), (2, 1)),
             ((2, 3), (2, 2)), ((4, 1, 3), (2, 2, 1)), ((3,), (0,))]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "eq", "maximum", "atan2", "logical_and",
                                "bitwise_or", "remainder"])
@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
def test_broadcasting(tc, op, shapes):
    dtype = "int32" if op == "bitwise_or" else "float32"
    a = tc.pair(dtype, shapes[0])
    b = tc.pair(dtype, shapes[1], seed=1, nonzero=True)
    tc.compare(_call(op), a, b)


def test_broadcast_error_message():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                                           r"non-singleton dimension 1"):
        torchplug.ones(2, 3) + torchplug.ones(2, 2)


def test_transposed_views(tc):
    a = tc.pair("float32", (3, 4))
    b = tc.pair("float32", (4, 3), seed=1)
    tc.compare(lambda M, x, y: x.t() + y, a, b)
    tc.compare(lambda M, x, y: M.mul(x.t(), y.t().t().t()), a, b)


# ---- specific semantics ------------------------------------------------------------------------------
def test_integer_promotion_examples():
    assert (torchplug.tensor([1, 2]) + 2.5).dtype == torchplug.float32
    assert (torchplug.tensor([1, 2]) + torchplug.tensor(1.5, dtype=torchplug.float64)).dtype == torchplug.float64
    u8 = torchplug.tensor([1], dtype=torchplug.uint8)
    assert (u8 + torchplug.tensor([1], dtype=torchplug.int8)).dtype == torchplug.int16
    b = torchplug.tensor([True, False])
    assert (b + b).dtype == torchplug.bool
    assert (torchplug.tensor([1], dtype=torchplug.int8) + 1000).tolist() == [-23]
    assert (u8 + -1).tolist() == [0]


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", ["int8", "int64", "float16", "float32", "float64"])
def test_div_rounding_modes(tc, mode, dtype):
    a = tc.pair_from_numpy(np.array([-7, 7, -8, 8, 5, -5, 0, 3], dtype=dtype))
    b = tc.pair_from_numpy(np.array([2, -2, 3, 3, -5, 5, 3, -1], dtype=dtype))
    tc.compare(lambda M, x, y: M.div(x, y, rounding_mode=mode), a, b)
    tc.compare(lambda M, x: M.div(x, 2, rounding_mode=mode), a)
    tc.compare(lambda M, x: M.div(x, -2.5, rounding_mode=mode), a)


def test_float_division_by_zero(tc):
    a = tc.pair_from_numpy(np.array([-3.0, 3.0, 1.0, 0.0, -1.0], dtype=np.float32))
    b = tc.pair_from_numpy(np.array([2.0, -2.0, 0.0, 0.0, 0.0], dtype=np.float32))
    for op in ("div", "remainder", "fmod", "floor_divide"):
        tc.compare(_call(op), a, b)
    tc.compare(lambda M, x, y: M.div(x, y, rounding_mode="trunc"), a, b)
    tc.compare(lambda M, x: M.div(x, 0), tc.pair_from_numpy(np.array([1, -1, 0])))


@pytest.mark.parametrize("fn", [
    lambda M, x: M.div(x, 0, rounding_mode="trunc"), lambda M, x: M.div(x, 0, rounding_mode="floor"),
    lambda M, x: M.remainder(x, 0), lambda M, x: M.fmod(x, 0), lambda M, x: x // 0,
    lambda M, x: x % M.tensor([1, 0, 1]),
])
def test_integer_division_by_zero(tc, fn):
    exc = tc.compare(fn, tc.pair_from_numpy(np.array([1, 2, 3])))
    assert isinstance(exc, RuntimeError) and str(exc) == "ZeroDivisionError"


def test_div_bad_rounding_mode(tc):
    tc.compare(lambda M, x: M.div(x, 2, rounding_mode="foo"), tc.pair("int64"))


def test_remainder_fmod_signs(tc):
    for dtype in ("int32", "float32", "float64"):
        a = tc.pair_from_numpy(np.array([-3, 3, -3, 3, 0, -4], dtype=dtype))
        b = tc.pair_from_numpy(np.array([2, -2, -2, 2, -3, 2], dtype=dtype))
        tc.compare(_call("remainder"), a, b)
        tc.compare(_call("fmod"), a, b)
        tc.compare(lambda M, x: M.remainder(x, 1.5), a)


def test_pow_semantics(tc):
    ints = tc.pair_from_numpy(np.array([1, -1, 2, -1, 0, 3, -2]))
    exps = tc.pair_from_numpy(np.array([-1, -3, -2, -2, 2, 3, -1]))
    tc.compare(_call("pow"), ints, exps)
    tc.compare(lambda M, x: M.pow(x, -1), ints)  # error: negative Python int power
    tc.compare(lambda M, x: M.pow(x, M.tensor(-1)), ints)  # 0-dim tensor exponent: allowed
    tc.compare(lambda M, x: 2 ** x, exps)
    tc.compare(lambda M, x: M.pow(x, 0.5), ints)
    tc.compare(lambda M, x: x ** 2, tc.pair("bool"))
    tc.compare(lambda M, x: x ** True, tc.pair("bool"))
    tc.compare(lambda M, x: x ** 70, tc.pair_from_numpy(np.array([2, 3], dtype=np.int64)))  # wraps like torch
    tc.compare(lambda M, x: x ** -1.5, tc.pair("float16", nonzero=True))


def test_add_alpha(tc):
    i, f, b = tc.pair("int64"), tc.pair("float32"), tc.pair("bool")
    tc.compare(lambda M, x, y: M.add(x, y, alpha=3), i, i)
    tc.compare(lambda M, x, y: M.sub(x, y, alpha=-2), i, i)
    tc.compare(lambda M, x, y: M.add(x, y, alpha=0.5), f, f)
    tc.compare(lambda M, x, y: M.add(x, y, alpha=0.5), i, i)  # integral alpha error
    tc.compare(lambda M, x, y: M.add(x, y, alpha=True), f, f)  # boolean alpha error
    tc.compare(lambda M, x, y: M.add(x, y, alpha=2), b, b)
    tc.compare(lambda M, x, y: M.add(x, y, alpha=1j), f, f)
    tc.compare(lambda M, x: M.add(x, 2, alpha=2.5), f)
    tc.compare(lambda M, x, y: M.add(x, y, alpha=1e5), tc.pair("float16"), tc.pair("float16"))  # overflow error


def test_sub_bool_errors(tc):
    b, i = tc.pair("bool"), tc.pair("int64")
    for fn in (lambda M, x, y: x - x, lambda M, x, y: x - y, lambda M, x, y: y - x, lambda M, x, y: x - 1,
               lambda M, x, y: 1 - x, lambda M, x, y: y - True):
        tc.compare(fn, b, i)
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        b.tp - b.tp


def test_shifts_out_of_range(tc):
    for dtype in ("uint8", "int8", "int32", "int64"):
        a = tc.pair_from_numpy(np.array([1, -1, 5, -8, 100, 7], dtype=np.int64).astype(dtype))
        s = tc.pair_from_numpy(np.array([0, 3, 7, 8, 70, -1], dtype=np.int64).astype(dtype))
        tc.compare(_call("bitwise_left_shift"), a, s)
        tc.compare(_call("bitwise_right_shift"), a, s)
        tc.compare(lambda M, x: x << 9, a)
        tc.compare(lambda M, x: x >> 9, a)


def test_maximum_minimum_nan(tc):
    a = tc.pair_from_numpy(np.array([1.0, np.nan, np.nan, 2.0], dtype=np.float32))
    b = tc.pair_from_numpy(np.array([np.nan, 2.0, np.nan, 1.0], dtype=np.float32))
    tc.compare(_call("maximum"), a, b)
    tc.compare(_call("minimum"), a, b)


def test_half_opmath_scalars(tc):
    h = tc.pair_from_numpy(np.array([1e-3, 1.0, 60000.0], dtype=np.float16))
    tc.compare(lambda M, x: x * 1e5, h)
    tc.compare(lambda M, x: x + 1e5, h)
    tc.compare(lambda M, x: x == 0.1, tc.pair_from_numpy(np.array([0.1], dtype=np.float16)))


def test_bitwise_float_error():
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        torchplug.ones(2) & torchplug.ones(2)


def test_no_numpy_warnings():
    # pytest runs with filterwarnings=error: any NumPy RuntimeWarning would fail here
    x = torchplug.tensor([0.0, -1.0, 60000.0, float("nan")])
    torchplug.log(x), x / 0, torchplug.sqrt(x), x.half() * x.half(), torchplug.exp(x * 1000), x.bfloat16() < 1
    torchplug.remainder(x, 0.0), torchplug.floor_divide(x, 0.0), torchplug.pow(x, -1.5), x.half() + 1e9


# ---- where / lerp / addcmul / addcdiv / clamp / masked_fill ------------------------------------------------
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float32"), ("uint8", "int8"), ("bool", "bool"),
                                    ("float16", "bfloat16"), ("int32", "int32"), ("complex64", "float64")], ids=str)
def test_where(tc, dtypes):
    cond = tc.pair("bool", (3, 4), seed=5)
    a, b = tc.pair(dtypes[0], (3, 4)), tc.pair(dtypes[1], (4,), seed=1)
    tc.compare(lambda M, c, x, y: M.where(c, x, y), cond, a, b)
    tc.compare(lambda M, c, x: M.where(c, x, 2.5), cond, a)
    tc.compare(lambda M, c, x: M.where(c, 2, x), cond, a)
    tc.compare(lambda M, c, x: x.where(c, 0), cond, a)


def test_where_scalars_and_errors(tc):
    cond = tc.pair("bool", (3,))
    tc.compare(lambda M, c: M.where(c, 1, 2.5), cond)
    tc.compare(lambda M, c: M.where(c, True, 0), cond)
    tc.compare(lambda M, c, x: M.where(x, x, x), cond, tc.pair("float32", (3,)))
    tc.compare(lambda M, c, x: M.where(c, x, M.ones(4)), cond, tc.pair("float32", (2, 1)))
    tc.compare(lambda M, c: M.where(c.to(M.uint8), 1.0, 2.0), cond)


@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16", "float32", "float64", "complex64"])
def test_lerp(tc, dtype):
    a, b = tc.pair(dtype, (3, 4)), tc.pair(dtype, (4,), seed=1)
    w = tc.pair(dtype, (3, 1), seed=2) if dtype != "int64" else tc.pair("float32", (3, 1), seed=2)
    for weight in (0.25, 0.75, 2, -1.0):
        tc.compare(lambda M, x, y: M.lerp(x, y, weight), a, b)
    tc.compare(lambda M, x, y, z: M.lerp(x, y, z), a, b, w)
    tc.compare(lambda M, x, y: M.lerp(x, y, M.tensor(0.3, dtype=M.float64)), a, b)


def test_lerp_dtype_errors(tc):
    f = tc.pair("float32")
    tc.compare(lambda M, x: M.lerp(x, x.double(), 0.5), f)
    tc.compare(lambda M, x: M.lerp(x, x, x.double()), f)


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("dtypes", [("float32",) * 3, ("int64",) * 3, ("bool",) * 3, ("float16",) * 3,
                                    ("int64", "float32", "float32"), ("float32", "int32", "int64"),
                                    ("float32", "bool", "float32"), ("bfloat16", "float32", "float32"),
                                    ("complex64", "float32", "complex64")], ids=str)
@pytest.mark.parametrize("value", [1, 0.5, -2, 1j])
def test_addcmul_addcdiv(tc, op, dtypes, value):
    if isinstance(value, complex) and dtypes[0] == "float16":
        pytest.skip("torchplug has no complex32")
    s = tc.pair(dtypes[0], (3, 4))
    t1 = tc.pair(dtypes[1], (4,), seed=1)
    t2 = tc.pair(dtypes[2], (3, 1), seed=2, nonzero=True)
    tc.compare(lambda M, a, b, c: getattr(M, op)(a, b, c, value=value), s, t1, t2)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                                   "complex64"])
@pytest.mark.parametrize("bounds", [(0, 1), (-1, None), (None, 2), (0.5, 2.5), (3, 1), (float("nan"), 2), (False, True)],
                         ids=str)
def test_clamp_scalar(tc, dtype, bounds):
    a = tc.pair(dtype, (3, 4), special=True)
    tc.compare(lambda M, x: M.clamp(x, *bounds), a)
    tc.compare(lambda M, x: x.clamp(min=bounds[0], max=bounds[1]), a)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float16", "float32", "complex64"])
def test_clamp_tensor(tc, dtype):
    a = tc.pair(dtype, (3, 4), special=True)
    lo = tc.pair(dtype, (4,), seed=1)
    hi = tc.pair("float64", (3, 1), seed=2)
    tc.compare(lambda M, x, l, h: M.clamp(x, l, h), a, lo, hi)
    tc.compare(lambda M, x, l: M.clamp(x, l), a, lo)
    tc.compare(lambda M, x, h: M.clamp(x, max=h), a, hi)


def test_clamp_errors(tc):
    tc.compare(lambda M, x: M.clamp(x), tc.pair("float32"))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "complex64"])
@pytest.mark.parametrize("value", [2, 2.7, True, -1, float("inf"), 1j, 1000])
def test_masked_fill(tc, dtype, value):
    a = tc.pair(dtype, (3, 4))
    mask = tc.pair("bool", (4,), seed=9)
    tc.compare(lambda M, x, m: x.masked_fill(m, value), a, mask)
    tc.compare(lambda M, x, m: M.masked_fill(x, m, M.tensor(value)), a, mask)


def test_masked_fill_errors_and_broadcast(tc):
    i = tc.pair("int64", (3,))
    tc.compare(lambda M, x: x.masked_fill(x.float(), 0), i)
    tc.compare(lambda M, x: x.masked_fill(x.to(M.uint8), 0), i)
    tc.compare(lambda M, x: x.masked_fill(x > 0, M.tensor([1])), i)
    tc.compare(lambda M, x: x.masked_fill(M.tensor([[True], [False]]), 0), i)
    tc.compare(lambda M, x: x.clone().masked_fill_(M.tensor([[True], [False]]), 0), i)
    tc.compare(lambda M, x: x.clone().masked_fill_(x > 1, 7), i)


# ---- in-place and out= -------------------------------------------------------------------------------
INPLACE = [
    ("add_", lambda x, y: x.add_(y)), ("add_alpha", lambda x, y: x.add_(y, alpha=2)), ("sub_", lambda x, y: x.sub_(y)),
    ("mul_", lambda x, y: x.mul_(y)), ("div_", lambda x, y: x.div_(y)), ("iadd", lambda x, y: operator.iadd(x, y)),
    ("imul_scalar", lambda x, y: operator.imul(x, 0.9)), ("isub_scalar", lambda x, y: operator.isub(x, 3)),
    ("idiv_scalar", lambda x, y: operator.itruediv(x, 4)), ("addcmul_", lambda x, y: x.addcmul_(y, y, value=0.1)),
    ("addcdiv_", lambda x, y: x.addcdiv_(y, y + 10, value=-0.5)), ("lerp_", lambda x, y: x.lerp_(y, 0.1)),
    ("clamp_", lambda x, y: x.clamp_(-1, 1)), ("clamp_tensor_", lambda x, y: x.clamp_(max=y)),
    ("masked_fill_", lambda x, y: x.masked_fill_(y > 0, 5)), ("exp_", lambda x, y: x.exp_()),
    ("pow_", lambda x, y: x.pow_(2)), ("floor_divide_", lambda x, y: x.floor_divide_(3)),
    ("div_trunc_", lambda x, y: x.div_(3, rounding_mode="trunc")), ("ilshift", lambda x, y: operator.ilshift(x, 1)),
]


@pytest.mark.parametrize("dtype", ["int64", "uint8", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace(tc, name, fn, dtype):
    def run(M, x, y):
        x = x.clone()
        before = x._version
        r = fn(x, y)
        assert r is x
        assert x._version == before + 1
        return x

    a = tc.pair(dtype, (3, 4))
    b = tc.pair(dtype, (3, 4), seed=1, nonzero=True)
    tc.compare(run, a, b)


def test_inplace_broadcast_and_cast_errors(tc):
    f = tc.pair("float32", (3,))
    i = tc.pair("int64", (3,))
    tc.compare(lambda M, x: x.clone().add_(M.ones(2, 3)), f)
    tc.compare(lambda M, x: x.clone().add_(M.ones(2)), f)
    tc.compare(lambda M, x: x.clone().add_(1.5), i)
    tc.compare(lambda M, x: x.clone().mul_(M.ones(3)), i)
    tc.compare(lambda M, x: x.clone().div_(2), i)
    tc.compare(lambda M, x: x.clone().addcmul_(M.ones(2, 3), M.ones(3)), f)
    tc.compare(lambda M, x: x.clone().lerp_(M.ones(2, 3), 0.5), f)
    tc.compare(lambda M, x: x.clone().clamp_(0.5, 1.5), i, message=False)  # torch says "long int" here
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.tp.clone().add_(1.5)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        f.tp.clone().add_(torchplug.ones(2, 3))


def test_inplace_version_counter():
    a = torchplug.ones(3)
    v = a._version
    a += 1
    assert a._version == v + 1
    a.mul_(2)
    a.addcdiv_(a, a, value=0.5)
    assert a._version == v + 3
    assert a.tolist() == [4.5, 4.5, 4.5]


def test_inplace_aliasing():
    a = torchplug.from_numpy(np.arange(9.0).reshape(3, 3))
    expected = np.arange(9.0).reshape(3, 3)
    expected = expected + expected.T
    a.add_(a.t())
    np.testing.assert_array_equal(a.numpy(), expected)


def test_inplace_on_view_writes_base():
    base = torchplug.zeros(2, 3)
    row = base[1]
    row.add_(torchplug.ones(3))
    assert base.tolist() == [[0, 0, 0], [1, 1, 1]]
    assert base._version == row._version


@pytest.mark.parametrize("op,args", [("add", (2.5,)), ("mul", (3,)), ("div", (2,)), ("eq", (1,)), ("exp", ()),
                                     ("clamp", (0, 1)), ("maximum", None), ("atan2", None), ("pow", (2,))], ids=str)
def test_out(tc, op, args):
    a = tc.pair("float32", (2, 3))
    extra = (a,) if args is None else args

    def run(M, x, *rest):
        out = M.empty(2, 3)
        r = getattr(M, op)(x, *rest, out=out)
        assert r is out
        return out

    tc.compare(run, a, *extra)


def test_out_resize_and_cast(tc):
    a = tc.pair("int64", (2, 3))

    def into_float(M, x):
        out = M.empty(0)
        M.add(x, 1, out=out)
        return out

    tc.compare(into_float, a)
    tc.compare(lambda M, x: M.add(x, 1.5, out=M.empty(2, 3, dtype=M.int64)), a)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torchplug.add(a.tp, 1.5, out=torchplug.empty(2, 3, dtype=torchplug.int64))
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torchplug.add(a.tp, 1, out=torchplug.empty(5))
    out = torchplug.empty(2, 3, dtype=torchplug.float64)
    torchplug.mul(a.tp, 2, out=out)
    assert out.dtype == torchplug.float64 and out.tolist() == (a.tp * 2).tolist()
