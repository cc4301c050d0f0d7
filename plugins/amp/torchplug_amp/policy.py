"""Autocast policies as data: which ops run in which dtype on one device type."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import torchplug

__all__ = ["AutocastPolicy", "CAST_POLICIES", "LIST_FIELDS", "normalize_op_name", "as_dtype"]

# The cast policies, in PyTorch's names (``at::autocast::CastPolicy``) plus ``banned``.
LIST_FIELDS = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote")
CAST_POLICIES = (*LIST_FIELDS, "banned")


@dataclass
class AutocastPolicy:
    """One device type's autocast policy, or a contribution to it.

    Every field is optional so a plugin can contribute only part of a policy (say, one custom
    op on the fp32 list); contributions for the same device are merged in registration order,
    later ones overriding earlier ones op by op.

    Args:
        device_type: the device type this policy is for (``'cpu'``).
        default_dtype: the lower-precision dtype autocast uses when ``dtype=None``.
        supported_dtypes: dtypes ``autocast(device_type, dtype=...)`` accepts; others warn and
            disable autocast, as in PyTorch.
        lower_precision_fp: ops cast to the autocast dtype (matmul, conv, linear...).
        fp32: ops cast to float32 (losses, reductions, transcendental functions...).
        fp32_set_opt_dtype: ops with an optional ``dtype`` argument that is set to float32
            when the caller gave none (softmax, sum...).
        promote: ops run in the widest floating dtype among their inputs (cat, stack...).
        banned: op name -> error message raised when the op runs under autocast.

    Op names are operator names, ``'aten::'`` implied: ``'mm'``, ``'conv2d.padding'``,
    ``'myns::myop'``.
    """

    device_type: str = ""
    default_dtype: Any = None
    supported_dtypes: tuple[Any, ...] | None = None
    lower_precision_fp: tuple[str, ...] = ()
    fp32: tuple[str, ...] = ()
    fp32_set_opt_dtype: tuple[str, ...] = ()
    promote: tuple[str, ...] = ()
    banned: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any, device_type: str = "") -> AutocastPolicy:
        """A policy from a mapping or an object with the same fields (plugins send plain data)."""
        names = {f.name for f in fields(cls)}
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - names)
            if unknown:
                raise TypeError(f"Unknown autocast policy field(s) {unknown}; the fields are {sorted(names)}.")
            values = dict(data)
        else:
            values = {name: getattr(data, name) for name in names if hasattr(data, name)}
        policy = cls(**values)
        if device_type:
            if policy.device_type and policy.device_type != device_type:
                raise ValueError(
                    f"An autocast policy for device type {policy.device_type!r} was registered for {device_type!r}."
                )
            policy.device_type = device_type
        if not policy.device_type:
            raise ValueError("An autocast policy needs a device_type.")
        policy.default_dtype = None if policy.default_dtype is None else as_dtype(policy.default_dtype)
        if policy.supported_dtypes is not None:
            policy.supported_dtypes = tuple(as_dtype(d) for d in policy.supported_dtypes)
        for name in LIST_FIELDS:
            setattr(policy, name, _names(getattr(policy, name), name))
        policy.banned = {normalize_op_name(k): str(v) for k, v in dict(policy.banned).items()}
        return policy

    def entries(self) -> Iterable[tuple[str, str, str | None]]:
        """(op name, cast policy, ban message) for every op this policy lists, in list order."""
        for kind in LIST_FIELDS:
            for name in getattr(self, kind):
                yield name, kind, None
        for name, message in self.banned.items():
            yield name, "banned", message


def _names(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError(f"Autocast policy field {what!r} must be a list of op names, not the string {value!r}.")
    return tuple(normalize_op_name(v) for v in value)


def normalize_op_name(op: Any) -> str:
    """``'mm'`` -> ``'aten::mm'``; OpOverloads and packets give their own names."""
    if hasattr(op, "name") and callable(op.name):
        return op.name()
    if hasattr(op, "_namespace") and hasattr(op, "_name"):  # OpOverloadPacket
        return f"{op._namespace}::{op._name}"
    if callable(op) and not isinstance(op, type) and isinstance(getattr(op, "__name__", None), str):
        op = op.__name__.strip("_")  # torchplug.mm, Tensor.mm: the aten op of the same name
    if not isinstance(op, str) or not op:
        raise TypeError(f"Expected an operator name such as 'mm' or 'aten::mm', got {op!r}.")
    return op if "::" in op else f"aten::{op}"


def as_dtype(value: Any) -> Any:
    """A torchplug dtype from a dtype or its name (``'bfloat16'``)."""
    if isinstance(value, torchplug.dtype):
        return value
    if isinstance(value, str):
        found = getattr(torchplug, value.removeprefix("torchplug.").removeprefix("torch."), None)
        if isinstance(found, torchplug.dtype):
            return found
    raise TypeError(f"Expected a torchplug dtype or its name, got {value!r}.")
