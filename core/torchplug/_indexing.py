"""Tensor indexing (placeholder: replaced by the full implementation)."""

from __future__ import annotations

from typing import Any

__all__ = ["install_indexing"]


def install_indexing() -> None:
    from ._aten import A
    from ._tensor import Tensor

    def getitem(self: Any, index: Any) -> Any:
        return A.select(self, 0, index)

    Tensor.__getitem__ = getitem
