"""Derivative formulas of ``_schemas/special.py``'s primitives, as PyTorch's derivatives.yaml writes them.

PyTorch defines no gradient for the Bessel/Airy functions and the orthogonal polynomials: their outputs never
require grad.  ``zeta`` has a gradient for ``other`` only (its ``self`` raises when a gradient reaches it).
"""

from __future__ import annotations

import math

import torchplug as T
from torchplug._schemas.special import POLYNOMIALS

from ._rules import nondifferentiable, rule

__all__: list[str] = []

_A = T.ops.aten

nondifferentiable(*(f"special_{name}" for name in (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", *POLYNOMIALS)))


@rule("special_entr", saves="self")
def special_entr(n, g, self):
    return (g * -(1 + self.log()),)


@rule("special_erfcx", saves="self, result")
def special_erfcx(n, g, self, result):
    return ((2.0 * self * result - 2.0 / math.sqrt(math.pi)) * g,)


@rule("special_i0e", saves="self, result")
def special_i0e(n, g, self, result):
    return (g * (_A.special_i1e(self) - self.sgn() * result),)


@rule("special_i1e", saves="self, result")
def special_i1e(n, g, self, result):
    # FunctionsManual.cpp i1e_backward: the limit 1/2 at x = 0 (where 1/x blows up)
    eps = T.finfo(self.dtype).eps
    not_tiny = self.abs() > eps
    safe = T.where(not_tiny, self, T.full_like(self, eps))
    dx = _A.special_i0e(safe) - result * (self.sgn() + safe.reciprocal())
    return (g * T.where(not_tiny, dx, T.full_like(self, 0.5)),)


@rule("special_log_ndtr", saves="self, result")
def special_log_ndtr(n, g, self, result):
    return (g / math.sqrt(2 * math.pi) * (result + self.pow(2) / 2).neg().exp(),)


@rule("special_ndtri", saves="result")
def special_ndtri(n, g, result):
    return (g * math.sqrt(2 * math.pi) * (result.square() / 2).exp(),)


@rule("special_xlog1py", saves="self, other")
def special_xlog1py(n, g, self, other):
    grad_self = None
    if n[0]:
        grad_self = _A.special_xlog1py(g, other).masked_fill((self == 0.0) & (other <= -1.0), 0.0)
    return grad_self, n[1] and g * self / (other + 1)


@rule("special_zeta", saves="self, other")
def special_zeta(n, g, self, other):
    if n[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return None, n[1] and g * -self * _A.special_zeta(self + 1.0, other)
