"""Derivative formulas of the pointwise-math and reduction sections (special functions, scans, sorting, order
statistics), written like ``_formulas.py``: one ``@rule`` function per op, in ordinary torchplug ops."""

from __future__ import annotations

import math
from typing import Any

import torchplug as T

from ._formulas import _evenly, _unsqueeze_dims, _zeros
from ._rules import nondifferentiable, rule

__all__: list[str] = []

_PI = math.pi
_LN2 = math.log(2.0)


def _trigamma(x: Any) -> Any:
    """polygamma(1, x): recurrence up to x + 6, then the asymptotic series; reflection below 1/2."""
    neg = x < 0.5
    z = T.where(neg, 1 - x, x)
    acc = 0
    for k in range(6):
        acc = acc + (z + k).pow(-2)
    w = (z + 6).reciprocal()
    w2 = w * w
    series = w + w2 / 2 + w * w2 * (1 / 6 - w2 * (1 / 30 - w2 * (1 / 42 - w2 * (1 / 30 - w2 * (5 / 66)))))
    r = acc + series
    return T.where(neg, (_PI / (x * _PI).sin()).pow(2) - r, r)


# ---- pointwise, unary --------------------------------------------------------------------------------
@rule("erf", saves="self")
def erf(n, g, self):
    return (g * (2 / math.sqrt(_PI)) * (-self * self).exp(),)


@rule("erfc", saves="self")
def erfc(n, g, self):
    return (g * (-2 / math.sqrt(_PI)) * (-self * self).exp(),)


@rule("erfinv", saves="result")
def erfinv(n, g, result):
    return (g * (0.5 * math.sqrt(_PI)) * (result * result).exp(),)


@rule("lgamma", saves="self")
def lgamma(n, g, self):
    return (g * self.digamma(),)


@rule("digamma", saves="self")
def digamma(n, g, self):
    return (g * _trigamma(self),)


@rule("deg2rad")
def deg2rad(n, g):
    return (g * (_PI / 180),)


@rule("rad2deg")
def rad2deg(n, g):
    return (g * (180 / _PI),)


@rule("sinc", saves="self")
def sinc(n, g, self):
    xpi = self * _PI
    sq = self * xpi
    out = g * (xpi * xpi.cos() - xpi.sin()) / sq
    return (T.where(sq == 0, 0.0, out),)


@rule("sgn", saves="self, result")
def sgn(n, g, self, result):
    if not self.dtype.is_complex:
        return (_zeros(g),)
    # FunctionsManual.cpp sgn_backward: (g - sgn^2 conj(g)) / (2 |z|), 0 at z = 0
    r = self.abs()
    grad = (g - result * result * g.conj()) / (2 * r)
    return (T.where(r == 0, T.zeros((), dtype=grad.dtype, device=grad.device), grad),)


@rule("logit", saves="self, eps")
def logit(n, g, self, eps):
    out = g / (self * (1 - self))
    if eps is None:
        return (T.where((self < 0).logical_or(self > 1), math.nan, out),)
    return (T.where((self < eps).logical_or(self > 1 - eps), 0.0, out),)


@rule("nan_to_num", saves="self")
def nan_to_num(n, g, self):
    return (g * self.isfinite(),)


# ---- pointwise, binary ---------------------------------------------------------------------------
@rule("hypot", saves="self, other, result")
def hypot(n, g, self, other, result):
    return n[0] and g * self / result, n[1] and g * other / result


@rule("logaddexp", saves="self, other")
def logaddexp(n, g, self, other):
    return n[0] and g / (1 + (other - self).exp()), n[1] and g / (1 + (self - other).exp())


@rule("logaddexp2", saves="self, other")
def logaddexp2(n, g, self, other):
    return n[0] and g / (1 + ((other - self) * _LN2).exp()), n[1] and g / (1 + ((self - other) * _LN2).exp())


@rule("xlogy.Tensor", saves="self, other")
def xlogy(n, g, self, other):
    gs = n[0] and T.xlogy(g, other).masked_fill((self == 0).logical_and(other <= 0), 0)
    go = n[1] and g * self / other
    return gs, go


