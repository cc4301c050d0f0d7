"""Derivative formulas: one small function per op, next to the op it differentiates.

Each ``@rule(op, saves=...)`` function receives ``needs`` (which differentiable inputs want a
gradient), the output gradient ``g`` and the saved values, and returns one gradient per
differentiable input (``None`` or ``False`` for none).  Shapes need not match: the engine sums
broadcast gradients back to each input's shape and casts them to its dtype.  Formulas are
written with ordinary torchplug ops, so they are differentiable themselves (``create_graph``).
"""

from __future__ import annotations

import math
from typing import Any

import torchplug as T
from torchplug._dispatch.dispatcher import DISPATCHER

from ._rules import nondifferentiable, rule

__all__: list[str] = []

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


_where = DISPATCHER.entry("aten::where.self").call  # the entry point itself: no Python wrapper
_expand = DISPATCHER.entry("aten::expand").call


def _is_tensor(x: Any) -> bool:
    return isinstance(x, T.Tensor)


def _zeros(g: Any) -> Any:
    return T.zeros_like(g)


def _unsqueeze_dims(g: Any, ndim: int, dim: Any, keepdim: bool) -> Any:
    """Undo a reduction's dropped dims so ``g`` broadcasts against the input."""
    if keepdim or ndim == 0:
        return g
    if dim is None:
        dims = list(range(ndim))
    else:
        dims = sorted(d % ndim for d in ([dim] if isinstance(dim, int) else dim))
        if not dims:
            dims = list(range(ndim))
    for d in dims:
        g = g.unsqueeze(d)
    return g


def _reduced_count(shape: Any, dim: Any) -> int:
    ndim = len(shape)
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return math.prod(shape)
    dims = [dim] if isinstance(dim, int) else dim
    return math.prod(shape[d % ndim] for d in dims) if ndim else 1


# ---- pointwise, unary -----------------------------------------------------------------------------
@rule("neg")
def neg(n, g):
    return (-g,)


@rule("abs", saves="self")
def abs_(n, g, self):
    return (g * self.sgn(),)  # sgn: sign for reals, z / |z| for complex


@rule("exp", saves="result")
def exp(n, g, result):
    return (g * result,)


@rule("exp2", saves="result")
def exp2(n, g, result):
    return (g * result * _LN2,)


@rule("expm1", saves="result")
def expm1(n, g, result):
    return (g * (result + 1),)


@rule("log", saves="self")
def log(n, g, self):
    return (g / self,)


@rule("log2", saves="self")
def log2(n, g, self):
    return (g / (self * _LN2),)


@rule("log10", saves="self")
def log10(n, g, self):
    return (g / (self * _LN10),)


@rule("log1p", saves="self")
def log1p(n, g, self):
    return (g / (self + 1),)


@rule("sqrt", saves="result")
def sqrt(n, g, result):
    return (g / (2 * result),)


@rule("rsqrt", saves="result")
def rsqrt(n, g, result):
    return (-0.5 * g * result.pow(3),)


@rule("sin", saves="self")
def sin(n, g, self):
    return (g * self.cos(),)


@rule("cos", saves="self")
def cos(n, g, self):
    return (g * -self.sin(),)


@rule("tan", saves="result")
def tan(n, g, result):
    return (g * (1 + result * result),)


@rule("tanh", saves="result")
def tanh(n, g, result):
    return (g * (1 - result * result),)


@rule("sigmoid", saves="result")
def sigmoid(n, g, result):
    return (g * (result * (1 - result)),)


@rule("reciprocal", saves="result")
def reciprocal(n, g, result):
    return (-g * (result * result),)


@rule("asin", saves="self")
def asin(n, g, self):
    return (g * (1 - self * self).rsqrt(),)


@rule("acos", saves="self")
def acos(n, g, self):
    return (-g * (1 - self * self).rsqrt(),)


@rule("atan", saves="self")
def atan(n, g, self):
    return (g / (1 + self * self),)


@rule("sinh", saves="self")
def sinh(n, g, self):
    return (g * self.cosh(),)


@rule("cosh", saves="self")
def cosh(n, g, self):
    return (g * self.sinh(),)


@rule("asinh", saves="self")
def asinh(n, g, self):
    return (g * (self * self + 1).rsqrt(),)


