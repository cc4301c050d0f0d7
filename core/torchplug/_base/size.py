"""``torchplug.Size``: the shape of a tensor."""

from __future__ import annotations

from typing import Any

__all__ = ["Size"]


class Size(tuple):
    """``torchplug.Size``: a tuple of ints that prints like PyTorch's."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torchplug.Size([{', '.join(str(int(s)) for s in self)}])"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item: Any) -> Any:
        result = tuple.__getitem__(self, item)
        return Size(result) if isinstance(item, slice) else result

    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Size, (tuple(self),))