@rule("copysign.Tensor", saves="self, result")
def copysign(n, g, self, result):
    gs = n[0] and g * (result / self).masked_fill(self == 0, 0)
    return gs, n[1] and _zeros(g)


@rule("clamp_min", saves="self, min")
def clamp_min(n, g, self, min):
    return n[0] and T.where(self >= min, g, 0.0), n[1] and T.where(self < min, g, 0.0)


@rule("clamp_max", saves="self, max")
def clamp_max(n, g, self, max):
    return n[0] and T.where(self <= max, g, 0.0), n[1] and T.where(self > max, g, 0.0)


# ---- reductions --------------------------------------------------------------------------------------
@rule("logsumexp", saves="self, dim, keepdim, result")
def logsumexp(n, g, self, dim, keepdim, result):
    nd = self.dim()
    gk = _unsqueeze_dims(g, nd, dim, keepdim)
    rk = _unsqueeze_dims(result, nd, dim, keepdim)
    return (gk * (self - rk).exp(),)


@rule("nansum", saves="self, dim, keepdim")
def nansum(n, g, self, dim, keepdim):
    gk = _unsqueeze_dims(g, self.dim(), dim, keepdim)
    return (gk * self.isnan().logical_not(),)


@rule("norm.ScalarOpt_dim", saves="self, p, dim, keepdim, result")
def norm_scalaropt_dim(n, g, self, p, dim, keepdim, result):
    # norm_backward, the formula of linalg_vector_norm (p None is 2)
    return vector_norm(n, g, self, 2 if p is None else p, dim, keepdim, result)


@rule("linalg_vector_norm", saves="self, ord, dim, keepdim, result")
def vector_norm(n, g, self, ord, dim, keepdim, result):
    p = float(ord)
    nd = self.dim()
    g = _unsqueeze_dims(g, nd, dim, keepdim)
    norm = _unsqueeze_dims(result, nd, dim, keepdim)
    if p == 0.0:
        return (None,)
    if p == 1.0:
        return (self.sgn() * g,)
    if p == 2.0:
        return (g * (self / norm).masked_fill(norm == 0, 0),)
    if math.isinf(p):
        a = self.abs()
        mask = (a == norm).logical_or(a.isnan())
        dims = list(range(nd)) if dim is None or len(dim) == 0 else list(dim)
        count = mask.sum(dims, keepdim=True) if nd else mask.to(g.dtype)
        return (self.sgn() * ((g / count) * mask),)
    if p < 1.0:
        scaled = self.sgn() * self.abs().pow(p - 1).masked_fill(self == 0, 0)
        return (scaled * g * norm.pow(1 - p),)
    if p < 2.0:
        scaled = self.sgn() * self.abs().pow(p - 1)
    else:
        scaled = self * self.abs().pow(p - 2)
    return (scaled * (g / norm.pow(p - 1)).masked_fill(norm == 0, 0),)


# ---- scans -------------------------------------------------------------------------------------------
def _rev_cumsum(x: Any, dim: int) -> Any:
    return x.flip([dim]).cumsum(dim).flip([dim])


@rule("cumsum", saves="self.dim, dim")
def cumsum(n, g, ndim, dim):
    if ndim == 0:
        return (g,)
    return (_rev_cumsum(g, dim),)


@rule("cumprod", saves="self, dim, result")
def cumprod(n, g, self, dim, result):
    # FunctionsManual.cpp cumprod_backward: one element along dim passes the gradient through; without zeros
    # reversed_cumsum(output * grad) / input; with zeros (outside create_graph) each part masked as torch does
    if self.dim() == 0 or self.numel() <= 1 or self.shape[dim % self.dim()] == 1:
        return (g,)
    d = dim % self.dim()
    x = self.to(result.dtype)
    zero = x == 0
    if not bool(zero.any()):
        return (_rev_cumsum(g * result, d) / x,)
    if not T.is_grad_enabled():
        return (_cumprod_zeros_grad(g, x, d, result, zero),)
    # zeros: before the first zero of a slice the plain formula holds; at the first zero z the gradient is
    # sum_{k >= z} g_k prod_{j <= k, j != z} x_j (a cumprod with x_z set to 1); after it, zero.
    nz = zero.cumsum(d)
    before = nz == 0
    first = zero.logical_and(nz == 1)
    safe = T.where(before, x, 1.0)
    part1 = T.where(before, _rev_cumsum(g * result, d) / safe, 0.0)
    ones = T.where(first, 1.0, x)
    part2 = T.where(first, _rev_cumsum(g * ones.cumprod(d), d), 0.0)
    return (part1 + part2,)


