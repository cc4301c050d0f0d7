"""Derivative formulas of ``_schemas/more.py``'s primitives (nextafter, igamma/igammac), fill_diagonal_ and the
composites PyTorch records as one node (fmax/fmin, ldexp, dist, renorm, logcumsumexp, put), as PyTorch's derivatives.yaml writes them.
gcd/lcm take integers only and have no gradient; the section's other composites are differentiated through
their decomposition."""

from __future__ import annotations

import math
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


# ---- composites PyTorch differentiates as one node (their forward is a CompositeExplicitAutograd kernel) ----
def _fminmax(compare: Any) -> Any:
    def formula(n, g, self, other):
        # derivatives.yaml: the gradient goes to self where it was taken (self wins, or other is NaN), else to other
        take_self = compare(self, other).logical_or(other.isnan())
        return n[0] and g.masked_fill(take_self.logical_not(), 0), n[1] and g.masked_fill(take_self, 0)

    return formula


rule("fmax", saves="self, other")(_fminmax(lambda a, b: a >= b))
rule("fmin", saves="self, other")(_fminmax(lambda a, b: a <= b))


@rule("ldexp.Tensor", saves="other, result")
def ldexp(n, g, other, result):
    # self * 2**other: self's gradient is grad * 2**other, other's grad * result * log(2)
    return n[0] and g * T.pow(2.0, other), n[1] and g * result * math.log(2.0)


@rule("dist", saves="self, other, p, result")
def dist(n, g, self, other, p, result):
    # norm_backward of self - other, with the opposite sign for other
    from ._formulas_math import vector_norm

    (grad,) = vector_norm(n, g, self - other, p, None, False, result)
    return n[0] and grad, n[1] and (None if grad is None else -grad)


@rule("renorm", saves="self, p, dim, maxnorm")
def renorm(n, g, self, p, dim, maxnorm):
    # renorm_backward: the scaled slices' gradient, factor * g minus the factor's own dependence on the norm
    from ._formulas_math import vector_norm

    dims = [i for i in range(self.dim()) if i != dim % self.dim()]
    norm = T.linalg.vector_norm(self, p, dims, keepdim=True)
    weighted = self.conj() * g
    if weighted.is_complex():
        weighted = weighted.real
    (nb,) = vector_norm(n, weighted.sum(dims, keepdim=True), self, p, dims, True, norm)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    return (T.where(norm > maxnorm, factor * g - (factor * invnorm) * nb, g),)


@rule("logcumsumexp", saves="self, dim, result")
def logcumsumexp(n, g, self, dim, result):
    # logcumsumexp_backward: grad_j = sum_{i >= j} g_i exp(x_j - y_i), a reversed logcumsumexp of log(g) - y
    # (real: positive and negative parts apart; complex: conjugated, as for a holomorphic function)
    if g.dim() == 0 or g.numel() == 0:
        return (g,)

    def reverse_scan(x):
        return T.flip(T.logcumsumexp(T.flip(x, [dim]), dim), [dim])

    if g.is_complex():
        return ((reverse_scan(g.conj().log() - result) + self).exp().conj(),)
    lowest = T.full((), T.finfo(g.dtype).min, dtype=g.dtype, device=g.device)
    log_abs = g.abs().log()
    pos = (reverse_scan(T.where(g > 0, log_abs, lowest) - result) + self).exp()
    neg = (reverse_scan(T.where(g < 0, log_abs, lowest) - result) + self).exp()
    return (pos - neg,)


@rule("put", saves="index, source.shape, accumulate")
def put(n, g, index, source_shape, accumulate):
    # derivatives.yaml: self keeps the gradient where nothing was written over it; source takes it from there
    keep = g if accumulate else g.put(index, T.zeros(list(source_shape), dtype=g.dtype, device=g.device), False)
    return n[0] and keep, n[1] and g.take(index).reshape(list(source_shape))


@rule("index_reduce", saves="self, dim, index, source, reduce, include_self, result", inputs="self, source")
def index_reduce(n, g, self, dim, index, source, reduce, include_self, result):
    # index_reduce_backward (FunctionsManual.cpp), reduction by reduction
    if reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        grad_self = g * masked_self.index_reduce(dim, index, source, reduce, include_self=include_self) / masked_self
        src_zero = source == 0
        src_num_zeros = T.zeros_like(self).index_add(dim, index, src_zero.to(self.dtype)).index_select(dim, index)
        src_single_zero = src_zero.logical_and(src_num_zeros == 1)
        # a single zero's gradient is the product of the others; dividing the result by it would give 0/0
        masked_src_result = self.index_reduce(dim, index, source.masked_fill(src_single_zero, 1), reduce,
                                              include_self=include_self)
        grad_src = T.where(src_single_zero, (g * masked_src_result).index_select(dim, index),
                           (g * result).index_select(dim, index) / source.masked_fill(src_zero, 1))
    elif reduce == "mean":
        N = (T.ones_like(g) if include_self else T.zeros_like(g)).index_add(dim, index, T.ones_like(source))
        N = N.masked_fill(N == 0, 1)
        grad_self = g / N
        grad_src = g.index_select(dim, index) / N.index_select(dim, index)
    else:  # amax/amin: shared evenly among the elements equal to the result
        value = result.index_select(dim, index)
        self_is_result = (self == result).to(self.dtype)
        source_is_result = (source == value).to(self.dtype)
        distributed = g / self_is_result.index_add(dim, index, source_is_result)
        grad_self = self_is_result * distributed
        grad_src = source_is_result * distributed.index_select(dim, index)
    if not include_self:
        grad_self = grad_self.index_fill(dim, index, 0)
    return n[0] and grad_self, n[1] and grad_src
