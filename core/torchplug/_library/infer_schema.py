"""``infer_schema``: an operator schema from a Python function's type hints (PyTorch's rules)."""

from __future__ import annotations

import inspect
import numbers
import typing
from collections.abc import Callable, Sequence
from typing import Any, Optional, Union

__all__ = ["infer_schema", "UNKNOWN_MUTATES"]

UNKNOWN_MUTATES = "unknown"


def _type_tables() -> tuple[dict[Any, str], dict[Any, str]]:
    """Annotation -> schema type for parameters and for returns (built lazily: needs Tensor)."""
    from torchplug._runtime.device import device
    from torchplug._base.dtype import dtype
    from torchplug._tensor.tensor import Tensor

    base = [(Tensor, "Tensor"), (int, "SymInt"), (float, "float"), (bool, "bool"), (str, "str"),
            (numbers.Number, "Scalar"), (dtype, "ScalarType"), (device, "Device")]
    params: dict[Any, str] = {}
    for py, schema in base:
        params[py] = schema
        params[Optional[py]] = schema + "?"
    for py, schema in [(Tensor, "Tensor"), (int, "SymInt"), (float, "float"), (bool, "bool")]:
        for container in (list, Sequence, typing.List, typing.Sequence):  # noqa: UP006 - users write these
            params[container[py]] = schema + "[]"
            params[Optional[container[py]]] = schema + "[]?"
    for container in (list, Sequence, typing.List, typing.Sequence):  # noqa: UP006
        params[container[Optional[Tensor]]] = "Tensor?[]"
    params[Union[int, float, bool]] = "Scalar"  # how typing spells a number argument
    returns: dict[Any, str] = {
        Tensor: "Tensor", list[Tensor]: "Tensor[]", typing.List[Tensor]: "Tensor[]",  # noqa: UP006
        int: "SymInt", float: "float", bool: "bool", numbers.Number: "Scalar",
    }
    return params, returns


def _resolve(annotation: Any, fn: Callable[..., Any]) -> Any:
    """Turn a string annotation (``from __future__ import annotations``) into the object."""
    if not isinstance(annotation, str):
        return annotation
    from types import SimpleNamespace

    from torchplug._base.dtype import dtype
    from torchplug._runtime.device import device
    from torchplug._tensor.tensor import Tensor

    # ``torch.Tensor``/``torch.dtype``/``torch.device`` in an annotation of a function whose module did not
    # import torch under that name; the function's own globals (below) win when it did
    torch_names = SimpleNamespace(Tensor=Tensor, dtype=dtype, device=device)
    scope: dict[str, Any] = {"torch": torch_names, "torchplug": torch_names, "Tensor": Tensor,
                             "Optional": Optional, "Union": Union, "Sequence": Sequence, "typing": typing,
                             "numbers": numbers, "List": typing.List}  # noqa: UP006
    scope.update(getattr(fn, "__globals__", {}))
    try:
        return eval(annotation, scope)  # noqa: S307 - annotations are the user's own code
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"infer_schema(func): could not resolve the annotation {annotation!r}: {exc}") from None


def _default_text(value: Any) -> str | None:
    from torchplug._runtime.device import device
    from torchplug._base.dtype import dtype

    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, device):
        return f'"{value}"'
    if isinstance(value, dtype):
        return str(value).split(".")[-1]
    return None


def infer_schema(prototype_function: Callable[..., Any], /, *, mutates_args: Any, op_name: str | None = None) -> str:
    """The schema of ``prototype_function`` from its type hints, as PyTorch infers it.

    ``int`` becomes ``SymInt``, ``Optional[T]`` ``T?``, ``list[T]``/``Sequence[T]`` ``T[]``;
    mutated arguments (``mutates_args``, or every Tensor for ``"unknown"``) become
    ``Tensor(a<i>!)``.  Unsupported annotations raise ``ValueError`` naming the parameter.

    Example:
        >>> infer_schema(lambda x, n: x, mutates_args=())  # doctest: +SKIP
    """
    sig = inspect.signature(prototype_function)
    params_table, returns_table = _type_tables()

    def error_fn(what: str) -> typing.NoReturn:
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    if isinstance(mutates_args, str):
        if mutates_args != UNKNOWN_MUTATES:
            raise ValueError(
                "mutates_args must either be a sequence of the names of the arguments that are mutated "
                "or the string 'unknown'. "
            )
    else:
        mutates_args = tuple(mutates_args)
    params: list[str] = []
    seen: set[str] = set()
    saw_kwarg_only = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only:
            params.append("*")
            saw_kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation = _resolve(param.annotation, prototype_function)
        try:
            schema_type = params_table.get(annotation)
        except TypeError:  # unhashable annotation objects
            schema_type = None
        if schema_type is None:
            valid = ", ".join(sorted({v for v in params_table.values()}))
            if typing.get_origin(annotation) is tuple:
                error_fn(
                    f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs "
                    f"in schema. As a workaround, please try to use List instead. For example, list[int]. "
                    f"The valid schema types are: {valid}."
                )
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. The valid schema types are: {valid}.")
        mutated = (mutates_args == UNKNOWN_MUTATES and schema_type.startswith("Tensor")) or (
            mutates_args != UNKNOWN_MUTATES and name in mutates_args
        )
        if mutated:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            text = _default_text(param.default)
            if text is None:
                error_fn(f"Parameter {name} has an unsupported default value type {type(param.default)}.")
            params.append(f"{schema_type} {name}={text}")
    if mutates_args != UNKNOWN_MUTATES:
        unseen = set(mutates_args) - seen
        if unseen:
            error_fn(
                f"{unseen} in mutates_args were not found in the custom op's signature. mutates_args should "
                "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                "don't know."
            )
    ret = _return_schema(_resolve(sig.return_annotation, prototype_function), returns_table, error_fn)
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


def _return_schema(annotation: Any, table: dict[Any, str], error_fn: Callable[[str], typing.NoReturn]) -> str:
    if annotation is None or annotation is type(None):
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    valid = ", ".join(sorted(set(table.values())))
    if typing.get_origin(annotation) is not tuple:
        found = table.get(annotation) if _hashable(annotation) else None
        if found is None:
            error_fn(f"Return has unsupported type {annotation}. The valid return types are: {valid}.")
        return found
    parts = []
    for arg in typing.get_args(annotation):
        found = table.get(arg) if _hashable(arg) else None
        if found is None:
            error_fn(f"Return has unsupported type {annotation}. The valid return types are: {valid}.")
        parts.append(found)
    return "(" + ", ".join(parts) + ")"


def _hashable(obj: Any) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True