@rule("acosh", saves="self")
def acosh(n, g, self):
    return (g * (self * self - 1).rsqrt(),)


@rule("atanh", saves="self")
def atanh(n, g, self):
    return (g / (1 - self * self),)


@rule("square", saves="self")
def square(n, g, self):
    return (2 * g * self,)


@rule("frac")
def frac(n, g):
    return (g,)


@rule("floor", "ceil", "trunc", "sign", "round")
def piecewise_constant(n, g):
    return (_zeros(g),)


# relu: _formulas_nn.py (threshold_backward)


@rule("clamp", saves="self, min, max")
def clamp(n, g, self, min, max):
    if min is not None and max is not None:
        mask = (self >= min).logical_and(self <= max)
    elif min is not None:
        mask = self >= min
    elif max is not None:
        mask = self <= max
    else:
        return (g,)
    return (T.where(mask, g, 0.0),)


@rule("clamp.Tensor", saves="self, min, max")
def clamp_tensor(n, g, self, min, max):
    gs = gmin = gmax = None
    if min is not None and max is not None:
        if n[0]:
            gs = T.where((self >= min).logical_and(self <= max), g, 0.0)
        if n[1]:
            gmin = T.where((self < min).logical_and(min < max), g, 0.0)
        if n[2]:
            gmax = T.where((self > max).logical_or(max < min), g, 0.0)
    elif min is not None:
        gs = n[0] and T.where(self >= min, g, 0.0)
        gmin = n[1] and T.where(self < min, g, 0.0)
    elif max is not None:
        gs = n[0] and T.where(self <= max, g, 0.0)
        gmax = n[2] and T.where(self > max, g, 0.0)
    else:
        gs = g
    return gs, gmin, gmax


# ---- pointwise, binary ----------------------------------------------------------------------------
@rule("add.Tensor", saves="alpha")
def add(n, g, alpha):
    return g, n[1] and (g if alpha == 1 else g * alpha)


@rule("sub.Tensor", saves="alpha")
def sub(n, g, alpha):
    return g, n[1] and (-g if alpha == 1 else g * -alpha)


@rule("mul", "mul.Tensor", saves="self, other")
def mul(n, g, self, other):
    return n[0] and g * other, n[1] and g * self


@rule("add.Scalar")
def add_scalar(n, g):
    return (g,)


@rule("mul.Scalar", saves="other")
def mul_scalar(n, g, other):
    return (g * other,)


@rule("div.Scalar", saves="other")
def div_scalar(n, g, other):
    return (g / other,)


@rule("div.Tensor", saves="self, other, rounding_mode")
def div(n, g, self, other, rounding_mode):
    if rounding_mode is not None:
        return n[0] and _zeros(g), n[1] and _zeros(g)
    return n[0] and g / other, n[1] and -g * self / (other * other)


@rule("pow.Tensor_Tensor", saves="self, exponent, result")
def pow_(n, g, self, exponent, result):
    gs = ge = None
    if n[0]:
        if _is_tensor(exponent):
            gs = T.where(exponent == 0, 0.0, g * exponent * self.pow(exponent - 1))
        elif exponent == 0:
            gs = _zeros(g)
        else:
            gs = g * exponent * self.pow(exponent - 1)
    if n[1]:
        if _is_tensor(self):
            # complex exponents: only a real, non-negative one makes 0 ** exponent flat (pow_backward_exponent)
            nonneg = (exponent.imag == 0).logical_and(exponent.real >= 0) if exponent.dtype.is_complex else exponent >= 0
            cond = (self == 0).logical_and(nonneg)
            ge = g * T.where(cond, 0.0, result * self.log())
        else:
            ge = g * result * math.log(self) if self > 0 else g * T.where(exponent >= 0, 0.0, result * math.log(self) if self else 0.0)
    return gs, ge


@rule("maximum", saves="self, other")
def maximum(n, g, self, other):
    half = T.where(self == other, g / 2, g)
    return n[0] and half.masked_fill(self < other, 0), n[1] and half.masked_fill(self > other, 0)


@rule("minimum", saves="self, other")
def minimum(n, g, self, other):
    half = T.where(self == other, g / 2, g)
    return n[0] and half.masked_fill(self > other, 0), n[1] and half.masked_fill(self < other, 0)


