"""Fuzzed arithmetic: binary ops with broadcasting, promotion and Python scalars, their in-place
forms, unary ops, ``where``/``clamp``/``pow``, and reductions (``dim``/``keepdim``/``dtype``)."""

from __future__ import annotations

from typing import Any

from torchplug.testing.fuzz._draw import broadcast_shapes
from torchplug.testing.fuzz._table import FuzzOp
from torchplug.testing.fuzz.ops._common import (
    ALL, COMPLEX, FLOATS, INTS, NUMERIC, REALS, Call, Draw, DtypeArg, dim, dims, dtype, maybe_kw, scalar, shape,
    tensor,
)

__all__ = ["OPS"]

DIVISION = ("remainder", "fmod", "floor_divide")


def _divisor(d: Draw, shp: tuple[int, ...], dt: str) -> Any:
    # integer division by zero raises; most integer divisors are kept nonzero so the values get compared
    if dt in INTS and d.chance(75):
        low, high = d.pick(((1, 4), (-4, -1))) if dt != "uint8" else (1, 8)
        return tensor(d, shp, dt, low=low, high=high)
    return tensor(d, shp, dt)


def _binary(name: str, good: tuple[str, ...], *, alpha: bool = False, rounding: bool = False,
            inplace: bool = False) -> FuzzOp:
    def gen(d: Draw) -> Call:
        a_shape, b_shape = broadcast_shapes(d)
        if inplace and d.chance(70):
            a_shape = a_shape if len(a_shape) >= len(b_shape) else b_shape  # self must hold the broadcast
        dt = dtype(d, good)
        dt_b = dt if d.chance(70) else d.pick(ALL)
        a = tensor(d, a_shape, dt)
        if d.chance(25):
            b: Any = scalar(d, "any")
        elif name.rstrip("_") in DIVISION or rounding:
            b = _divisor(d, b_shape, dt_b)
        else:
            b = tensor(d, b_shape, dt_b)
        kwargs: dict[str, Any] = {}
        if alpha and d.chance(30):
            kwargs["alpha"] = scalar(d, d.pick(("int", "float", "bool")))
        if rounding and d.chance(60):
            kwargs["rounding_mode"] = d.pick(("trunc", "floor", None, "round"))
        return Call(name, (a, b), kwargs)

    path = f"Tensor.{name}" if inplace else name
    return FuzzOp(name if not inplace else f"Tensor.{name}", gen, fn=path, grad=not inplace)


def _unary(name: str, good: tuple[str, ...], path: str | None = None, kw: Any = None,
           inplace: bool = False) -> FuzzOp:
    def gen(d: Draw) -> Call:
        dt = dtype(d, good)
        x = tensor(d, shape(d), dt)
        return Call(name, (x,), kw(d) if kw else {})

    return FuzzOp(name, gen, fn=path or name, grad=not inplace)


def _where(d: Draw) -> Call:
    c, a, b = broadcast_shapes(d, 3)
    cond_dt = "bool" if d.chance(85) else d.pick(("float32", "uint8", "int64"))
    dt = dtype(d, ALL)
    x: Any = tensor(d, a, dt) if d.chance(80) else scalar(d, "any")
    y: Any = tensor(d, b, dt if d.chance(70) else d.pick(ALL)) if d.chance(80) else scalar(d, "any")
    return Call("where", (tensor(d, c, cond_dt), x, y))


def _clamp(d: Draw) -> Call:
    shapes = broadcast_shapes(d, 3)
    dt = dtype(d, REALS)

    def bound(shp: tuple[int, ...]) -> Any:
        choice = d.int(0, 9)
        if choice < 3:
            return None
        if choice < 7:
            return scalar(d, d.pick(("int", "float")))
        return tensor(d, shp, dt if d.chance(70) else d.pick(REALS))

    return Call("clamp", (tensor(d, shapes[0], dt),), {"min": bound(shapes[1]), "max": bound(shapes[2])})


def _pow(d: Draw) -> Call:
    mode = d.int(0, 3)
    dt = dtype(d, NUMERIC)
    shp_a, shp_b = broadcast_shapes(d)
    if mode == 0:  # tensor ** int scalar (negative integer powers of integers raise)
        return Call("pow", (tensor(d, shp_a, dt), d.int(-3, 4)))
    if mode == 1:  # scalar ** tensor
        return Call("pow", (scalar(d, d.pick(("int", "float"))), tensor(d, shp_b, dt)))
    if mode == 2:
        return Call("pow", (tensor(d, shp_a, dt), scalar(d, "float")))
    exp_dt = dt if d.chance(70) else d.pick(ALL)
    exp = tensor(d, shp_b, exp_dt, low=0, high=3) if exp_dt in INTS and d.chance(70) else tensor(d, shp_b, exp_dt)
    return Call("pow", (tensor(d, shp_a, dt), exp))


# ---- reductions -----------------------------------------------------------------------------------------------
def _dim_arg(d: Draw, ndim: int, tuple_ok: bool = True) -> Any:
    choice = d.int(0, 9)
    if choice < 3:
        return None
    if choice < 7 or not tuple_ok:
        return dim(d, ndim)
    return dims(d, ndim)


def _reduction(name: str, good: tuple[str, ...], *, tuple_ok: bool = True, dim_required: bool = False,
               dtype_kw: bool = False, correction: bool = False, tol: str = "reduce", grad: bool = True) -> FuzzOp:
    def gen(d: Draw) -> Call:
        dt = dtype(d, good)
        shp = shape(d)
        x = tensor(d, shp, dt)
        kwargs: dict[str, Any] = {}
        dim_value = _dim_arg(d, len(shp), tuple_ok)
        if dim_value is None and dim_required:
            dim_value = dim(d, len(shp))
        if dim_value is not None:
            kwargs["dim"] = dim_value
            if d.chance(50):
                kwargs["keepdim"] = bool(d.int(0, 1))
        if dtype_kw and d.chance(30):
            kwargs["dtype"] = DtypeArg(d.pick(ALL))
        if correction and d.chance(60):
            kwargs["correction"] = d.pick((0, 1, 2, 0.5))
        return Call(name, (x,), kwargs)

    return FuzzOp(name, gen, tol=tol, grad=grad)


