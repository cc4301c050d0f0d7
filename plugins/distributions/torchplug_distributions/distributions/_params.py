"""Shared parameter handling for distributions given either ``probs`` or ``logits``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .utils import broadcast_all

__all__ = ["probs_or_logits"]


def probs_or_logits(dist: Any, probs: Any, logits: Any) -> bool:
    """Store exactly one of ``probs``/``logits`` on ``dist`` (as a tensor) and as ``dist._param``; whether it was
    a Python number (a scalar distribution)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    (tensor,) = broadcast_all(value)
    setattr(dist, name, tensor)
    dist._param = tensor
    return isinstance(value, Number)
