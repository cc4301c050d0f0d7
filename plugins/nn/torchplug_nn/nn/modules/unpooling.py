"""``MaxUnpool1d/2d/3d`` (partial inverses of max pooling) and ``LPPool1d/2d/3d`` (power-average pooling)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d"]


class _MaxUnpoolNd(Module):
    _fn = "max_unpool2d"

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    _fn = "max_unpool3d"


class _LPPoolNd(Module):
    _fn = "lp_pool2d"

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    _fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    _fn = "lp_pool3d"
