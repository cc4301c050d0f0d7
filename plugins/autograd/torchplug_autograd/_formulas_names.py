"""Derivative formulas of ``_schemas/names.py``'s primitives (i0, special_i1, polygamma, frexp), as PyTorch's
derivatives.yaml writes them."""

from __future__ import annotations

import torchplug as T

from ._rules import rule

__all__: list[str] = []


@rule("i0", saves="self")
def i0(n, g, self):
    return (g * T.ops.aten.special_i1(self),)


@rule("special_i1", saves="self, result")
def special_i1(n, g, self, result):
    # I1' = I0 - I1 / x, with the limit 1/2 at x = 0 (FunctionsManual.cpp i1_backward)
    safe = T.where(self == 0, T.ones_like(self), self)
    return (g * T.where(self == 0, T.full_like(self, 0.5), T.ops.aten.i0(self) - result / safe),)


@rule("polygamma", saves="n, self")
def polygamma(n_, g, n, self):
    return (g * T.ops.aten.polygamma(n + 1, self),)


@rule("frexp.Tensor", saves="result1", outputs=(0,))
def frexp(n, g, exponent):
    # mantissa = self / 2^exponent, the exponent piecewise constant
    return (g[0] / exponent.exp2(),)
