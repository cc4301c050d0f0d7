"""Hand-written jvp rules and the op lists that pick a derived strategy (see ``_jvp``).

Most ops need nothing here: a view's tangent is the view of the tangent, a pointwise op's comes
from its backward formula, and anything else from its backward formula differentiated once more.
This module lists the ops PyTorch treats as linear (``auto_linear``: the op applied to the
tangents; also ``masked_fill.Tensor``, a pointwise op whose value gradient is a reduction), explicit
rules where the generic route would be slow (matrix products, softmax, convolution) or wrong (affine
ops whose constant must not reach the tangent, random samples), and decompositions for ops whose
backward formula stops at second order (the normalizations).

A rule is ``fn(args, result, tangents)``: ``args`` in schema order, ``tangents`` one per
differentiable input (``None`` where it has none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torchplug

from ._norm_grads import normalized_grads

__all__ = ["JVP_RULES", "JVP_DECOMPOSITIONS", "LINEAR", "jvp_rule", "jvp_decomposition"]


def _q(names: str) -> frozenset[str]:
    return frozenset(n if "::" in n else f"aten::{n}" for n in names.split())


# Linear in their differentiable inputs jointly: jvp = op(tangents, other arguments unchanged).
LINEAR = _q("""
    sum mean cat stack gather scatter.src scatter_add index_select index.Tensor index_put clone _to_copy
    _unsafe_view diagonal_copy narrow_copy flip roll rot90 repeat tril triu trace diag_embed block_diag
    select_scatter slice_scatter diagonal_scatter index_add index_copy index_fill.int_Tensor masked_scatter
    take pixel_shuffle pixel_unshuffle masked_select complex cumsum masked_fill.Tensor
    reflection_pad1d reflection_pad2d reflection_pad3d replication_pad1d replication_pad2d replication_pad3d
    upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d _upsample_nearest_exact2d
    upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d upsample_trilinear3d
    avg_pool2d avg_pool3d _adaptive_avg_pool2d im2col col2im conj_physical neg real imag embedding
