"""Complex autograd: PyTorch's convention, and the formulas of the complex-number ops.

For a complex input PyTorch's gradient is the conjugate Wirtinger derivative: a holomorphic
``f`` sends back ``grad * conj(f'(z))`` (derivatives.yaml writes ``grad * other.conj()`` for
``mul``).  The formulas elsewhere are written as ``grad * f'(z)``, complex-linear in ``grad``, so
for a complex gradient the right one is ``conj(formula(conj(grad)))``: :func:`_holomorphic` wraps
the rules of the holomorphic ops that way (real gradients call the formula unchanged).  A real
input that receives a complex gradient keeps its real part (the engine's cast, PyTorch's
``handle_r_to_c``).

This module is imported after the other formula modules, since it wraps their rules.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torchplug as T
from torchplug._dispatch.aten import A

from ._rules import RULES, rule

__all__: list[str] = []

# Ops whose derivative is complex-analytic in every differentiable input (their rule is grad * f').
HOLOMORPHIC = (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
    "sigmoid", "reciprocal", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "square",
    "add.Tensor", "sub.Tensor", "mul", "mul.Tensor", "add.Scalar", "mul.Scalar", "div.Scalar", "div.Tensor", "pow.Tensor_Tensor", "lerp.Tensor", "addcmul",
    "addcdiv", "dot", "mm", "bmm", "mv", "addmm", "addmv", "addr", "baddbmm", "addbmm", "prod", "cumprod",
)


def _conj(x: Any) -> Any:
    if isinstance(x, T.Tensor):
        return A.conj_physical(x) if x._dtype.is_complex else x
    if isinstance(x, complex):
        return x.conjugate()
    return x


def _holomorphic(fn: Callable[..., Any]) -> Callable[..., Any]:
    def formula(n: Any, g: Any, *saved: Any) -> Any:
        if not (isinstance(g, T.Tensor) and g._dtype.is_complex):
            return fn(n, g, *saved)
        return tuple(_conj(r) for r in fn(n, A.conj_physical(g), *saved))

    formula.__name__ = formula.__qualname__ = getattr(fn, "__name__", "formula")
    formula.__wrapped__ = fn  # type: ignore[attr-defined]
    formula.holomorphic_of = fn  # type: ignore[attr-defined]  # the engine calls fn itself for a real gradient
    return formula


for _op in HOLOMORPHIC:
    _full = f"aten::{_op}"
    _rule = RULES.get(_full)
    if _rule is not None and not hasattr(_rule.fn, "__wrapped__"):
        RULES[_full] = dataclasses.replace(_rule, fn=_holomorphic(_rule.fn))


# ---- the complex-number ops ----------------------------------------------------------------------
@rule("_conj", name="ConjBackward0")
def conj(n, g):
    return (g.conj(),)


@rule("_neg_view", name="NegViewBackward0")
def neg_view(n, g):
    return (g.neg(),)


@rule("conj_physical", name="ConjPhysicalBackward0")
def conj_physical(n, g):
    return (_conj(g),)


@rule("view_as_real", name="ViewAsRealBackward0")
def view_as_real(n, g):
    return (T.view_as_complex(g.contiguous()),)


@rule("view_as_complex", name="ViewAsComplexBackward0")
def view_as_complex(n, g):
    return (T.view_as_real(g.resolve_conj()),)


@rule("angle", saves="self")
def angle(n, g, self):
    # FunctionsManual.cpp angle_backward: grad * i z / |z|^2 (real part taken by the engine), 0 at z = 0
    if not self._dtype.is_complex:
        return (T.zeros_like(self),)
    grad = g * self / self.abs().pow(2) * 1j
    return (T.where(self == 0, T.zeros((), dtype=grad.dtype, device=grad.device), grad),)


@rule("polar", saves="result")
def polar(n, g, result):
    # FunctionsManual.cpp polar_backward
    gc = _conj(g)
    return n[0] and T.real(gc * T.sgn(result)), n[1] and T.real(gc * (result * 1j))


@rule("complex")
def complex_(n, g):
    return n[0] and T.real(g), n[1] and T.imag(g)
