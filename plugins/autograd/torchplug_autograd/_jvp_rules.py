"""Hand-written jvp rules and the op lists that pick a derived strategy (see ``_jvp``).

Most ops need nothing here: a view's tangent is the view of the tangent, a pointwise op's comes
from its backward formula, and anything else from its backward formula differentiated once more.
This module lists the ops PyTorch treats as linear (``auto_linear``: the op applied to the
tangents), pointwise ops whose backward formula reduces and so cannot be applied to a tangent, and
explicit rules where the generic route would be slow (the matrix products) or wrong (affine ops
whose constant must not reach the tangent).

A rule is ``fn(args, result, tangents)``: ``args`` in schema order, ``tangents`` one per
differentiable input (``None`` where it has none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["JVP_RULES", "LINEAR", "ELEMENTWISE_EXCLUDED", "jvp_rule"]


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
    avg_pool2d avg_pool3d _adaptive_avg_pool2d im2col col2im conj_physical neg real imag
""")

# Pointwise ops whose backward formula is not a per-element product (it reduces or needs the
# output gradient's full shape): they take the double-vjp route.
ELEMENTWISE_EXCLUDED = _q("")

JVP_RULES: dict[str, Callable[..., Any]] = {}


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


@jvp_rule("addmm")
def _addmm(args, result, tans):
    # addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * mat1 @ mat2
    self, m1, m2, beta, alpha = args
    ts, t1, t2 = tans
    out = _bilinear(lambda x, y: x.mm(y), m1, m2, t1, t2)
    if out is not None and alpha != 1:
        out = out * alpha
    if ts is not None:
        term = ts * beta if beta != 1 else ts
        out = term if out is None else out + term
    return out


@jvp_rule("constant_pad_nd")
def _constant_pad_nd(args, result, tans):
    # affine: the padding value is a constant, so the tangent is padded with zeros
    return tans[0].constant_pad_nd(args[1], 0)


@jvp_rule("copy_")
def _copy(args, result, tans):
    # self is overwritten: only src's tangent survives (zeros when src has none)
    import torchplug

    src_t = tans[1]
    if src_t is None:
        return torchplug.zeros_like(result)
    return src_t
