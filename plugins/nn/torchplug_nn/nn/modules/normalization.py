"""Normalization: ``BatchNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``InstanceNorm*``."""

from __future__ import annotations

import functools
import numbers
from typing import Any

import torchplug

from ... import _grad
from .. import functional as F, init
from ..parameter import Parameter
from ._factory import empty
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d"]


class _NormBase(Module):
    _version = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, **fk))
            if bias:
                self.bias = Parameter(empty(num_features, **fk))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", torchplug.zeros(num_features, **fk))
            self.register_buffer("running_var", torchplug.ones(num_features, **fk))
            self.register_buffer("num_batches_tracked", torchplug.tensor(0, dtype=torchplug.long, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Any) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "bias={use_bias}, track_running_stats={track_running_stats}").format(
                    **self.__dict__, use_bias=self.bias is not None)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   and self.num_batches_tracked.device.type != "meta"
                                   else torchplug.tensor(0, dtype=torchplug.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input: Any) -> Any:
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with _grad.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked.item())
            else:
                exponential_average_factor = self.momentum
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _nd = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Any) -> Any:
        unbatched = input.dim() == self._nd + 1
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats, self.momentum or 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


class LayerNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


class RMSNorm(Module):
    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Any) -> Any:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class LocalResponseNorm(Module):
    """Normalize each element by the mean square over ``size`` neighbouring channels (AlexNet)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _cross_map_scale(input: Any, size: int, alpha: float, k: float) -> Any:
    """The legacy (Lua Torch) cross-channel LRN scale, vectorised with a cumsum over channels.

    Its running-sum update never drops channel 0 from the window (it subtracts only channels
    ``1..c-pre_pad``), so the window of channel c is {0} plus [c-pre_pad+1, c+pre_pad-1]; kept as is.
    """
    c = input.size(1)
    pre_pad = int((size - 1) / 2 + 1)
    csum = (input * input).cumsum(1)
    hi = torchplug.arange(c, device=input.device).add(pre_pad - 1).clamp(max=c - 1)
    lo = torchplug.arange(c, device=input.device).sub(pre_pad)
    window = csum.index_select(1, hi)
    dropped = csum.index_select(1, lo.clamp(min=0)) - csum.narrow(1, 0, 1)
    keep = (lo >= 1).to(input.dtype).reshape(1, c, 1, 1)
    return (window - dropped * keep) * (alpha / size) + k


def _cross_map_grad(input: Any, output: Any, scale: Any, grad_output: Any, size: int, alpha: float,
                    beta: float) -> Any:
    """PyTorch's hand-written backward for it (a symmetric window of ``size`` channels), vectorised."""
    c = input.size(1)
    inverse_pre_pad = int(size - (size - 1) / 2)
    ratio = grad_output * output / scale
    zero = torchplug.zeros_like(ratio.narrow(1, 0, 1))
    prefix = torchplug.cat([zero, ratio.cumsum(1)], 1)  # prefix[i] = sum of ratio[:i]
    ch = torchplug.arange(c, device=input.device)
    lo = (ch - inverse_pre_pad).clamp(0, c)
    hi = (ch + size - inverse_pre_pad).clamp(0, c)
    accum = prefix.index_select(1, hi) - prefix.index_select(1, lo)
    return scale.pow(-beta) * grad_output - (2 * alpha * beta / size) * input * accum


@functools.cache
def _cross_map_function() -> Any:
    """The autograd Function (built once, on first use, as the autograd plugin may be absent)."""
    from torchplug.autograd import Function

    class CrossMapLRN2dFunction(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, size: int, alpha: float, beta: float, k: float) -> Any:
            scale = _cross_map_scale(x, size, alpha, k)
            out = x * scale.pow(-beta)
            ctx.save_for_backward(x, out, scale)
            ctx.params = (size, alpha, beta)
            return out

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            x, out, scale = ctx.saved_tensors
            return _cross_map_grad(x, out, scale, grad_output, *ctx.params), None, None, None, None

    return CrossMapLRN2dFunction


def _cross_map_lrn2d(input: Any, size: int, alpha: float, beta: float, k: float) -> Any:
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    if not _grad.autograd_available():
        return input * _cross_map_scale(input, size, alpha, k).pow(-beta)
    return _cross_map_function().apply(input, size, alpha, beta, k)


class CrossMapLRN2d(Module):
    """Cross-channel local response normalization of 4-D inputs, as Lua Torch's ``SpatialCrossMapLRN``."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:
        return _cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
