"""Registers an autograd kernel for every aten op, chosen from the rule table."""

from __future__ import annotations

from typing import Any

from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry

from . import _formulas, _formulas_double, _formulas_linalg, _formulas_math, _formulas_more, _formulas_nn, _formulas_shape  # noqa: F401  (fill the rule table)
from . import _formulas_sampling  # noqa: F401  (fill the rule table)
from . import _formulas_fused  # noqa: F401,E402  (composites PyTorch differentiates as one node)
from . import _formulas_names  # noqa: F401,E402  (i0, polygamma, frexp)
from . import _formulas_fft  # noqa: F401,E402  (the FFT primitives)
from . import _formulas_special  # noqa: F401,E402  (torchplug.special's primitives)
from . import _formulas_complex  # noqa: F401,E402  (after the others: it wraps their holomorphic rules)
from . import _kernels as KR
from ._rules import NONDIFFERENTIABLE, RULES

__all__ = ["register_all", "classify"]


def _functional_of(entry: OperatorEntry) -> OperatorEntry | None:
    from torchplug._ops.core_kernels import _functional_of as find

    return find(entry)


def _cia(entry: OperatorEntry) -> Any:
    regs = entry.kernels.get("CompositeImplicitAutograd")
    return regs[0].fn if regs else None


def classify(entry: OperatorEntry) -> tuple[str, Any]:
    """(kind, kernel) for one op: rule, inplace, out, decompose, nondiff, not_implemented or none."""
    name = entry.name
    schema = entry.schema
    tensor_args = [a for a in schema.arguments if a.type.base == "Tensor"]
    if not tensor_args:
        return "none", None  # factories: no input can require grad
    if name == "aten::detach":
        return "nondiff", KR.nondiff_kernel(entry, detach=True)
    if name in NONDIFFERENTIABLE:
        return "nondiff", None
    if schema.kind == "out":
        return "out", KR.out_kernel(entry)
    rule = RULES.get(name)
    if rule is not None:
        if schema.is_mutable:
            return "inplace", KR.inplace_kernel(entry, rule, None)
        return "rule", KR.functional_kernel(entry, rule)
    if schema.is_mutable:
        functional = _functional_of(entry)
        if functional is not None:
            if functional.name in NONDIFFERENTIABLE:
                return "nondiff", None
            frule = RULES.get(functional.name)
            if frule is not None:
                return "inplace", KR.inplace_kernel(entry, frule, functional)
            cea = entry.kernels.get("CompositeExplicitAutograd")
            if cea and _cia(functional) is not None:
                # op_ = self.copy_(op(self, ...)) run above autograd: op decomposes, copy_ rebases self
                return "decompose", KR.decompose_kernel(cea[0].fn)
        return "not_implemented", KR.not_implemented_kernel(entry)
    cia = _cia(entry)
    if cia is not None:
        return "decompose", KR.decompose_kernel(cia)
    return "not_implemented", KR.not_implemented_kernel(entry)


def register_all(lib: Any) -> dict[str, list[str]]:
    """Register the autograd kernel of every aten op through ``lib`` (at the Autograd alias key)."""
    report: dict[str, list[str]] = {}
    for name, entry in sorted(DISPATCHER.ops.items()):
        if not name.startswith("aten::"):
            continue
        kind, kernel = classify(entry)
        report.setdefault(kind, []).append(name)
        if kernel is not None:
            lib.impl(name, kernel, "Autograd", with_keyset=True)
    return report
