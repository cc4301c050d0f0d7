"""``torch.nn.functional``-signature functions over the nn ops (re-exported as ``torchplug.nn.functional``).

Each function follows PyTorch's Python implementation: argument normalization (``_pair``,
reduction strings, ``inplace=``), the Python-level checks and warnings, then one aten op.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._base.flags import SDP_ENABLED
from torchplug._dispatch.aten import A
from torchplug._ops.composites_nn import vector_norm
from torchplug._tensor.tensor import Tensor

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear", "unfold",
    "fold", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "threshold", "threshold_", "relu", "relu_", "hardtanh", "hardtanh_", "relu6", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "glu", "gelu",
    "logsigmoid", "hardshrink", "tanhshrink", "softsign", "softplus", "softmin", "softmax", "log_softmax",
    "softshrink", "tanh", "sigmoid", "hardsigmoid", "silu", "mish", "hardswish", "batch_norm", "instance_norm",
    "layer_norm", "group_norm", "rms_norm", "normalize", "embedding", "one_hot", "pad", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
    "pairwise_distance", "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "scaled_dot_product_attention",
]


# ---- argument helpers -------------------------------------------------------------------------------------
def _ntuple(value: Any, n: int) -> list[int]:
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value] * n


def _pair(value: Any) -> list[int]:
    return _ntuple(value, 2)


def _reduction_enum(reduction: str) -> int:
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: Any, reduce: Any, emit_warning: bool = True) -> str:
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=3)
    return ret


def _reduction(size_average: Any, reduce: Any, reduction: str) -> int:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def _no_grad() -> Any:
    from torchplug._tensor.tensor import _no_grad as exclude_autograd

    return exclude_autograd()


# ---- convolution / linear ---------------------------------------------------------------------------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over an input of shape (N, C, L) or (C, L)."""
    if isinstance(padding, str):
        return A["conv1d.padding"](input, weight, bias, stride, padding, dilation, groups)
    return A.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over an input of shape (N, C, H, W) or (C, H, W)."""
    if isinstance(padding, str):
        return A["conv2d.padding"](input, weight, bias, stride, padding, dilation, groups)
    return A.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over an input of shape (N, C, D, H, W) or (C, D, H, W)."""
    if isinstance(padding, str):
        return A["conv3d.padding"](input, weight, bias, stride, padding, dilation, groups)
    return A.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """1-D transposed convolution ("deconvolution")."""
    return A.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """2-D transposed convolution ("deconvolution")."""
    return A.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """3-D transposed convolution ("deconvolution")."""
    return A.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``."""
    return A.linear(input, weight, bias)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C*kh*kw, L)."""
    return A.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor (col2im), summing overlaps."""
    return A.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


# ---- pooling ------------------------------------------------------------------------------------------------
def _stride(stride: Any) -> Any:
    return [] if stride is None else stride


def _max_pool(n: int) -> tuple[Any, Any]:
    """``max_pool{n}d`` and ``max_pool{n}d_with_indices`` over the aten op of the same name."""
    plain = getattr(A, f"max_pool{n}d")
    with_indices = getattr(A, f"max_pool{n}d_with_indices")

    def pool_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                          return_indices=False):
        return with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    def pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        if return_indices:
            return pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        return plain(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    pool.__name__, pool_with_indices.__name__ = f"max_pool{n}d", f"max_pool{n}d_with_indices"
    pool.__doc__ = f"{n}-D max pooling; ``return_indices`` adds the argmax positions."
    return pool, pool_with_indices


max_pool1d, max_pool1d_with_indices = _max_pool(1)
max_pool2d, max_pool2d_with_indices = _max_pool(2)
max_pool3d, max_pool3d_with_indices = _max_pool(3)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling."""
    return A.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling."""
    return A.avg_pool2d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling."""
    return A.avg_pool3d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad, divisor_override)


