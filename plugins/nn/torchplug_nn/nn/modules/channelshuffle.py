"""``ChannelShuffle``: interleave the channel groups (ShuffleNet)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Divide the channels into ``groups`` and interleave them."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Any) -> Any:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
