"""Helpers shared by the distributions: broadcasting parameters, probs/logits conversions, cached properties."""

from __future__ import annotations

from functools import update_wrapper
from numbers import Number
from typing import Any

import torchplug as torch

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def broadcast_all(*values: Any) -> tuple:
    """Tensors and numbers broadcast together; numbers become tensors of the tensors' dtype (or the default)."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if all(isinstance(v, torch.Tensor) for v in values):
        return tuple(torch.broadcast_tensors(*values))
    like = next((v for v in values if isinstance(v, torch.Tensor)), None)
    opts = {"dtype": torch.get_default_dtype()} if like is None else {"dtype": like.dtype, "device": like.device}
    tensors = [v if isinstance(v, torch.Tensor) else torch.tensor(v, **opts) for v in values]
    return tuple(torch.broadcast_tensors(*tensors))


def _standard_normal(shape: Any, dtype: Any, device: Any) -> Any:
    return torch.normal(torch.zeros(shape, dtype=dtype, device=device), torch.ones(shape, dtype=dtype, device=device))


def _sum_rightmost(value: Any, dim: int) -> Any:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    return value if dim == 0 else value.reshape(value.shape[: value.dim() - dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Probabilities from logits: a sigmoid for binary (Bernoulli) logits, a softmax over the last dim otherwise."""
    return torch.sigmoid(logits) if is_binary else torch.softmax(logits, dim=-1)


def clamp_probs(probs: Any) -> Any:
    """``probs`` kept inside [eps, 1 - eps] of their dtype, so that their logs stay finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """Logits from probabilities (log-odds if binary, log-probabilities otherwise); probs clamped first."""
    ps = clamp_probs(probs)
    return torch.log(ps) - torch.log1p(-ps) if is_binary else torch.log(ps)


class lazy_property:
    """A property computed on first access and then stored on the instance (``probs``/``logits`` and the like)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat: Any, diag: int = 0) -> Any:
    """The lower triangle (below diagonal ``diag``) of the last two dims, row by row, as a vector."""
    n = mat.shape[-1]
    rows, cols = torch.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Any, diag: int = 0) -> Any:
    """The inverse of :func:`tril_matrix_to_vec`: a lower-triangular matrix from its row-major vector."""
    m = vec.shape[-1]
    # m = n (n + 1) / 2 + diag n - ... solved for the side n
    n = int(round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2))
    rows, cols = torch.tril_indices(n, n, offset=diag, device=vec.device)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., rows, cols] = vec
    return mat
