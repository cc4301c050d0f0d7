"""The derivative rule registry: ``@rule(op, saves)`` declares one op's backward formula.

A formula is ``fn(needs, grad, *saved)``: ``needs[i]`` says whether the i-th differentiable
input wants a gradient, ``grad`` is the output's gradient (a tuple for multi-output ops), and
``saved`` are the values named in ``saves`` (schema argument names, ``result``/``resultK`` for
outputs, or ``name.shape``/``name.dtype``/``name.device``/``name.shapes``/``name.geometry`` for
metadata only).  It returns one gradient (or ``None``) per differentiable input; the engine
reduces broadcast gradients to each input's shape and casts them to its dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._node_names import node_name

__all__ = ["Rule", "RULES", "rule", "NONDIFFERENTIABLE", "nondifferentiable"]

# Inputs that never get a gradient (indices, masks, conditions), by schema argument name.
NON_DIFF_ARG_NAMES = frozenset({"index", "indices", "mask", "condition", "generator"})


@dataclass(frozen=True)
class Rule:
    op: str  # 'aten::mul' / 'aten::add.Tensor'
    saves: tuple[str, ...]
    fn: Callable[..., Any]
    name: str  # PyTorch's node name, e.g. 'MulBackward0'
    inputs: tuple[str, ...] | None  # differentiable inputs (None: every Tensor argument but indices/masks)
    outputs: tuple[int, ...] | None  # differentiable outputs (None: all floating ones)
    refuse: tuple[str, ...] = ()  # inputs that must not require grad (PyTorch raises at the call)


RULES: dict[str, Rule] = {}
NONDIFFERENTIABLE: set[str] = set()


def _qualify(op: str) -> str:
    return op if "::" in op else f"aten::{op}"


def rule(*ops: str, saves: str = "", inputs: str | None = None, outputs: tuple[int, ...] | None = None,
         name: str | None = None, refuse: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as the backward formula of each op in ``ops``.

    ``saves`` is a comma-separated list of what the formula receives after the gradient.
    ``refuse`` names tensor inputs without a formula that PyTorch refuses when they require grad
    ("The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'").
    """
    saved = tuple(s.strip() for s in saves.split(",") if s.strip())
    diff_inputs = None if inputs is None else tuple(s.strip() for s in inputs.split(",") if s.strip())
    refused = tuple(s.strip() for s in refuse.split(",") if s.strip())

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op in ops:
            full = _qualify(op)
            RULES[full] = Rule(full, saved, fn, name or node_name(full), diff_inputs, outputs, refused)
        return fn

    return decorator


def nondifferentiable(*ops: str) -> None:
    """Ops whose outputs never require grad (comparisons, integer results, detach)."""
    NONDIFFERENTIABLE.update(_qualify(op) for op in ops)
