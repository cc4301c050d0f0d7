"""Padding layers: zero, constant, reflection, replication and circular, over ``F.pad``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ._factory import ntuple
from .module import Module

__all__ = [
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d",
    "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
]


class _PadNd(Module):
    """Pads the last ``_dims`` dims by ``padding`` (one int, or 2 * ``_dims`` ints: left, right, top, ...)."""

    _dims = 1
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = ntuple(padding, 2 * self._dims)

    def forward(self, input: Any) -> Any:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Any) -> Any:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _dims = 3


class _ZeroPad:
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return f"{self.padding}"  # type: ignore[attr-defined]


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pad the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pad the last two dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pad the last three dims with zeros."""


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (edge not repeated)."""

    _dims, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their reflection."""

    _dims, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their reflection."""

    _dims, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values."""

    _dims, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims by repeating their edge values."""

    _dims, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dims by repeating their edge values."""

    _dims, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Any) -> Any:
        d = input.dim()
        if d != self._dims + 1 and d != self._dims + 2:
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {d}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around."""

    _dims = 3
