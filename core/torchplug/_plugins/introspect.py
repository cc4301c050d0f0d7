"""Introspection: ``explain(op, *args)`` and kernel tables per op, with who registered what."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.tls import tls

__all__ = ["explain", "Explanation", "kernel_table", "result_type"]


@dataclass
class Explanation:
    """The key-set computation and kernel choice for one call."""

    op: str
    schema: str
    argument_keys: list[tuple[str, list[str]]] = field(default_factory=list)
    tls_included: list[str] = field(default_factory=list)
    tls_excluded: list[str] = field(default_factory=list)
    keyset: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    chosen_key: str | None = None
    kernel: str | None = None

    def __str__(self) -> str:
        lines = [f"op:        {self.op}", f"schema:    {self.schema}"]
        for name, keys in self.argument_keys:
            lines.append(f"  arg {name!r}: {keys}")
        lines.append(f"TLS include: {self.tls_included}")
        lines.append(f"TLS exclude: {self.tls_excluded}")
        lines.append(f"key set:   {self.keyset}")
        lines.append("resolution (highest key first):")
        lines.extend(f"  {step}" for step in self.trace)
        lines.append(f"chosen:    {self.chosen_key} -> {self.kernel or 'no kernel (NotImplementedError)'}")
        return "\n".join(lines)


def _entry_of(op: Any) -> OperatorEntry:
    from torchplug._plugins import ensure_loaded

    ensure_loaded()  # kernels come from plugins; introspection must see them
    if hasattr(op, "_entry"):
        return op._entry
    if isinstance(op, str):
        name = op if "::" in op else f"aten::{op}"
        found = DISPATCHER.find(name)
        if found is None:
            for suffix in (".Tensor", ".default", ".int"):
                found = DISPATCHER.find(name + suffix)
                if found:
                    break
        if found is None:
            raise ValueError(f"Unknown operator {op!r}; see torchplug.list_ops().")
        return found
    raise TypeError(f"explain() expects an OpOverload or an op name, got {type(op).__name__}")


def explain(op: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Show how a call to ``op`` with these arguments would be dispatched, without running it.

    Example:
        >>> print(torchplug.explain("add", torchplug.ones(2), 1))  # doctest: +SKIP
    """
    entry = _entry_of(op)
    assert entry.call is not None
    bound = inspect.signature(entry.call).bind(*args, **kwargs)
    bound.apply_defaults()
    report = Explanation(entry.name, str(entry.schema))
    ks = 0
    for arg in entry.schema.arguments:
        if not arg.type.is_tensor_like:
            continue
        value = bound.arguments.get(arg.name)
        values = value if isinstance(value, (list, tuple)) else [value]
        arg_ks = 0
        for v in values:
            arg_ks |= getattr(v, "_keyset", 0)
        ks |= arg_ks
        report.argument_keys.append((arg.name, K.keyset_names(arg_ks) or ["(not a tensor)"]))
    report.tls_included = K.keyset_names(tls.include)
    report.tls_excluded = K.keyset_names(~tls.mask & ((1 << 128) - 1))
    ks = (ks | tls.include) & tls.mask
    report.keyset = K.keyset_names(ks)
    key, reg, _, trace = DISPATCHER.resolve(entry, ks)
    report.trace = trace
    report.chosen_key = key.name if key else None
    report.kernel = reg.describe() if reg is not None else None
    return report


def kernel_table(op: Any) -> dict[str, str]:
    """For every runtime key that exists now: what serves ``op`` there (kernel, alias, fallback...)."""
    entry = _entry_of(op)
    table = {}
    for key in sorted(K.KEYS.values(), key=lambda k: -k.bit):
        reg, why = entry.resolve_key(key, DISPATCHER.fallbacks)
        table[key.name] = "missing" if reg is None else f"{why}: {reg.describe()}"
    return table


def result_type(tensor: Any, other: Any) -> D.dtype:
    """The dtype an arithmetic op on these operands produces (PyTorch's promotion rules)."""
    return D.result_type(tensor, other)