@rule("remainder", saves="self, other")
def remainder(n, g, self, other):
    return g, n[1] and -g * T.div(self, other, rounding_mode="floor")


@rule("fmod", saves="self, other")
def fmod(n, g, self, other):
    return g, n[1] and -g * T.div(self, other, rounding_mode="trunc")


@rule("atan2", saves="self, other")
def atan2(n, g, self, other):
    # torch 2.13's atan2_backward takes 0 for the reciprocal where self^2 + other^2 is 0 (at the origin, or
    # underflowed), so the gradient there is a signed zero, not nan
    denom = self * self + other * other
    recip = T.where(denom == 0, 0.0, denom.reciprocal())
    return n[0] and g * other * recip, n[1] and g * -self * recip


@rule("where.self", saves="condition, self, other")
def where(n, g, condition, self, other):
    return n[0] and T.where(condition, g, 0.0), n[1] and T.where(condition, 0.0, g)


@rule("lerp.Tensor", saves="self, end, weight")
def lerp(n, g, self, end, weight):
    return n[0] and g * (1 - weight), n[1] and g * weight, n[2] and g * (end - self)


@rule("addcmul", saves="tensor1, tensor2, value")
def addcmul(n, g, tensor1, tensor2, value):
    return g, n[1] and g * tensor2 * value, n[2] and g * tensor1 * value


@rule("addcdiv", saves="tensor1, tensor2, value")
def addcdiv(n, g, tensor1, tensor2, value):
    return g, n[1] and g * value / tensor2, n[2] and -g * value * tensor1 / (tensor2 * tensor2)


@rule("masked_fill.Scalar", saves="mask")
def masked_fill(n, g, mask):
    return (g.masked_fill(mask, 0),)


@rule("masked_fill.Tensor", saves="mask")
def masked_fill_tensor(n, g, mask):
    return n[0] and g.masked_fill(mask, 0), n[1] and T.where(mask, g, 0.0).sum()


# ---- reductions ------------------------------------------------------------------------------------
@rule("sum", saves="self.shape, dim, keepdim")
def sum_(n, g, shape, dim, keepdim):
    if dim is None:
        return (_expand(g, shape),)
    return (_unsqueeze_dims(g, len(shape), dim, keepdim).expand(list(shape)),)


@rule("mean", saves="self.shape, dim, keepdim")
def mean(n, g, shape, dim, keepdim):
    count = _reduced_count(shape, dim)
    return (_unsqueeze_dims(g, len(shape), dim, keepdim).expand(list(shape)) / count,)


@rule("prod", saves="self, dim, keepdim, result")
def prod(n, g, self, dim, keepdim, result):
    # FunctionsManual.cpp prod_backward: result / input while the whole input holds no zero (an inf or nan
    # input then gives nan, as in torch); otherwise the product of the other elements
    # (prod_safe_zeros_backward), or zeros for a full reduction with several zeros outside create_graph
    if self.dim() == 0:
        return (g,)
    zeros = int((self == 0).sum())
    gk = _unsqueeze_dims(g, self.dim(), dim, keepdim)
    if zeros == 0:
        return (gk * (_unsqueeze_dims(result, self.dim(), dim, keepdim) / self),)
    if dim is not None:
        return (gk * _exclusive_prod(self, dim % self.dim()),)
    if zeros > 1 and not T.is_grad_enabled():
        return (T.zeros_like(self),)
    return ((g * _exclusive_prod(self.reshape(-1), 0)).reshape(self.shape),)


def _exclusive_prod(x: Any, d: int) -> Any:
    """The product of the other elements along ``d``, without dividing: cumprods from the left and the right."""
    n = x.shape[d]
    ones = T.ones_like(x.narrow(d, 0, 1))
    left = T.cat([ones, x.narrow(d, 0, n - 1)], d).cumprod(d)
    right = T.cat([ones, x.narrow(d, 1, n - 1).flip(d)], d).cumprod(d).flip(d)
    return left * right


def _evenly(g: Any, self: Any, value: Any) -> Any:
    # FunctionsManual.cpp evenly_distribute_backward: a nan result shares the gradient among the nan inputs
    mask = self.isnan() if bool(value.isnan()) else self == value
    return T.zeros_like(self).masked_fill(mask, g / mask.sum())


