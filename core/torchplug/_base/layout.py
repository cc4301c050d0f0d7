"""Memory formats and layouts: ``torchplug.contiguous_format``, ``channels_last``, ``strided``."""

from __future__ import annotations

__all__ = ["memory_format", "layout", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d", "strided"]


class memory_format(str):
    """A memory format; compares equal to its name so kernels may take either."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torchplug.{str.__str__(self)}"

    __str__ = __repr__


class layout(str):
    """A tensor layout (only ``strided`` exists)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"torchplug.{str.__str__(self)}"

    __str__ = __repr__


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
strided = layout("strided")
