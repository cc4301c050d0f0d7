"""A normalization's backward in differentiable primitives (layer, batch and group norm share it).

Their double backward differentiates it (``_formulas_double``), and their backward ops' jvp runs it on
dual inputs (``_jvp_rules``); it imports nothing of the plugin, so both can use it.
"""

from __future__ import annotations

__all__ = ["normalized_grads"]


def normalized_grads(g, x, weight, dims, eps, mask, stats=None):
    """A normalization's backward written with differentiable primitives over ``dims``.

    The statistics are recomputed from ``x`` (so their dependence on ``x`` is differentiated
    too) unless ``stats`` = (mean, rstd) are constants (batch norm in eval mode).
    ``weight`` is already shaped to broadcast against ``x``; the parameter gradients reduce over
    every dim where the weight has size 1.
    """
    if stats is None:
        mean = x.mean(dims, keepdim=True)
        xc = x - mean
        rstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    else:
        mean, rstd = stats
        xc = x - mean
    xhat = xc * rstd
    gw = g * weight if weight is not None else g
    outs = [None, None, None]
    if mask[0]:
        if stats is None:
            outs[0] = rstd * (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True))
        else:
            outs[0] = gw * rstd
    param_dims = [d for d in range(x.dim()) if weight is None or weight.shape[d] == 1]
    if mask[1] and weight is not None:
        outs[1] = g * xhat
    if mask[2]:
        outs[2] = g
    for k in (1, 2):
        if outs[k] is not None and param_dims:
            outs[k] = outs[k].sum(param_dims)
    return outs