@rule("max", "min", saves="self, result")
def max_all(n, g, self, result):
    return (_evenly(g, self, result),)


@rule("amax", "amin", saves="self, dim, keepdim, result")
def amax(n, g, self, dim, keepdim, result):
    gk = _unsqueeze_dims(g, self.dim(), dim, keepdim)
    rk = _unsqueeze_dims(result, self.dim(), dim, keepdim)
    mask = self == rk  # derivatives.yaml scale_grad_by_count: a nan result equals nothing, so its grad is nan
    dims = list(dim) if dim else list(range(self.dim()))
    return (mask * (gk / mask.sum(dims, keepdim=True)),)


@rule("max.dim", "min.dim", saves="self.shape, dim, keepdim, result1", outputs=(0,))
def max_dim(n, g, shape, dim, keepdim, indices):
    gv = g[0]
    if len(shape) == 0:
        return (gv,)
    if not keepdim:
        gv = gv.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return (T.zeros(list(shape), dtype=gv.dtype, device=gv.device).scatter(dim, indices, gv),)


def _var_grad(g: Any, self: Any, dim: Any, correction: Any, keepdim: bool) -> Any:
    """PyTorch's var_backward: ``2 / (n - correction) * g * (self - mean)``."""
    c = 1 if correction is None else correction
    count = _reduced_count(tuple(self.shape), dim)
    gk = _unsqueeze_dims(g, self.dim(), dim, keepdim)
    mean_dims = None if dim is None or (not isinstance(dim, int) and len(dim) == 0) else dim
    m = self.mean() if mean_dims is None else self.mean(mean_dims, keepdim=True)
    dof = count - c
    if dof == 0 or (dof < 0 and (mean_dims is None or self.dim() == 0)):
        if mean_dims is None or self.dim() == 0:
            # No degrees of freedom over the whole tensor: 2 / 0 is inf, times (self - mean) is NaN
            # where self equals the mean and inf elsewhere (PyTorch's exact choice).
            return gk * T.full_like(self, math.inf).masked_fill(self == m, math.nan)
        return gk * (self - m) * math.inf  # 2.0 / 0.0 in PyTorch's double arithmetic
    return gk * (self - m) * (2.0 / dof)


@rule("var", saves="self, dim, correction, keepdim")
def var(n, g, self, dim, correction, keepdim):
    return (_var_grad(g, self, dim, correction, keepdim),)


@rule("std", saves="self, dim, correction, keepdim, result")
def std(n, g, self, dim, correction, keepdim, result):
    # PyTorch's std_backward: a zero std (a constant input) passes a zero gradient, not 0 / 0.
    return (_var_grad((g / (2 * result)).masked_fill(result == 0, 0), self, dim, correction, keepdim),)


# ---- linear algebra ----------------------------------------------------------------------------
def _transposed(m: Any) -> bool:
    """True if the matrix ``m`` is a transposed contiguous one (strides ``(1, rows)``), e.g. ``W.t()``."""
    s = m.stride()
    return s[0] == 1 and s[1] == m.shape[0] and m.shape[0] > 1 and m.shape[1] > 1


def _mm_mat1_grad(g: Any, mat2: Any, mat1: Any) -> Any:
    # Lay the gradient out like mat1 (PyTorch's mm_mat1_backward): a transposed mat1 gets
    # (mat2 @ g^T)^T, so accumulating into the leaf behind it needs no strided copy.
    if _transposed(mat1):
        return mat2.mm(g.t()).t()
    return g.mm(mat2.t())


def _mm_mat2_grad(g: Any, mat1: Any, mat2: Any) -> Any:
    # Same for mat2 (mm_mat2_backward): nn.Linear passes weight.t(), whose gradient is then
    # computed as (g^T @ mat1)^T and comes back to the weight contiguous.
    if _transposed(mat2):
        return g.t().mm(mat1).t()
    return mat1.t().mm(g)


@rule("mm", saves="self, mat2")
def mm(n, g, self, mat2):
    return n[0] and _mm_mat1_grad(g, mat2, self), n[1] and _mm_mat2_grad(g, self, mat2)


@rule("bmm", saves="self, mat2")
def bmm(n, g, self, mat2):
    return n[0] and g.bmm(mat2.transpose(1, 2)), n[1] and self.transpose(1, 2).bmm(g)


