"""``torchplug.nn.attention.bias``: causal attention biases that ``F.scaled_dot_product_attention`` accepts as
``attn_mask`` (PyTorch's ``torch.nn.attention.bias``). A bias is a Tensor subclass, as in PyTorch, but an empty
one: ``F.scaled_dot_product_attention`` hands it to its ``_sdpa_dispatch``, and ``_materialize()`` gives the
boolean mask.  Other ops on it see the empty tensor (PyTorch's refuse them through ``__torch_function__``,
which torchplug's subclasses do not have)."""

from __future__ import annotations

import warnings
from enum import IntEnum, auto
from typing import Any

from torchplug._tensor.tensor import Tensor

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """Where the causal triangle is anchored: ``UPPER_LEFT`` (``tril``) or ``LOWER_RIGHT`` (``tril`` shifted so
    the last query sees every key: the alignment for decoding with a cache)."""

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal mask of ``seq_len_q x seq_len_kv`` that is never built unless needed: an upper-left one runs as
    ``is_causal=True``; a lower-right one is materialized for the math kernel."""

    def __new__(cls, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> CausalBias:
        return Tensor.__new__(cls, 0)  # an empty tensor: the mask itself is only made by _materialize

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!",
                          stacklevel=2)

    def _materialize(self, device: Any = None) -> Any:
        """The boolean mask (True where attention is allowed) on ``device`` (cpu by default)."""
        import torchplug

        ones = torchplug.ones(self.seq_len_q, self.seq_len_kv, device=device or "cpu", dtype=torchplug.bool)
        if self.variant == CausalVariant.UPPER_LEFT:
            return torchplug.tril(ones)
        return torchplug.tril(ones, diagonal=self.seq_len_kv - self.seq_len_q)

    @staticmethod
    def _sdpa_dispatch(query: Any, key: Any, value: Any, attn_mask: CausalBias, dropout_p: float = 0.0,
                       is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False) -> Any:
        """``F.scaled_dot_product_attention`` with this bias as its mask."""
        import torchplug.nn.functional as F

        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or attn_mask.variant == CausalVariant.UPPER_LEFT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p,
                                                  is_causal=True, scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask._materialize(query.device),
                                                  dropout_p=dropout_p, is_causal=False, scale=scale,
                                                  enable_gqa=enable_gqa)
        raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {attn_mask.variant}")

    def __repr__(self) -> str:
        return repr(self._materialize())


def causal_upper_left(*size: int) -> CausalBias:
    """A causal bias aligned to the upper left corner: ``tril(ones(size))``."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size: int) -> CausalBias:
    """A causal bias aligned to the lower right corner: ``tril(ones(size), diagonal=size[1] - size[0])``."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
