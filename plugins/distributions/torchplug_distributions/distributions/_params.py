"""Shared parameter handling for distributions given either ``probs`` or ``logits``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryParams", "probs_or_logits"]


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


class BinaryParams:
    """``probs`` and ``logits`` of a distribution over one success probability, each computed from the other
    on first use, and ``param_shape`` (the shape of the one given)."""

    _param: Any

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()
