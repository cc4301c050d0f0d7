"""Formulas of composites that PyTorch differentiates as one node: ``var_mean``, ``std_mean``, ``aminmax``,
``pixel_shuffle``/``pixel_unshuffle``, ``masked_select``, ``split``/``split_with_sizes``/``unbind`` (their forward is a ``CompositeExplicitAutograd``
kernel over primitives; autograd records ``VarMeanBackward0`` and so on, like derivatives.yaml)."""

from __future__ import annotations

from typing import Any

import torchplug as T

from ._formulas import _reduced_count, _unsqueeze_dims, _var_grad
from ._formulas import amax as _extremum_grad
from ._rules import rule

__all__: list[str] = []


def _mean_grad(g: Any, self: Any, dim: Any, keepdim: bool) -> Any:
    count = _reduced_count(tuple(self.shape), dim)
    return _unsqueeze_dims(g, self.dim(), dim, keepdim).expand(list(self.shape)) / count


@rule("var_mean", saves="self, dim, correction, keepdim")
def var_mean(n, g, self, dim, correction, keepdim):
    # var_mean_backward: var's gradient plus mean's (an unused output arrives as zeros)
    gv, gm = g
    return (_var_grad(gv, self, dim, correction, keepdim) + _mean_grad(gm, self, dim, keepdim),)


@rule("std_mean", saves="self, dim, correction, keepdim, result0")
def std_mean(n, g, self, dim, correction, keepdim, std):
    # std_mean_backward: std_backward (a zero std passes a zero gradient) plus mean's
    gs, gm = g
    gvar = (gs / (2 * std)).masked_fill(std == 0, 0)
    return (_var_grad(gvar, self, dim, correction, keepdim) + _mean_grad(gm, self, dim, keepdim),)


@rule("aminmax", saves="self, dim, keepdim, result0, result1")
def aminmax(n, g, self, dim, keepdim, lo, hi):
    # aminmax_backward: each extremum's gradient split evenly over the elements that reach it
    dims = None if dim is None else [dim]
    (gmin,) = _extremum_grad(n, g[0], self, dims, keepdim, lo)
    (gmax,) = _extremum_grad(n, g[1], self, dims, keepdim, hi)
    return (gmin + gmax,)


@rule("pixel_shuffle", saves="upscale_factor")
def pixel_shuffle(n, g, upscale_factor):
    return (T.nn.functional.pixel_unshuffle(g, upscale_factor),)


@rule("pixel_unshuffle", saves="downscale_factor")
def pixel_unshuffle(n, g, downscale_factor):
    return (T.nn.functional.pixel_shuffle(g, downscale_factor),)


@rule("split.Tensor", "split_with_sizes", saves="dim")
def split(n, g, dim):
    # split_backward: the pieces' gradients (zeros where unused) concatenated back
    return (T.cat(list(g) if isinstance(g, tuple) else [g], dim),)


@rule("unbind.int", saves="dim")
def unbind(n, g, dim):
    return (T.stack(list(g) if isinstance(g, tuple) else [g], dim),)


@rule("masked_select", saves="self, mask")
def masked_select(n, g, self, mask):
    # masked_select_backward: the gradient scattered into zeros of the broadcast shape (the engine sums
    # it back to self's shape)
    shape = T.broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    zeros = T.zeros(shape, dtype=g.dtype, device=g.device)
    return (zeros.masked_scatter(mask.expand(shape), g),)