@rule("mv", saves="self, vec")
def mv(n, g, self, vec):
    return n[0] and g.unsqueeze(1) * vec.unsqueeze(0), n[1] and self.t().mv(g)


@rule("dot", saves="self, tensor")
def dot(n, g, self, tensor):
    return n[0] and g * tensor, n[1] and g * self


@rule("addmm", saves="mat1, mat2, beta, alpha")
def addmm(n, g, mat1, mat2, beta, alpha):
    return (n[0] and (g if beta == 1 else g * beta),
            n[1] and (_mm_mat1_grad(g, mat2, mat1) if alpha == 1 else _mm_mat1_grad(g, mat2, mat1) * alpha),
            n[2] and (_mm_mat2_grad(g, mat1, mat2) if alpha == 1 else _mm_mat2_grad(g, mat1, mat2) * alpha))


# ---- joining and indexing ------------------------------------------------------------------------
@rule("cat", saves="tensors.shapes, dim")
def cat(n, g, shapes, dim):
    d = dim % g.dim() if g.dim() else 0
    out, start = [], 0
    for k, shape in enumerate(shapes):
        if len(shape) == 1 and shape[0] == 0 and g.dim() != 1:  # legacy empty inputs skipped by cat: an
            out.append(n[k] and T.zeros(0, dtype=g.dtype, device=g.device))  # empty gradient, as torch's
            continue
        size = shape[d]
        out.append(n[k] and g.narrow(d, start, size))
        start += size
    return tuple(out)


@rule("gather", saves="self.shape, dim, index")
def gather(n, g, shape, dim, index):
    return (T.zeros(list(shape), dtype=g.dtype, device=g.device).scatter_add(dim, index, g),)


@rule("scatter.src", saves="dim, index")
def scatter_src(n, g, dim, index):
    return n[0] and g.scatter(dim, index, 0), n[1] and g.gather(dim, index)


@rule("scatter.value", saves="dim, index")
def scatter_value(n, g, dim, index):
    return (g.scatter(dim, index, 0),)


@rule("scatter_add", saves="dim, index")
def scatter_add(n, g, dim, index):
    return g, n[1] and g.gather(dim, index)


def _torch_not_implemented(op: str):
    """A formula for ops PyTorch's derivatives.yaml marks ``not_implemented``: backward raises its error."""
    def formula(n, g, *saved):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return formula


# scatter(reduce='add'|'multiply'): PyTorch records a node whose backward raises (scatter_reduce has a rule)
rule("scatter.reduce", inputs="self, src", name="NotImplemented")(_torch_not_implemented("scatter"))
rule("scatter.value_reduce", inputs="self", name="NotImplemented")(_torch_not_implemented("scatter"))
rule("scatter_.reduce", inputs="self, src", name="NotImplemented")(_torch_not_implemented("scatter_"))
rule("scatter_.value_reduce", inputs="self", name="NotImplemented")(_torch_not_implemented("scatter_"))


@rule("index_select", saves="self.shape, dim, index")
def index_select(n, g, shape, dim, index):
    d = dim % len(shape) if shape else 0
    zeros = T.zeros(list(shape), dtype=g.dtype, device=g.device)
    idx = index.reshape(-1) if index.dim() == 0 else index
    if not shape:
        return (g.reshape(()),)
    return (zeros.index_put((None,) * d + (idx,), g.reshape([s if i != d else idx.numel() for i, s in enumerate(shape)]),
                            accumulate=True),)


@rule("index.Tensor", saves="self.shape, indices")
def index(n, g, shape, indices):
    return (T.zeros(list(shape), dtype=g.dtype, device=g.device).index_put(tuple(indices), g, accumulate=True),)


@rule("index_put", saves="indices, values.shape, accumulate")
def index_put(n, g, indices, values_shape, accumulate):
    gs = n[0] and (g if accumulate else g.index_put(tuple(indices), T.zeros((), dtype=g.dtype, device=g.device)))
    gv = n[1] and g[tuple(indices)]
    return gs, gv


# ---- copies, fills, conversions ---------------------------------------------------------------------
@rule("copy_", saves="src.dtype, src.device", inputs="self, src", name="CopyBackwards")
def copy_(n, g, dtype, device):
    gsrc = n[1] and g
    if gsrc is not False and gsrc is not None and gsrc.device != device:
        gsrc = gsrc.to(device)
    return n[0] and _zeros(g), gsrc


