"""Margin, embedding and likelihood losses of ``torch.nn.functional`` as compositions of tensor ops.

Each follows ATen's formula for the same loss (so values and autograd gradients equal PyTorch's)
and PyTorch's Python-level argument checks, in its order and words.
"""

from __future__ import annotations

import math
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor
from torchplug._ops.nn_functional import _legacy_reduction, _reduction, _reduction_enum

__all__ = [
    "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "multilabel_margin_loss", "multi_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss",
]

_NAMES = ("none", "mean", "sum")


def _apply(loss: Tensor, enum: int) -> Tensor:
    """ATen's ``apply_loss_reduction``: 0 none, 1 mean, 2 sum."""
    if enum == 1:
        return loss.mean()
    if enum == 2:
        return loss.sum()
    return loss


def _reduction_name(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average: Any = None,
                        reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced."""
    enum = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _apply((-target * (input1 - input2) + margin).clamp_min(0), enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``, reduced."""
    enum = _reduction(size_average, reduce, reduction)
    zeros = torchplug.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    out = torchplug.where(target != 1, margin_clamp, zeros) + torchplug.where(target != -1, input, zeros)
    return _apply(out, enum)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, reduced."""
    enum = _reduction(size_average, reduce, reduction)
    return _apply(torchplug.log1p(torchplug.exp(-input * target)), enum)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Per-sample mean over classes of the binary logistic loss (multi-label, one-vs-all)."""
    reduction = _reduction_name(size_average, reduce, reduction)
    logsig = torchplug.nn.functional.logsigmoid
    loss = -(target * logsig(input) + (1 - target) * logsig(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def _margin_shapes(input: Tensor) -> tuple[int, int]:
    """(nframe, dim) of a multi-class margin loss, with ATen's shape checks."""
    nd = input.dim()
    if not ((nd == 2 and input.size(1) != 0) or (nd == 1 and input.size(0) != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    nframe = 1 if nd <= 1 else input.size(0)
    dim = 1 if nd == 0 else input.size(nd - 1)
    return nframe, dim


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C`` per sample."""
    enum = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _margin_shapes(input)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != dim:
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    x = input.reshape(nframe, dim)
    y = target.reshape(nframe, 1).long()
    if nframe and bool(((y < 0) | (y >= dim)).any()):
        raise RuntimeError("target out of range")
    x_y = x.gather(1, y)
    z = (margin - x_y + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y.reshape(-1)].reshape(nframe, 1)
    not_y = torchplug.arange(dim, device=x.device).reshape(1, dim) != y
    loss = (z * not_y).sum(1) / dim
    if enum == 0:
        return loss if target.dim() > 0 else loss.reshape(())
    return _apply(loss, enum)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss; ``target`` lists class indices per sample, ended by the first ``-1``."""
    enum = _reduction(size_average, reduce, reduction)
    nframe, dim = _margin_shapes(input)
    nd = input.dim()
    if nd <= 1:
        if target.dim() > 1 or target.numel() != dim:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                               f"{list(input.shape)}")
    elif not (target.dim() == 2 and target.size(0) == nframe and target.size(1) == dim):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    x = input.reshape(nframe, dim)
    t = target.reshape(nframe, dim).long()
    if nframe and bool(((t < -1) | (t >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # Targets count up to (not including) the first -1 of their row.
    valid = (t >= 0).long().cumprod(1).bool()
    safe = torchplug.where(valid, t, torchplug.zeros_like(t))
    # Counted, not scattered: the placeholder index 0 of an ended list must not clear class 0.
    hits = torchplug.zeros(nframe, dim, dtype=torchplug.int64, device=x.device)
    is_target = hits.scatter_add(1, safe, valid.long()) > 0
    x_y = x.gather(1, safe)  # (N, J)
    hinge = (1 - x_y.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (N, J, C)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * mask).sum((1, 2)) / dim
    if enum == 0:
        return loss if nd > 1 else loss.reshape(())
    return _apply(loss, enum)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0, size_average: Any = None,
                          reduce: Any = None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` for ``target == 1``, ``max(0, cos(x1, x2) - margin)`` for ``target == -1``."""
    enum = _reduction(size_average, reduce, reduction)
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12  # ATen's EPSILON
    prod_sum = (input1 * input2).sum(targ_dim)
    mag1 = (input1 * input1).sum(targ_dim) + eps
    mag2 = (input2 * input2).sum(targ_dim) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = torchplug.zeros_like(cos)
    out = torchplug.where(target == 1, 1 - cos, zeros) + torchplug.where(target == -1, (cos - margin).clamp_min(0),
                                                                         zeros)
    return _apply(out, enum)


def _triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the p-norm pairwise distance."""
    enum = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist = torchplug.nn.functional.pairwise_distance
    d_pos = dist(anchor, positive, p, eps)
    d_neg = dist(anchor, negative, p, eps)
    if swap:
        d_neg = torchplug.min(d_neg, dist(positive, negative, p, eps))
    return _apply((margin + d_pos - d_neg).clamp_min(0), enum)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """Triplet margin loss with a custom ``distance_function`` (default: ``pairwise_distance``)."""
    _reduction_enum(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else torchplug.nn.functional.pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = torchplug.minimum(d_neg, dist(positive, negative))
    loss = torchplug.clamp_min(margin + d_pos - d_neg, 0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood (``exp(input) - target * input`` for ``log_input``)."""
    reduction = _reduction_name(size_average, reduce, reduction)
    if reduction not in _NAMES:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = torchplug.exp(input) - target * input
    else:
        loss = input - target * torchplug.log(input + eps)
    if full:
        stirling = target * torchplug.log(target) - target + 0.5 * torchplug.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply(loss, _NAMES.index(reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target)^2 / var)``."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torchplug.ones_like(input)
    elif bool(torchplug.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = torchplug.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _NAMES:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with torchplug.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (torchplug.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply(loss, _NAMES.index(reduction))
