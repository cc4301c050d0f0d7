"""``Upsample`` and its fixed-mode forms ``UpsamplingNearest2d`` / ``UpsamplingBilinear2d``, over ``F.interpolate``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize to ``size`` or by ``scale_factor`` with ``mode`` (nearest, linear, bilinear, bicubic, trilinear...)."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: Any = None,
                 recompute_scale_factor: Any = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state: dict) -> None:
        # Checkpoints from before recompute_scale_factor existed behaved as if it were True.
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling (``F.interpolate(mode='nearest')``)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True``."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
