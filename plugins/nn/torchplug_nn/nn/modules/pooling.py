"""Pooling: ``MaxPool*``, ``AvgPool*``, ``AdaptiveAvgPool*``, ``AdaptiveMaxPool*``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    _fn = "max_pool2d"

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, dilation={dilation}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                    ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    _fn = "max_pool1d"


class MaxPool2d(_MaxPoolNd):
    _fn = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    _fn = "max_pool3d"


class AvgPool1d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any) -> Any:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


def _single(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


class AvgPool2d(Module):
    _fn = "avg_pool2d"

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                                    self.count_include_pad, self.divisor_override)


class AvgPool3d(AvgPool2d):
    _fn = "avg_pool3d"


class _AdaptiveNd(Module):
    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveNd):
    _fn = "adaptive_avg_pool1d"


class AdaptiveAvgPool2d(_AdaptiveNd):
    _fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveNd):
    _fn = "adaptive_avg_pool3d"


class _AdaptiveMaxNd(Module):
    _fn = "adaptive_max_pool2d"

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxNd):
    _fn = "adaptive_max_pool1d"


class AdaptiveMaxPool2d(_AdaptiveMaxNd):
    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxNd):
    """3-D adaptive max pooling to ``output_size`` (``None`` keeps that input size)."""

    _fn = "adaptive_max_pool3d"


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        nd = self._nd
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Any) -> Any:
        return getattr(F, f"fractional_max_pool{self._nd}d")(
            input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
            _random_samples=self._random_samples)


def _ntuple(x: Any, n: int) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,) * n


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (pseudo-random pooling regions; Graham, 2014)."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling."""

    _nd = 3