@rule("fill_.Scalar", "zero_", "uniform_", "normal_", "random_.from", "random_", "bernoulli_.float", "exponential_",
      "geometric_", "log_normal_", "cauchy_", inputs="self", name="FillBackward0")
def fill_(n, g):
    return (_zeros(g),)


@rule("poisson", inputs="self")
def poisson(n, g):
    return (_zeros(g),)


@rule("fill_.Tensor", inputs="self, value", name="FillBackward1")
def fill_tensor(n, g):
    return n[0] and _zeros(g), n[1] and g.sum()


@rule("bernoulli", "bernoulli.p", inputs="self")
def bernoulli(n, g):
    return (_zeros(g),)


@rule("bernoulli_.Tensor", saves="p.shape", inputs="self, p")
def bernoulli_tensor_(n, g, p_shape):
    return n[0] and _zeros(g), n[1] and g.new_zeros(list(p_shape))


@rule("clone")
def clone(n, g):
    return (g,)


@rule("_to_copy", saves="self.device", name="ToCopyBackward0")
def to_copy(n, g, device):
    return (g.to(device) if g.device != device else g,)


# ---- views ----------------------------------------------------------------------------------------
@rule("view", "reshape", saves="self.shape")
def view(n, g, shape):
    return (g.reshape(list(shape)),)


@rule("squeeze", saves="self.shape")
def squeeze(n, g, shape):
    return (g.reshape(list(shape)),)


@rule("unsqueeze", saves="dim")
def unsqueeze(n, g, dim):
    return (g.squeeze([dim]),)


@rule("alias")
def alias(n, g):
    return (g,)


@rule("permute", saves="dims")
def permute(n, g, dims):
    nd = len(dims)
    inverse = [0] * nd
    for i, d in enumerate(dims):
        inverse[d % nd] = i
    return (g.permute(inverse),)


@rule("transpose.int", saves="dim0, dim1")
def transpose(n, g, dim0, dim1):
    return (g.transpose(dim0, dim1),)


@rule("t")
def t(n, g):
    return (g.t(),)


@rule("expand", saves="self.shape")
def expand(n, g, shape):
    from ._engine import sum_to

    return (sum_to(g, shape),)


def _into_zeros(g: Any, shape: Any, make_view: Any) -> Any:
    """Zeros of ``shape`` with ``make_view(zeros)`` set to ``g`` (differentiable through CopySlices)."""
    z = g.new_zeros(list(shape))  # batched like g under vmap (a fresh unbatched tensor could not take g)
    make_view(z).copy_(g)
    return z


@rule("select.int", saves="self.shape, dim, index")
def select(n, g, shape, dim, index):
    return (_into_zeros(g, shape, lambda z: z.select(dim, index)),)


@rule("slice.Tensor", saves="self.shape, dim, start, end, step")
def slice_(n, g, shape, dim, start, end, step):
    return (_into_zeros(g, shape, lambda z: z.slice(dim, start, end, step) if hasattr(z, "slice")
                        else T.ops.aten.slice.Tensor(z, dim, start, end, step)),)


@rule("diagonal", saves="self.shape, offset, dim1, dim2")
def diagonal(n, g, shape, offset, dim1, dim2):
    return (_into_zeros(g, shape, lambda z: z.diagonal(offset, dim1, dim2)),)


@rule("as_strided", saves="self.geometry, size, stride, storage_offset")
def as_strided(n, g, geometry, size, stride, storage_offset):
    from ._views import as_strided_backward

    offset = geometry[2] if storage_offset is None else storage_offset
    return (as_strided_backward(g, geometry, (tuple(size), tuple(stride), offset)),)


@rule("unfold", saves="self.geometry, result.geometry")
def unfold(n, g, geometry, out_geometry):
    from ._views import as_strided_backward

    return (as_strided_backward(g, geometry, out_geometry),)


# ---- not differentiable -------------------------------------------------------------------------------
nondifferentiable(
    "isnan", "isinf", "isfinite", "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "argmax", "argmin", "all", "any", "nonzero",
    "multinomial", "view.dtype", "randperm", "rand_like", "rand_like.generator", "randn_like", "randn_like.generator",
)