""")

JVP_RULES: dict[str, Callable[..., Any]] = {}
# op -> fn(args) recomputing the op's outputs with differentiable primitives: run on the dual inputs,
# its outputs carry the tangents (for ops whose backward formula cannot be differentiated again).
JVP_DECOMPOSITIONS: dict[str, Callable[..., Any]] = {}


def jvp_decomposition(*ops: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(args) -> outputs``, a primitive re-expression of each op, as its jvp."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op in ops:
            JVP_DECOMPOSITIONS[op if "::" in op else f"aten::{op}"] = fn
        return fn

    return deco


def jvp_rule(*ops: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(args, result, tangents)`` as the jvp of each op."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for op in ops:
            JVP_RULES[op if "::" in op else f"aten::{op}"] = fn
        return fn

    return deco


def _bilinear(op: Callable[..., Any], a: Any, b: Any, ta: Any, tb: Any) -> Any:
    """d(op(a, b)) = op(ta, b) + op(a, tb) for a product ``op`` linear in each argument."""
    out = None
    if ta is not None:
        out = op(ta, b)
    if tb is not None:
        term = op(a, tb)
        out = term if out is None else out + term
    return out


@jvp_rule("mm")
def _mm(args, result, tans):
    return _bilinear(lambda x, y: x.mm(y), args[0], args[1], *tans)


@jvp_rule("bmm")
def _bmm(args, result, tans):
    return _bilinear(lambda x, y: x.bmm(y), args[0], args[1], *tans)


@jvp_rule("mv")
def _mv(args, result, tans):
    return _bilinear(lambda x, y: x.mv(y), args[0], args[1], *tans)


@jvp_rule("dot")
def _dot(args, result, tans):
    return _bilinear(lambda x, y: x.dot(y), args[0], args[1], *tans)


@jvp_rule("vdot")
def _vdot(args, result, tans):
    return _bilinear(lambda x, y: x.vdot(y), args[0], args[1], *tans)


def _scaled_product_rule(name: str, product: Callable[[Any, Any], Any]) -> None:
    """``op(self, a, b, beta, alpha) = beta * self + alpha * product(a, b)``: addmm, addmv, addr, baddbmm, addbmm."""

    @jvp_rule(name)
    def rule(args, result, tans):
        self, a, b, beta, alpha = args
        ts, ta, tb = tans
        out = _bilinear(product, a, b, ta, tb)
        if out is not None and alpha != 1:
            out = out * alpha
        if ts is not None:
            term = ts * beta if beta != 1 else ts
            out = term if out is None else out + term
        return out


_scaled_product_rule("addmm", lambda x, y: x.mm(y))
_scaled_product_rule("addmv", lambda x, y: x.mv(y))
_scaled_product_rule("addr", lambda x, y: torchplug.outer(x, y))
_scaled_product_rule("baddbmm", lambda x, y: x.bmm(y))
_scaled_product_rule("addbmm", lambda x, y: x.bmm(y).sum(0))


@jvp_rule("convolution")
def _convolution(args, result, tans):
    # bilinear in (input, weight), plus the bias broadcast over the batch and spatial dims
    x, w, _bias, *rest = args
    tx, tw, tb = tans

    def conv(a, b):
        return torchplug.convolution(a, b, None, *rest)

    out = _bilinear(conv, x, w, tx, tw)
    if tb is not None:
        term = tb.reshape([1, -1] + [1] * (result.dim() - 2))
        out = term.expand(result.shape) if out is None else out + term
    return out


def _nll_loss_rule(name: str) -> None:
    # linear in self (the class weights are constants); total_weight does not depend on self
    op = getattr(torchplug.ops.aten, name)

    @jvp_rule(name)
    def rule(args, result, tans):
        return op(tans[0], *args[1:])[0], None


_nll_loss_rule("nll_loss_forward")
_nll_loss_rule("nll_loss2d_forward")


@jvp_rule("_softmax", "_safe_softmax")
def _softmax(args, result, tans):
    # y = softmax(x): dy = y * (t - sum(t * y))
    dim = args[1]
    t = tans[0].to(result.dtype)
    return result * (t - (t * result).sum(dim, keepdim=True))


@jvp_rule("_log_softmax")
def _log_softmax(args, result, tans):
    # y = log_softmax(x): dy = t - sum(t * exp(y))
    dim = args[1]
    t = tans[0].to(result.dtype)
    return t - (t * result.exp()).sum(dim, keepdim=True)


@jvp_rule("_softmax_backward_data")
def _softmax_backward_data(args, result, tans):
    # f = y * (g - sum(g * y)): df = dy * (g - s) + y * (dg - sum(dg * y + g * dy))
    g, y, dim = args[0], args[1], args[2]
    tg, ty = tans
    out = None
    if ty is not None:
        out = ty * (g - (g * y).sum(dim, keepdim=True)) - y * (g * ty).sum(dim, keepdim=True)
    if tg is not None:
        term = y * (tg - (tg * y).sum(dim, keepdim=True))
        out = term if out is None else out + term
    return out


@jvp_rule("_log_softmax_backward_data")
def _log_softmax_backward_data(args, result, tans):
    # f = g - exp(y) * sum(g): df = dg - exp(y) * (dy * sum(g) + sum(dg))
    g, y, dim = args[0], args[1], args[2]
    tg, ty = tans
    p = y.exp()
    out = None
    if ty is not None:
        out = -(p * ty) * g.sum(dim, keepdim=True)
    if tg is not None:
        term = tg - p * tg.sum(dim, keepdim=True)
        out = term if out is None else out + term
    return out


def _eig_jvp(A: Any, L: Any, V: Any, tA: Any) -> tuple[Any, Any]:
    """PyTorch's ``linalg_eig_jvp``: with ``dP = V^-1 dA V``, ``dL = diag(dP)`` and ``dV = V (dP / E)`` (zero
    diagonal, ``E_ij = L_j - L_i``) less its component that would change the columns' unit norm.  (Its backward
    formula cannot be differentiated again into this: it refuses cotangents that depend on the phases.)"""
    dA = tA.to(V.dtype)
    dP = torchplug.linalg.solve(V, dA @ V)
    dL = dP.diagonal(0, -2, -1)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    E = E + torchplug.ones_like(L).diag_embed()
    C = dP / E
    dV = V @ (C - C.diagonal(0, -2, -1).diag_embed())
    dV = dV - V * (V.mH @ dV).diagonal(0, -2, -1).real.unsqueeze(-2)
    return dL, dV


@jvp_rule("linalg_eig")
def _linalg_eig(args, result, tans):
    return _eig_jvp(args[0], result[0], result[1], tans[0])


@jvp_rule("linalg_eigvals")
def _linalg_eigvals(args, result, tans):
    L, V = torchplug.linalg.eig(args[0])
    return _eig_jvp(args[0], L, V, tans[0])[0]


@jvp_rule("constant_pad_nd")
def _constant_pad_nd(args, result, tans):
    # affine: the padding value is a constant, so the tangent is padded with zeros
    return torchplug.constant_pad_nd(tans[0], args[1], 0)


@jvp_rule("bernoulli", "bernoulli.p", "poisson")
def _random(args, result, tans):
    # a sample is piecewise constant in its parameters: a zero tangent (torch: zeros for poisson; it has
    # no forward formula for bernoulli and raises there)
    return torchplug.zeros_like(result)


def _no_forward_formula(op: str) -> Callable[..., Any]:
    def refuse(args, result, tans):
        from ._forward import not_implemented_error

        raise not_implemented_error(op)

    return refuse


# derivatives.yaml has no forward formula for these: torch refuses forward AD through cdist's route without the
# matrix product and through pdist
jvp_rule("_cdist_forward")(_no_forward_formula("_cdist_forward"))
jvp_rule("_pdist_forward")(_no_forward_formula("_pdist_forward"))
# nor for the LDL factorization and solve (their backward is not implemented either)
jvp_rule("linalg_ldl_factor_ex")(_no_forward_formula("linalg_ldl_factor_ex"))
jvp_rule("linalg_ldl_solve")(_no_forward_formula("linalg_ldl_solve"))


@jvp_rule("copy_")
def _copy(args, result, tans):
    # self is overwritten: only src's tangent survives (zeros when src has none)
    src_t = tans[1]
    if src_t is None:
        return torchplug.zeros_like(result)
    return src_t


# ---- normalization backward ops (forward-over-reverse through layer/batch/group norm) --------------------
def _eps_from_rstd(x: Any, rstd: Any, dims: list[int]) -> float:
    # eps is no argument of these backward ops: recover it from the saved rstd (a constant)
    xd = x.detach()
    var = ((xd - xd.mean(dims, keepdim=True)) ** 2).mean(dims, keepdim=True)
    return max((rstd.detach().reshape(var.shape) ** -2 - var).mean().item(), 0.0)


@jvp_decomposition("native_layer_norm_backward")
def _layer_norm_backward(args):
    grad_out, x, normalized_shape, _mean, rstd, weight, _bias, mask = args
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    lead = [1] * (x.dim() - len(normalized_shape))
    w = None if weight is None else weight.reshape(lead + list(weight.shape))
    return tuple(normalized_grads(grad_out, x, w, dims, _eps_from_rstd(x, rstd, dims), mask))


@jvp_decomposition("native_batch_norm_backward")
def _batch_norm_backward(args):
    grad_out, x, weight, running_mean, running_var, _save_mean, _save_invstd, train, eps, mask = args
    dims = [0] + list(range(2, x.dim()))
    shape = [1, -1] + [1] * (x.dim() - 2)
    stats = None
    if not train:  # eval mode normalizes with the running statistics: constants
        stats = (running_mean.detach().reshape(shape), (running_var.detach().reshape(shape) + eps).rsqrt())
    w = None if weight is None else weight.reshape(shape)
    return tuple(normalized_grads(grad_out, x, w, dims, eps, mask, stats))


@jvp_decomposition("native_group_norm_backward")
def _group_norm_backward(args):
    grad_out, x, _mean, rstd, weight, N, C, HxW, group, mask = args
    grouped = [N, group, C // group, HxW]
    eps = _eps_from_rstd(x.reshape(grouped), rstd, [2, 3])
    w4 = (torchplug.ones(1, group, C // group, 1, dtype=x.dtype, device=x.device) if weight is None
          else weight.reshape(1, group, C // group, 1))
    outs = normalized_grads(grad_out.reshape(grouped), x.reshape(grouped), w4, [2, 3], eps, mask)
    return tuple(None if o is None else o.reshape(x.shape if k == 0 else (C,)) for k, o in enumerate(outs))


# ---- normalization forward ops: their backward formulas stop at second order, so a jvp through them
# (forward-over-reverse, or a jvp with create_graph) recomputes the normalization in primitives ----------
def _normalize(x: Any, dims: list[int], eps: float) -> tuple[Any, Any, Any]:
    mean = x.mean(dims, keepdim=True)
    xc = x - mean
    rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xc * rstd, mean, rstd


@jvp_decomposition("native_layer_norm")
def _layer_norm(args):
    x, normalized_shape, weight, bias, eps = args
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    out, mean, rstd = _normalize(x, dims, eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


@jvp_decomposition("native_batch_norm")
def _batch_norm(args):
    x, weight, bias, running_mean, running_var, training, _momentum, eps = args
    dims = [0] + list(range(2, x.dim()))
    shape = [1, -1] + [1] * (x.dim() - 2)
    if training or running_mean is None:
        out, mean, rstd = _normalize(x, dims, eps)
        mean, rstd = mean.reshape(-1), rstd.reshape(-1)
    else:  # eval mode: the running statistics (their tangents count, as in torch)
        rstd = (running_var + eps).rsqrt()
        out = (x - running_mean.reshape(shape)) * rstd.reshape(shape)
        mean = rstd = None  # (torch's save_mean/save_invstd are empty in eval mode)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, rstd


@jvp_decomposition("native_group_norm")
def _group_norm(args):
    x, weight, bias, N, C, HxW, group, eps = args
    out, mean, rstd = _normalize(x.reshape(N, group, -1), [2], eps)
    out = out.reshape(x.shape)
    shape = [1, C] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def _forward_not_implemented(op: str) -> Callable[..., Any]:
    """The jvp of an op PyTorch's derivatives.yaml marks ``not_implemented``: its NotImplementedError."""

    def refuse(args: tuple[Any, ...], result: Any, tans: list[Any]) -> Any:
        raise NotImplementedError(f"Trying to use forward AD with aten::{op} that does not support it.")

    return refuse


jvp_rule("scatter.reduce", "scatter.value_reduce")(_forward_not_implemented("scatter"))
jvp_rule("scatter_.reduce", "scatter_.value_reduce")(_forward_not_implemented("scatter_"))


def _no_forward_formula(op: str) -> Callable[..., Any]:
    """The jvp of an op PyTorch has no forward formula for (unique, index_reduce): its message."""

    def refuse(args: tuple[Any, ...], result: Any, tans: list[Any]) -> Any:
        raise NotImplementedError(f"Trying to use forward AD with {op} that does not support it because it has not "
                                  "been implemented yet.")

    return refuse


for _op in ("_unique2", "unique_dim", "unique_consecutive", "index_reduce"):
    jvp_rule(_op)(_no_forward_formula(_op))
