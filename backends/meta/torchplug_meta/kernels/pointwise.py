"""meta kernels for pointwise ops: broadcast shapes, promoted dtypes, dense output strides.

Table-driven: each op is a row naming its dtype rule and (optionally) a dtype check; three
kernel builders (unary, binary, n-ary) turn the rows into kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


# ---- dtype rules: (computation dtype, operands) -> result dtype ------------------------------------
def _same(dt: D.dtype) -> D.dtype:
    return dt


def _to_float(dt: D.dtype) -> D.dtype:
    """Integer and bool inputs compute in the default float dtype (exp, sqrt, true division...)."""
    return D.get_default_dtype() if D.category(dt) < _FLOAT else dt


def _to_bool(dt: D.dtype) -> D.dtype:
    return D.bool_


def _to_real(dt: D.dtype) -> D.dtype:
    return dt.to_real()


def _square(dt: D.dtype) -> D.dtype:
    return D.int64 if dt is D.bool_ else dt  # square is pow(x, 2): bool promotes with the int 2


RULES: dict[str, Callable[[D.dtype], D.dtype]] = {
    "same": _same, "float": _to_float, "bool": _to_bool, "real": _to_real, "square": _square,
}


# ---- dtype checks: (op name, computation dtype) -> None or raise ------------------------------------
def _not_implemented(name: str, dt: D.dtype) -> None:
    raise NotImplementedError(f'"{name}_cpu" not implemented for \'{C.scalar_type_name(dt)}\'')


def _no_bool_neg(name: str, dt: D.dtype) -> None:
    if dt is D.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )


def _no_complex(name: str, dt: D.dtype) -> None:
    if dt.is_complex:
        if name == "sign":
            raise NotImplementedError(
                "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead."
            )
        raise NotImplementedError(f"{name} is not supported for complex inputs")


def _no_complex_binary(name: str, dt: D.dtype) -> None:
    if dt.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")


def _integral_or_bool(name: str, dt: D.dtype) -> None:
    if D.category(dt) > _INT:
        _not_implemented(name, dt)


def _integral(name: str, dt: D.dtype) -> None:
    if D.category(dt) != _INT:
        _not_implemented({"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}.get(name, name), dt)


def _no_bool(name: str, dt: D.dtype) -> None:
    if dt is D.bool_:
        raise RuntimeError(f"Boolean inputs not supported for {name}")


def _floor_divide(name: str, dt: D.dtype) -> None:
    if dt is D.bool_:
        _not_implemented("div_floor", dt)
    _no_complex_binary(name, dt)


# ---- kernels ------------------------------------------------------------------------------------------
def result(operands: list[Any], dtype: D.dtype) -> C.Tensor:
    """A fresh meta tensor shaped by broadcasting the tensor operands, with elementwise strides."""
    tensors = [o for o in operands if isinstance(o, C.Tensor)]
    size = C.broadcast_shapes(*(t._data.shape for t in tensors))
    return C.new(size, dtype, C.elementwise_strides(size, tensors))


def _unary(name: str, rule: str, check: Callable[[str, D.dtype], None] | None) -> Callable[..., Any]:
    to_dtype = RULES[rule]

    def kernel(self: C.Tensor, *options: Any) -> C.Tensor:
        dt = self._dtype
        if check is not None:
            check(name, dt)
        size = self._data.shape
        return C.new(size, to_dtype(dt), C.elementwise_strides(size, (self,)))

    kernel.__qualname__ = kernel.__name__ = f"meta_{name}"
    return kernel


def _nary(name: str, rule: str, check: Callable[[str, D.dtype], None] | None, n_tensors: int) -> Callable[..., Any]:
    """Kernel for an op whose first ``n_tensors`` arguments are (wrapped) tensor operands."""
    to_dtype = RULES[rule]

    def kernel(*args: Any) -> C.Tensor:
        operands = list(args[:n_tensors])
        dt = C.result_dtype(*operands)
        if check is not None:
            check(name, dt)
        return result(operands, to_dtype(dt))

    kernel.__qualname__ = kernel.__name__ = f"meta_{name}"
    return kernel


# op -> (dtype rule, check); the overload is the one in the schema table.
UNARY: dict[str, tuple[str, Any]] = {
    "abs": ("real", None), "neg": ("same", _no_bool_neg), "sign": ("same", _no_complex),
    "floor": ("same", _no_complex), "ceil": ("same", _no_complex), "trunc": ("same", _no_complex),
    "frac": ("same", lambda n, dt: _not_implemented(n, dt) if D.category(dt) < _FLOAT else _no_complex(n, dt)),
    "square": ("square", None), "round": ("same", _no_complex), "relu": ("same", _no_bool),
    "logical_not": ("bool", None), "bitwise_not": ("same", _integral_or_bool),
    "isnan": ("bool", None), "isinf": ("bool", None), "isfinite": ("bool", None),
    **{name: ("float", None) for name in (
        "exp log sqrt rsqrt sin cos tan tanh sigmoid reciprocal log1p expm1 log2 log10 exp2 "
        "asin acos atan sinh cosh asinh acosh atanh").split()},
}

BINARY: dict[str, tuple[str, Any]] = {
    "mul": ("same", None),
    "maximum": ("same", _no_complex_binary), "minimum": ("same", _no_complex_binary),
    "remainder": ("same", _no_complex_binary), "fmod": ("same", _no_complex_binary),
    "atan2": ("float", _no_complex_binary), "floor_divide": ("same", _floor_divide),
    "pow.Tensor_Tensor": ("same", None),
    "logical_and": ("bool", None), "logical_or": ("bool", None), "logical_xor": ("bool", None),
    "bitwise_and": ("same", _integral_or_bool), "bitwise_or": ("same", _integral_or_bool),
    "bitwise_xor": ("same", _integral_or_bool),
    "bitwise_left_shift": ("same", _integral), "bitwise_right_shift": ("same", _integral),
    **{f"{cmp}.Tensor": ("bool", None) for cmp in ("eq", "ne", "lt", "le", "gt", "ge")},
}

for _name, (_rule, _check) in UNARY.items():
    TABLE.add(f"aten::{_name}", _unary(_name, _rule, _check))
for _name, (_rule, _check) in BINARY.items():
    TABLE.add(f"aten::{_name}", _nary(_name.split(".")[0], _rule, _check, 2))


# ---- binary ops with options ------------------------------------------------------------------------
def _check_alpha(dt: D.dtype, alpha: Any) -> None:
    if isinstance(alpha, bool):
        if dt is not D.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and D.category(dt) < _FLOAT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    elif isinstance(alpha, complex) and not dt.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


@TABLE.impl("aten::add.Tensor")
def add(self: Any, other: Any, alpha: Any = 1) -> C.Tensor:
    dt = C.result_dtype(self, other)
    if alpha != 1 or isinstance(alpha, bool):
        _check_alpha(dt, alpha)
    return result([self, other], dt)


@TABLE.impl("aten::sub.Tensor")
def sub(self: Any, other: Any, alpha: Any = 1) -> C.Tensor:
    a, b = C.dtype_of(self), C.dtype_of(other)
    if a is D.bool_ and b is D.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
            "operator instead."
        )
    if a is D.bool_ or b is D.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead."
        )
    dt = C.result_dtype(self, other)
    if alpha != 1 or isinstance(alpha, bool):
        _check_alpha(dt, alpha)
    return result([self, other], dt)


@TABLE.impl("aten::div.Tensor")
def div(self: Any, other: Any, rounding_mode: str | None = None) -> C.Tensor:
    dt = C.result_dtype(self, other)
    if rounding_mode is None:
        return result([self, other], _to_float(dt))
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
        )
    if dt.is_complex or dt is D.bool_:
        _not_implemented(f"div_{rounding_mode}", dt)
    return result([self, other], dt)


# ---- ternary and masked ops ----------------------------------------------------------------------------
@TABLE.impl("aten::where.self")
def where(condition: Any, self: Any, other: Any) -> C.Tensor:
    if isinstance(condition, C.Tensor) and condition._dtype not in (D.bool_, D.uint8):
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{C.scalar_type_name(condition._dtype)}"
        )
    return result([condition, self, other], C.result_dtype(self, other))


@TABLE.impl("aten::lerp.Tensor")
def lerp(self: C.Tensor, end: Any, weight: Any) -> C.Tensor:
    dt = self._dtype
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, C.Tensor) and t._dtype is not dt:
            raise RuntimeError(f"expected dtype {C.type_name(dt)} for `{name}` but got dtype {C.type_name(t._dtype)}")
    return result([self, end, weight], dt)


@TABLE.impl("aten::addcmul")
def addcmul(self: C.Tensor, tensor1: C.Tensor, tensor2: C.Tensor, value: Any = 1) -> C.Tensor:
    return result([self, tensor1, tensor2], C.result_dtype(self, tensor1, tensor2))


@TABLE.impl("aten::addcdiv")
def addcdiv(self: C.Tensor, tensor1: C.Tensor, tensor2: C.Tensor, value: Any = 1) -> C.Tensor:
    if D.category(tensor1._dtype) < _FLOAT and D.category(tensor2._dtype) < _FLOAT:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    return result([self, tensor1, tensor2], C.result_dtype(self, tensor1, tensor2))


@TABLE.impl("aten::clamp")
def clamp(self: C.Tensor, min: Any = None, max: Any = None) -> C.Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = C.result_dtype(self, min, max)
    if dt is D.bool_:
        _not_implemented("clamp", dt)
    return result([self], dt)


@TABLE.impl("aten::clamp.Tensor")
def clamp_tensor(self: C.Tensor, min: Any = None, max: Any = None) -> C.Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must be not None")
    dt = C.result_dtype(self, min, max)
    if dt is D.bool_:
        _not_implemented("clamp", dt)
    return result([self, min, max], dt)


def _masked_result(self: C.Tensor, mask: C.Tensor) -> C.Tensor:
    # PyTorch: expand_outplace(mask, self), then clone(contiguous) and fill in place.
    return C.new(C.broadcast_shapes(C.shape(mask), C.shape(self)), self._dtype)


def _check_mask(mask: C.Tensor) -> None:
    if mask._dtype is not D.bool_:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {C.type_name(mask._dtype)}"
        )


@TABLE.impl("aten::masked_fill.Scalar")
def masked_fill(self: C.Tensor, mask: C.Tensor, value: Any) -> C.Tensor:
    _check_mask(mask)
    return _masked_result(self, mask)


@TABLE.impl("aten::masked_fill.Tensor")
def masked_fill_tensor(self: C.Tensor, mask: C.Tensor, value: C.Tensor) -> C.Tensor:
    _check_mask(mask)
    if value.dim() != 0:
        raise RuntimeError(
            f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.dim()} dimension(s)."
        )
    return _masked_result(self, mask)