def _list_with_default(out_size: Any, defaults: Sequence[int]) -> list[int]:
    if isinstance(out_size, int):
        return [out_size]
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling to ``output_size``."""
    return A.adaptive_avg_pool1d(input, _ntuple(output_size, 1))


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling; ``None`` entries keep the input size."""
    size = _pair(output_size) if isinstance(output_size, int) else _list_with_default(output_size, list(input.shape))
    return A.adaptive_avg_pool2d(input, size)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return A.adaptive_max_pool1d(input, _ntuple(output_size, 1))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    size = _pair(output_size) if isinstance(output_size, int) else _list_with_default(output_size, list(input.shape))
    return A.adaptive_max_pool2d(input, size)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ---- dropout -------------------------------------------------------------------------------------------------
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)`` (when ``training``)."""
    _check_p(p)
    return A.dropout_(input, p, training) if inplace else A.dropout(input, p, training)


def _feature(input, p, training, inplace, op):
    return A[f"{op}_"](input, p, training) if inplace else A[op](input, p, training)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, L) or (C, L) inputs."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d exists to provide "
            "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    if nd == 3:
        return _feature(input, p, training, inplace, "feature_dropout")
    result = _feature(A.unsqueeze(input, 0), p, training, inplace, "feature_dropout")
    return input if inplace else A.squeeze(result, [0])


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, H, W) inputs."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _feature(input, p, training, inplace, "feature_dropout")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel-wise dropout for (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if nd == 4:
        result = _feature(A.unsqueeze(input, 0), p, training, inplace, "feature_dropout")
        return input if inplace else A.squeeze(result, [0])
    return _feature(input, p, training, inplace, "feature_dropout")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalizing property (for SELU networks)."""
    _check_p(p)
    return _feature(input, p, training, inplace, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Channel-wise alpha dropout."""
    _check_p(p)
    return _feature(input, p, training, inplace, "feature_alpha_dropout")


# ---- activations --------------------------------------------------------------------------------------------------
def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``, else ``input``."""
    return A.threshold_(input, threshold, value) if inplace else A.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return A.threshold_(input, threshold, value)


def relu(input, inplace=False):
    """max(input, 0)."""
    return A.relu_(input) if inplace else A.relu(input)


def relu_(input):
    return A.relu_(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return A.hardtanh_(input, min_val, max_val) if inplace else A.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """min(max(input, 0), 6)."""
    return A.hardtanh_(input, 0.0, 6.0) if inplace else A.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    """ELU: x if x > 0 else alpha * (exp(x) - 1)."""
    return A.elu_(input, alpha) if inplace else A.elu(input, alpha)


def elu_(input, alpha=1.0):
    return A.elu_(input, alpha)


def selu(input, inplace=False):
    """Scaled ELU with the self-normalizing constants."""
    return A.selu_(input) if inplace else A.selu(input)


def selu_(input):
    return A.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """CELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return A.celu_(input, alpha) if inplace else A.celu(input, alpha)


def celu_(input, alpha=1.0):
    return A.celu_(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x."""
    return A.leaky_relu_(input, negative_slope) if inplace else A.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return A.leaky_relu_(input, negative_slope)


def prelu(input, weight):
    """Leaky ReLU with a learned slope per channel."""
    return A.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: random slopes in [lower, upper] when training, their mean otherwise."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    # As PyTorch's kernel: one double-precision U(lower, upper) draw per element <= 0, in row-major
    # order, none for the rest (so the generator advances as torch's does); slope 1 elsewhere.
    with _no_grad():
        neg = A.le(input, 0)
        draws = A.empty([int(A.sum(neg).item())], dtype=D.float64, device=input.device).uniform_(lower, upper)
        noise = A.ones(list(input.shape), dtype=input.dtype, device=input.device)
        noise[neg] = draws.to(input.dtype)
    out = A.mul(input, noise)
    if inplace:
        A.copy_(input, out)
        return input
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return A.glu(input, dim)


def gelu(input, approximate="none"):
    """GELU: x * Phi(x) (``approximate='tanh'`` for the tanh formula)."""
    return A.gelu(input, approximate=approximate)


def logsigmoid(input):
    """log(sigmoid(x)), computed stably."""
    return A.log_sigmoid(input)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return A.hardshrink(input, lambd)


def tanhshrink(input):
    """x - tanh(x)."""
    return A.sub(input, A.tanh(input))


def softsign(input):
    """x / (1 + |x|)."""
    return A.div(input, A.add(A.abs(input), 1))


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``."""
    return A.softplus(input, beta, threshold)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return A.softmax(A.neg(input), dim, dtype)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return A.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return A.log_softmax(input, dim, dtype)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    return A.softshrink(input, lambd)


def tanh(input):
    return A.tanh(input)


def sigmoid(input):
    return A.sigmoid(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return A.hardsigmoid_(input) if inplace else A.hardsigmoid(input)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return A.silu_(input) if inplace else A.silu(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return A.mish_(input) if inplace else A.mish(input)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return A.hardswish_(input) if inplace else A.hardswish(input)


# ---- normalization -----------------------------------------------------------------------------------------------
def _size_repr(size: Sequence[int]) -> str:
    return f"torch.Size([{', '.join(str(int(s)) for s in size)}])"


def _verify_batch_size(size: Sequence[int]) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {_size_repr(size)}")


def _verify_spatial_size(size: Sequence[int]) -> None:
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size_repr(size)}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalization over the channel dim (1); updates running stats when ``training``."""
    if training:
        _verify_batch_size(list(input.shape))
    return A.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample separately."""
    if use_input_stats:
        _verify_spatial_size(list(input.shape))
    return A.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, False)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims."""
    return A.layer_norm(input, _ntuple(normalized_shape, 1), weight, bias, eps, False)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing dims, times ``weight``."""
    return A.rms_norm(input, _ntuple(normalized_shape, 1), weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize over groups of channels."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:]))
    return A.group_norm(input, num_groups, weight, bias, eps, False)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along ``dim``."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # PyTorch's norm is linalg.vector_norm
        from torchplug._ops.composites import scalar_type_name

        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {scalar_type_name(input.dtype)}"
        )
    # torch: input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    denom = A.expand(A.clamp_min(A.linalg_vector_norm(input, p, [dim], True), eps), list(input.shape))
    if out is None:
        return A.div(input, denom)
    return A["div.out"](input, denom, out=out)


# ---- embedding / one_hot ------------------------------------------------------------------------------------------
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the indices in ``input``."""
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.shape[0], "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.shape[0], "Padding_idx must be within num_embeddings"
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with _no_grad():
            A.embedding_renorm_(weight, input, max_norm, norm_type)
    return A.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a new last dim of size ``num_classes``."""
    return A.one_hot(tensor, num_classes)


# ---- padding / resampling -------------------------------------------------------------------------------------------
def pad(input, pad, mode="constant", value=None):
    """Pad the trailing dims (``pad`` lists (left, right) pairs from the last dim backwards)."""
    if value.__class__ is bool:  # torch's float argument takes a bool
        value = float(value)
    return A.pad(input, list(pad), mode, value)


def _is_integer(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or (isinstance(x, Tensor) and not x.is_floating_point())


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample to ``size`` or by ``scale_factor`` (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
    area)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but got "
                    f"size with types {[type(x) for x in size]}"
                )
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                    "format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(math.floor(float(input.shape[i + 2]) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by torchplug yet")
    if output_size is None:
        # the op computes floor(input_size * scale) itself in PyTorch; we pass both
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
    scales = list(scale_factors) if scale_factors is not None else [None] * max(dim, 0)
    names = {1: ("linear", "upsample_linear1d"), 2: ("bilinear", "upsample_bilinear2d"),
             3: ("trilinear", "upsample_trilinear3d")}
    if dim in (1, 2, 3):
        if mode == "nearest":
            return getattr(A, f"upsample_nearest{dim}d")(input, output_size, *scales)
        if mode == "nearest-exact":
            return getattr(A, f"_upsample_nearest_exact{dim}d")(input, output_size, *scales)
        if mode == "area":
            if dim == 1:
                return adaptive_avg_pool1d(input, output_size)
            if dim == 2:
                return adaptive_avg_pool2d(input, output_size)
            raise NotImplementedError("interpolate(mode='area') on 5-D inputs (adaptive_avg_pool3d) is not supported "
                                      "by torchplug yet")
        if mode == names[dim][0]:
            return getattr(A, names[dim][1])(input, output_size, align_corners, *scales)
        if mode == "bicubic" and dim == 2:
            from torchplug._ops.upsample_bicubic import upsample_bicubic2d

            return upsample_bicubic2d(input, output_size, align_corners, *scales)
    got = {3: "3D", 4: "4D", 5: "5D"}.get(input.dim())
    needs = {"linear": "3D", "bilinear": "4D", "trilinear": "5D"}
    if got is not None and mode in needs:
        raise NotImplementedError(f"Got {got} input, but {mode} mode needs {needs[mode]} input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | linear "
        f"| bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
    )


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`."""
    warnings.warn(f"`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r)."""
    return A.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W)."""
    return A.pixel_unshuffle(input, downscale_factor)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between ``x1`` and ``x2`` along ``dim``."""
    return A.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    return A.pairwise_distance(x1, x2, p, eps, keepdim)


# ---- losses --------------------------------------------------------------------------------------------------------------
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` at class indices ``target``."""
    return A.nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax + nll_loss for class indices; soft cross entropy for class probabilities."""
    return A.cross_entropy_loss(input, target, weight, _reduction(size_average, reduce, reduction), ignore_index,
                                label_smoothing)


def _size_warning(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size_repr(target.shape)}) that is different to the input size "
            f"({_size_repr(input.shape)}). This will likely lead to incorrect results due to broadcasting. Please "
            "ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if tuple(a.shape) == tuple(b.shape):
        return a, b
    from torchplug._ops.composites_nn import S_broadcast

    shape = S_broadcast(list(a.shape), list(b.shape))
    # like torch.broadcast_tensors: an operand that already has the shape is not expanded (no node)
    return (a if list(a.shape) == shape else A.expand(a, shape)), (b if list(b.shape) == shape else A.expand(b, shape))


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight: bool) -> Tensor:
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = A.mul(loss, weight)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return A.sum(weighted)
    if reduction == "mean":
        return A.div(A.sum(weighted), A.sum(weight)) if mean_by_weight else A.mean(weighted)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        d = A.sub(a, b)
        return _weighted(A.mul(d, d), weight, input, reduction, True)
    return A.mse_loss(a, b, _reduction_enum(reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    a, b = _broadcast(input, target)
    if weight is not None:
        return _weighted(A.abs(A.sub(a, b)), weight, input, reduction, True)
    return A.l1_loss(a, b, _reduction_enum(reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Quadratic below ``beta``, linear above (divided by beta in the quadratic part)."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    a, b = _broadcast(input, target)
    if beta == 0.0:  # as torch.nn.functional does: the graph records l1_loss's nodes
        return A.l1_loss(a, b, _reduction_enum(reduction))
    return A.smooth_l1_loss(a, b, _reduction_enum(reduction), beta)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic below ``delta``, linear (scaled by delta) above."""
    _size_warning(input, target)
    a, b = _broadcast(input, target)
    if weight is None:
        return A.huber_loss(a, b, _reduction_enum(reduction), delta)
    return _weighted(A.huber_loss(a, b, 0, delta), weight, input, reduction, False)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """BCE of probabilities ``input`` against ``target``."""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        reduction_enum = _reduction_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({_size_repr(target.shape)}) that is different to the input size "
            f"({_size_repr(input.shape)}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        from torchplug._ops.composites_nn import S_broadcast

        weight = A.expand(weight, S_broadcast(list(target.shape), list(weight.shape)))
    return A.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE on logits, computed stably with log-sigmoid; ``pos_weight`` weighs positives."""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        reduction_enum = _reduction_enum(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size_repr(target.shape)}) must be the same as input size ({_size_repr(input.shape)})"
        )
    return A.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence with ``input`` given as log-probabilities."""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        reduction_enum = 2 if reduction == "batchmean" else _reduction_enum(reduction)
    out = A.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        out = A.div(out, input.shape[0])
    return out


# ---- attention -----------------------------------------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V, with optional causal masking and dropout."""
    if attn_mask is not None and attn_mask.__class__ is not Tensor:
        dispatch = getattr(type(attn_mask), "_sdpa_dispatch", None)  # nn.attention.bias's lazy causal biases
        if dispatch is not None:
            return dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if not SDP_ENABLED["math"]:  # sdpa_kernel / enable_math_sdp(False): only a fused kernel may run
        _check_fused_sdpa(query, key, value, dropout_p)
    out = A.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                         enable_gqa=enable_gqa)
    if not query.is_contiguous() and query.device.type == "cpu" and SDP_ENABLED["flash"] \
            and _flash_cpu_reason(query, key, value, dropout_p) is None:
        out = _in_layout_of(out, query)
    return out


def _in_layout_of(out, query):
    """``out`` laid out in memory like ``query`` (PyTorch's cpu flash kernel allocates its output that way), so
    that ``out.transpose(1, 2).view(batch, seq, heads * dim)`` works for heads split off a projection."""
    perm = sorted(range(query.dim()), key=lambda d: -query.stride(d))
    inverse = [perm.index(d) for d in range(len(perm))]
    return out.permute(perm).contiguous().permute(inverse)


def _check_fused_sdpa(query, key, value, dropout_p):
    """With the math kernel disabled, PyTorch runs a fused kernel or refuses. On cpu that is its flash kernel
    (4-D inputs, no dropout, one head size, unit last stride), whose result the math kernel computes here;
    other devices' fused kernels are taken as available. Raises PyTorch's errors when none can run."""
    if not (SDP_ENABLED["flash"] or (query.device.type != "cpu" and (SDP_ENABLED["mem_efficient"]
                                                                      or SDP_ENABLED["cudnn"]))):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    if query.device.type != "cpu":
        return
    reason = _flash_cpu_reason(query, key, value, dropout_p)
    if reason is not None:
        warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
        warnings.warn(reason, UserWarning, stacklevel=3)
        raise RuntimeError("No available kernel.  Aborting execution.")


def _flash_cpu_reason(query, key, value, dropout_p):
    """Why PyTorch's cpu flash kernel cannot take these inputs (None: it can)."""
    reason = None
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        reason = ("All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: "
                  f"{query.dim()}, Key dim: {key.dim()}, Value dim: {value.dim()} instead.")
    elif dropout_p > 0.0:
        reason = "Both fused kernels do not support non-zero dropout."
    elif not (query.shape[-1] == key.shape[-1] == value.shape[-1]):
        reason = ("Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): "
                  f"{query.shape[-1]}, Key.size(-1): {key.shape[-1]}, Value.size(-1): {value.shape[-1]} instead.")
    elif not (query.stride(-1) == key.stride(-1) == value.stride(-1) == 1):
        reason = ("All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
                  f"{query.stride(-1)}, Key.stride(-1): {key.stride(-1)}, Value.stride(-1): {value.stride(-1)}")
    return reason


_ = D

# pdist, lp_pool, embedding_bag, max_unpool: composed in their own module
from torchplug._ops.nn_functional_more import *  # noqa: E402,F401,F403
from torchplug._ops.nn_functional_more import __all__ as _MORE  # noqa: E402

__all__ += _MORE
