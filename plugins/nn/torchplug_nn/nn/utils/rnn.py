"""``nn.utils.rnn``: padding helpers for variable-length sequences."""

from __future__ import annotations

from typing import Any

import torchplug
from torchplug._tensor import Tensor

__all__ = ["pad_sequence", "unpad_sequence"]


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        if extra:
            filler = torchplug.full((extra, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = torchplug.cat([s, filler] if padding_side == "right" else [filler, s])
        padded.append(s)
    out = torchplug.stack(padded, 0)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, lengths)]