def _max_like(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        dt = dtype(d, REALS)
        shp = shape(d)
        x = tensor(d, shp, dt)
        if d.chance(35):
            return Call(name, (x,))
        args: tuple[Any, ...] = (x, dim(d, len(shp)))
        return Call(name, args + ((bool(d.int(0, 1)),) if d.chance(50) else ()))

    return FuzzOp(name, gen, grad=True)


def _arg_reduction(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        shp = shape(d)
        x = tensor(d, shp, dtype(d, REALS))
        kwargs = {"dim": dim(d, len(shp))} if d.chance(65) else {}
        kwargs.update(maybe_kw(d, 40, keepdim=(True, False)))
        return Call(name, (x,), kwargs)

    return FuzzOp(name, gen, tol="exact")


def _cumulative(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        shp = shape(d)
        x = tensor(d, shp, dtype(d, ALL))
        kwargs = {"dtype": DtypeArg(d.pick(ALL))} if d.chance(25) else {}
        return Call(name, (x, dim(d, len(shp))), kwargs)

    return FuzzOp(name, gen, tol="reduce", grad=True)


def _vector_norm(d: Draw) -> Call:
    shp = shape(d)
    x = tensor(d, shp, dtype(d, FLOATS + COMPLEX))
    kwargs: dict[str, Any] = {"ord": d.pick((2, 1, float("inf"), float("-inf"), 0, 0.5, 3))}
    if d.chance(60):
        kwargs["dim"] = _dim_arg(d, len(shp))
        kwargs.update(maybe_kw(d, 50, keepdim=(True, False)))
    return Call("linalg.vector_norm", (x,), kwargs)


def _round_kw(d: Draw) -> dict[str, Any]:
    return {"decimals": d.int(-1, 2)} if d.chance(30) else {}


def _nan_to_num_kw(d: Draw) -> dict[str, Any]:
    return maybe_kw(d, 40, nan=(0.0, 1.5, -2.0), posinf=(9.0, 1e30), neginf=(-9.0,))


def _gelu_kw(d: Draw) -> dict[str, Any]:
    return maybe_kw(d, 40, approximate=("none", "tanh"))


OPS = [
    _binary("add", ALL, alpha=True),
    _binary("sub", NUMERIC, alpha=True),
    _binary("mul", ALL),
    _binary("div", ALL, rounding=True),
    _binary("remainder", INTS + FLOATS),
    _binary("fmod", INTS + FLOATS),
    _binary("floor_divide", INTS + FLOATS),
    _binary("maximum", REALS),
    _binary("minimum", REALS),
    _binary("atan2", INTS + FLOATS),
    _binary("eq", ALL),
    _binary("lt", REALS),
    _binary("ge", REALS),
    _binary("logical_and", ALL),
    _binary("bitwise_and", ("bool",) + INTS),
    _binary("bitwise_xor", ("bool",) + INTS),
    _binary("add_", ALL, alpha=True, inplace=True),
    _binary("mul_", ALL, inplace=True),
    _binary("div_", FLOATS + COMPLEX, rounding=True, inplace=True),  # integer self: true division cannot write back
    FuzzOp("pow", _pow, grad=True),
    FuzzOp("where", _where, grad=True),
    FuzzOp("clamp", _clamp, grad=True),
    _unary("neg", ALL),
    _unary("abs", ALL),
    _unary("exp", ALL),
    _unary("log", ALL),
    _unary("sqrt", ALL),
    _unary("sigmoid", ALL),
    _unary("tanh", ALL),
    _unary("sin", ALL),
    _unary("floor", REALS),
    _unary("round", REALS, kw=_round_kw),
    _unary("sign", REALS),
    _unary("reciprocal", ALL),
    _unary("logical_not", ALL),
    _unary("bitwise_not", ("bool",) + INTS),
    _unary("isnan", ALL),
    _unary("nan_to_num", REALS, kw=_nan_to_num_kw),
    _unary("relu", REALS, path="nn.functional.relu"),
    _unary("gelu", FLOATS, path="nn.functional.gelu", kw=_gelu_kw),
    _unary("Tensor.neg_", NUMERIC, path="Tensor.neg_", inplace=True),
    _reduction("sum", ALL, dtype_kw=True),
    _reduction("mean", FLOATS + COMPLEX, dtype_kw=True),
    _reduction("prod", ALL, tuple_ok=False, dtype_kw=True),
    _reduction("amax", REALS, tol="exact"),
    _reduction("amin", REALS, tol="exact"),
    _reduction("std", FLOATS + COMPLEX, correction=True),
    _reduction("var", FLOATS + COMPLEX, correction=True),
    _reduction("logsumexp", FLOATS, dim_required=True),
    _reduction("all", ALL, tol="exact", grad=False),
    _reduction("any", ALL, tol="exact", grad=False),
    _reduction("count_nonzero", ALL, tol="exact", grad=False),
    _max_like("max"),
    _max_like("min"),
    _arg_reduction("argmax"),
    _arg_reduction("argmin"),
    _cumulative("cumsum"),
    _cumulative("cumprod"),
    FuzzOp("linalg.vector_norm", _vector_norm, tol="reduce", grad=True),
]
