"""Derivative formulas of ``_schemas/more.py``'s primitives (nextafter, igamma/igammac) and fill_diagonal_,
as PyTorch's derivatives.yaml writes them.  gcd/lcm take integers only and have no gradient; the
other ops of that section are composites differentiated through their decomposition."""

from __future__ import annotations

from typing import Any

import torchplug as T

from ._formulas import _zeros
from ._rules import nondifferentiable, rule

__all__: list[str] = []


@rule("nextafter", saves="")
def nextafter(n, g):
    # derivatives.yaml: self passes the gradient through, other gets zeros
    return n[0] and g, n[1] and _zeros(g)


def _igamma_input() -> Any:
    raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")


def _dx(self: Any, other: Any) -> Any:
    """d/dx of the regularized lower incomplete gamma P(a, x): x^(a-1) e^-x / Gamma(a)."""
    return ((self - 1) * other.log() - other - self.lgamma()).exp()


@rule("igamma", saves="self, other")
def igamma(n, g, self, other):
    if n[0]:
        _igamma_input()
    return None, n[1] and g * _dx(self, other)


@rule("igammac", saves="self, other")
def igammac(n, g, self, other):
    if n[0]:
        raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")
    return None, n[1] and -g * _dx(self, other)


@rule("fill_diagonal_", saves="wrap")
def fill_diagonal_(n, g, wrap):
    # the filled positions no longer depend on self
    return (n[0] and T.clone(g).fill_diagonal_(0, wrap),)


# integer-only: no gradient to give
nondifferentiable("gcd", "lcm")
