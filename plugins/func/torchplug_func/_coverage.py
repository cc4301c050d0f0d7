"""How each operator batches under vmap: for ``python -m torchplug``-style reports and the coverage test."""

from __future__ import annotations

from typing import Any

__all__ = ["classify"]


def classify(entry: Any) -> str:
    """'rule' (a batching rule), 'random' (randomness modes), 'decomposition' (its CompositeImplicitAutograd
    kernel runs on batched tensors), 'factory' (no tensor argument: never batched), 'out' (an ``out=``
    overload: per-sample writes into the batched ``out``) or 'fallback' (the per-sample loop)."""
    regs = entry.kernels.get("Batched")
    if regs:
        return "rule"
    if "random" in entry.tags:
        return "random"
    from ._kernels import _composite_kernel, _explicit_kernel

    if _composite_kernel(entry):
        return "decomposition"

    if _explicit_kernel(entry):
        return "decomposition"
    if not any(a.type.base == "Tensor" for a in entry.schema.arguments):
        return "factory"
    if "out" in entry.tags:
        return "out"
    return "fallback"
