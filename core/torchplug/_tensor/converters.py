"""Argument converters for generated entry points: cheap guards, helpful TypeErrors."""

from __future__ import annotations

import numbers
import operator
from typing import Any

from torchplug._base import dtype as D
from torchplug._runtime.device import as_device, device
from torchplug._dispatch.codegen import GUARD_GLOBALS, IDENTIFIER_DEFAULTS, ArgContext, register_converter

__all__ = ["install_converters"]


def _to_int(value: Any, ctx: ArgContext) -> int:
    if isinstance(value, bool) or isinstance(value, float):
        raise ctx.fail(value, "int")
    try:
        return operator.index(value)
    except TypeError:
        raise ctx.fail(value, "int") from None


def _to_int_list(value: Any, ctx: ArgContext) -> tuple[int, ...]:
    cls = value.__class__
    if cls is tuple or cls is list:  # the usual case: plain ints (conv strides, view shapes)
        for item in value:
            if item.__class__ is not int:
                break
        else:
            return value if cls is tuple else tuple(value)
    if isinstance(value, (int,)) and not isinstance(value, bool) or hasattr(value, "__index__") and not hasattr(value, "__len__"):
        n = ctx.type.list_size or 1
        return (operator.index(value),) * n
    try:
        items = tuple(value)
    except TypeError:
        raise ctx.fail(value, "tuple of ints") from None
    out = []
    for item in items:
        if isinstance(item, (bool, float)):
            raise ctx.fail(value, "tuple of ints")
        try:
            out.append(operator.index(item))
        except TypeError:
            raise ctx.fail(value, "tuple of ints") from None
    return tuple(out)


def _to_float(value: Any, ctx: ArgContext) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return float(value.item())
    raise ctx.fail(value, "float")


def _to_bool(value: Any, ctx: ArgContext) -> bool:
    if type(value).__name__ == "bool_" or (hasattr(value, "item") and getattr(value, "ndim", None) == 0 and isinstance(value.item(), bool)):
        return bool(value)
    raise ctx.fail(value, "bool")


def _to_scalar(value: Any, ctx: ArgContext) -> Any:
    if isinstance(value, numbers.Number):
        return value.item() if hasattr(value, "item") else value
    if hasattr(value, "item") and hasattr(value, "numel") and value.numel() == 1:
        return value.item()  # a one-element Tensor used as a Scalar
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    raise ctx.fail(value, "Number")


_PY_DTYPES = {bool: D.bool_, int: D.int64, float: D.float64, complex: D.complex128}


def _to_dtype(value: Any, ctx: ArgContext) -> D.dtype:
    if value in _PY_DTYPES:
        return _PY_DTYPES[value]
    try:
        return D.from_numpy_dtype(value)
    except TypeError:
        raise ctx.fail(value, "torchplug.dtype") from None


def _to_device(value: Any, ctx: ArgContext) -> device:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return as_device(value)
    raise ctx.fail(value, "torchplug.device, str or int")


def install_converters() -> None:
    """Register the guards for every schema type the generated entries check."""
    GUARD_GLOBALS.update(_SCALAR_CLASSES=frozenset((int, float, bool, complex)), _DTYPE=D.dtype, _DEVICE=device)
    register_converter("int", "{x}.__class__ is int", _to_int)
    register_converter("SymInt", "{x}.__class__ is int", _to_int)
    register_converter("int[]", "{x}.__class__ is tuple", _to_int_list)
    register_converter("SymInt[]", "{x}.__class__ is tuple", _to_int_list)
    register_converter("float", "{x}.__class__ is float", _to_float)
    register_converter("bool", "{x}.__class__ is bool", _to_bool)
    register_converter("Scalar", "{x}.__class__ in _SCALAR_CLASSES", _to_scalar)
    register_converter("ScalarType", "{x}.__class__ is _DTYPE", _to_dtype)
    register_converter("Device", "{x}.__class__ is _DEVICE", _to_device)
    IDENTIFIER_DEFAULTS.update({d.name: d for d in D.ALL_DTYPES})
    IDENTIFIER_DEFAULTS.update({"long": D.int64, "int": D.int32, "float": D.float32, "double": D.float64,
                                "half": D.float16, "contiguous_format": "contiguous_format"})