def _cumprod_zeros_grad(g: Any, x: Any, d: int, result: Any, zero: Any) -> Any:
    """cumprod's gradient where the input holds zeros: before a slice's first zero z1, the reversed cumsum of
    output * grad (masked to that range) over the input; at z1, the product of the inputs before it times
    sum_{z1 <= k < z2} grad_k prod_{z1 < j <= k} input_j; zero after it."""
    nz = zero.cumsum(d)
    before = nz == 0
    w = (result * g).masked_fill(before.logical_not(), 0.0)
    part1 = T.where(before, _rev_cumsum(w, d) / T.where(before, x, 1.0), 0.0)
    upto_second = nz == 1
    first = zero.logical_and(upto_second)
    between = upto_second.logical_and(first.logical_not())
    inner = (T.where(between, x, 1.0).cumprod(d) * g.masked_fill(upto_second.logical_not(), 0.0)).sum(d, keepdim=True)
    n = x.shape[d]
    prefix = T.cat([T.ones_like(result.narrow(d, 0, 1)), result.narrow(d, 0, n - 1)], d)  # output just before
    return part1 + T.where(first, prefix * inner, 0.0)


@rule("cummax", "cummin", saves="self.shape, dim, result1", outputs=(0,))
def cummax(n, g, shape, dim, indices):
    gv = g[0]
    if len(shape) == 0:
        return (gv,)
    return (T.zeros(list(shape), dtype=gv.dtype, device=gv.device).scatter_add(dim, indices, gv),)


# ---- sorting and selection --------------------------------------------------------------------------
def _value_selecting(g: Any, shape: Any, dim: int, indices: Any, keepdim: bool) -> Any:
    """Scatter the gradient of values chosen along ``dim`` back to the positions ``indices`` name."""
    if len(shape) == 0:
        return g
    if not keepdim:
        g = g.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return T.zeros(list(shape), dtype=g.dtype, device=g.device).scatter(dim, indices, g)


@rule("sort", saves="self.shape, dim, result1", outputs=(0,))
def sort(n, g, shape, dim, indices):
    return (_value_selecting(g[0], shape, dim, indices, True),)


@rule("topk", saves="self.shape, dim, result1", outputs=(0,))
def topk(n, g, shape, dim, indices):
    return (_value_selecting(g[0], shape, dim, indices, True),)


@rule("kthvalue", "median.dim", "nanmedian.dim", "mode", saves="self.shape, dim, keepdim, result1", outputs=(0,))
def kthvalue(n, g, shape, dim, keepdim, indices):
    return (_value_selecting(g[0], shape, dim, indices, keepdim),)


@rule("median", "nanmedian", saves="self, result")
def median(n, g, self, result):
    if bool(result.isnan()):
        mask = self.isnan()
        return (mask * (g / mask.sum()),)
    return (_evenly(g, self, result),)


# quantile/nanquantile: their CompositeImplicitAutograd kernels (ATen's quantile_compute) decompose under
# autograd, as in PyTorch (_ops/composites_quantile.py)


# ---- not differentiable -------------------------------------------------------------------------------
nondifferentiable(
    "signbit", "isposinf", "isneginf", "histc",
)


def _unique_not_implemented(op: str):
    def formula(n, g, *saved):
        # derivatives.yaml's not_implemented: PyTorch records the node (its values output requires grad) and
        # refuses in backward
        raise NotImplementedError(f"the derivative for '{op}' is not implemented.")

    return formula


for _op in ("_unique2", "unique_dim", "unique_consecutive"):
    rule(_op, inputs="self", outputs=(0,))(_unique_not_implemented(_op))
