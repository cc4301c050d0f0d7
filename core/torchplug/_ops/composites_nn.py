"""nn composites: ops written once over primitives (conv wrappers, pooling 1d, losses, norms, attention...).

``CompositeImplicitAutograd`` entries are differentiated through their decomposition (autograd
sees the primitives); ``CompositeExplicitAutograd`` ones (``embedding``, and the losses and
``celu`` that PyTorch differentiates as one node) carry their own derivative.  Every composite
follows the ATen implementation of the same name, so values, dtypes and error messages match
PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import _grad_mode_on, _no_grad, Tensor

__all__ = ["COMPOSITES", "apply_reduction", "vector_norm"]

_I = "CompositeImplicitAutograd"
_E = "CompositeExplicitAutograd"


def _torch_name(dtype: D.dtype) -> str:
    from torchplug._ops.composites import scalar_type_name

    return scalar_type_name(dtype)


def apply_reduction(loss: Tensor, reduction: int) -> Tensor:
    """ATen's apply_loss_reduction: 0 none, 1 mean, 2 sum."""
    if reduction == 1:
        return A.mean(loss)
    if reduction == 2:
        return A.sum(loss)
    return loss


def vector_norm(x: Tensor, p: float, dim: Any, keepdim: bool) -> Tensor:
    """The p-norm over ``dim`` from primitives (so it differentiates through them)."""
    dims = [dim] if isinstance(dim, int) else list(dim)
    if p == 2:
        return A.sqrt(A.sum(A.mul(x, x), dims, keepdim))
    a = A.abs(x)
    if p == math.inf:
        return A.amax(a, dims, keepdim)
    if p == -math.inf:
        return A.amin(a, dims, keepdim)
    if p == 0:
        return A.sum(A._to_copy(A.ne(a, 0), dtype=x.dtype), dims, keepdim)
    if p == 1:
        return A.sum(a, dims, keepdim)
    return A.pow(A.sum(A.pow(a, p), dims, keepdim), 1.0 / p)


# ---- linear / convolution ---------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    # ATen's linear, branch for branch, so the graph has PyTorch's nodes (AddmmBackward0 for 2-d input)
    d = input.dim()
    if d == 0 or weight.dim() == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {d}D and {weight.dim()}D")
    if d == 2 and bias is not None:
        return A.addmm(bias, input, A.t(weight))
    if bias is not None and d >= 1 and input.is_contiguous() and (d == 3 or bias.dim() == 1):
        # _flatten_nd_linear: one addmm over the flattened batch, viewed back
        sizes = list(input.shape)
        out = A.addmm(bias, A.reshape(input, [math.prod(sizes[:-1]), sizes[-1]]), A.t(weight))
        return A.view(out, sizes[:-1] + [out.shape[1]])
    out = A.matmul(input, A.t(weight))
    return out if bias is None else A.add(out, bias)


def _batchify(name: str, input: Tensor, n: int) -> bool:
    d = input.dim()
    if d not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of size: "
            f"{S.fmt_sizes(input.shape)}"
        )
    return d == n + 2


def _conv(n: int) -> Callable[..., Tensor]:
    name = f"conv{n}d"

    def conv(input, weight, bias=None, stride=(1,), padding=(0,), dilation=(1,), groups=1):
        batched = _batchify(name, input, n)
        x = input if batched else A.unsqueeze(input, 0)
        out = _convolution(x, weight, bias, stride, padding, dilation, groups)
        return out if batched else A.squeeze(out, [0])

    conv.__name__ = name
    return conv


def _convolution(x, weight, bias, stride, padding, dilation, groups):
    """ATen's conv1d/2d/3d: a complex input goes through complex_convolution, the others to convolution."""
    n = weight.dim() - 2
    if not x.dtype.is_complex:
        return A.convolution(x, weight, bias, stride, padding, dilation, False, [0] * n, groups)
    # complex_convolution: three real convolutions (Gauss's trick), a - b + i (c - a - b)
    for other, what in ((weight, "weight"), (bias, "bias")):
        if other is not None and other.dtype is not x.dtype:
            theirs = _conv_type(other.dtype, what)
            raise RuntimeError(f"Input type ({_conv_type(x.dtype, what)}) and {what} type ({theirs}) should be the same")
    xr, xi = _complex_parts(x)
    wr, wi = _complex_parts(weight)
    br, bi = _complex_parts(bias) if bias is not None else (None, None)
    a = A.convolution(xr, wr, br, stride, padding, dilation, False, [0] * n, groups)
    b = A.convolution(xi, wi, None, stride, padding, dilation, False, [0] * n, groups)
    c = A.convolution(A.add(xr, xi), A.add(wr, wi), None if bias is None else A.add(br, bi), stride, padding,
                      dilation, False, [0] * n, groups)
    return A.add(A.sub(a, b), A.mul(A.sub(A.sub(c, a), b), 1j))


def _complex_parts(t: Tensor) -> tuple[Tensor, Tensor]:
    parts = A.view_as_real(t)
    return A.select(parts, -1, 0), A.select(parts, -1, 1)


def _conv_type(dt: D.dtype, what: str) -> str:
    """How torch's complex_convolution names a dtype: its tensor type name, or the C++ type for the bias check."""
    if what == "bias":
        cpp = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
               "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
        return cpp.get(str(dt).split(".")[-1], _torch_name(dt))
    if dt.is_complex or dt is D.bfloat16:
        return f"CPU{_torch_name(dt)}Type"
    return f"torch.{_torch_name(dt)}Tensor"


def _conv_str(n: int) -> Callable[..., Tensor]:
    name = f"conv{n}d"

    def conv(input, weight, bias=None, stride=(1,), padding="valid", dilation=(1,), groups=1):
        batched = _batchify(name, input, n)
        x = input if batched else A.unsqueeze(input, 0)
        out = _convolution_mode(x, weight, bias, stride, padding, dilation, groups)
        return out if batched else A.squeeze(out, [0])

    conv.__name__ = name + "_padding"
    return conv


def _convolution_mode(input, weight, bias, stride, padding, dilation, groups):
    if padding == "valid":
        return _convolution(input, weight, bias, stride, [0], dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    k = weight.dim()
    dims = k - 2
    if k != input.dim():
        raise RuntimeError(
            f"Expected {k}-dimensional input for {k}-dimensional weight{S.fmt_sizes(weight.shape)}, but got "
            f"{input.dim()}-dimensional input of size {S.fmt_sizes(input.shape)} instead"
        )
    if len(stride) not in (1, dims):
        raise RuntimeError(f"stride cannot broadcast to {dims} dimensions")
    if len(dilation) not in (1, dims):
        raise RuntimeError(f"dilation cannot broadcast to {dims} dimensions")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    left, right = [], []
    for i in range(dims):
        d = dilation[0] if len(dilation) == 1 else dilation[i]
        total = d * (weight.shape[i + 2] - 1)
        left.append(total // 2)
        right.append(total - total // 2)
    if left == right:
        return _convolution(input, weight, bias, stride, left, dilation, groups)
    pad_nd = [0] * (2 * dims)
    for i in range(dims):
        delta = right[i] - left[i]
        idx = 2 * (dims - 1 - i)
        if delta > 0:
            pad_nd[idx + 1] = delta
        else:
            pad_nd[idx] = delta
            left[i] = right[i]
    return _convolution(A.constant_pad_nd(input, pad_nd, 0), weight, bias, stride, left, dilation, groups)


def _conv_transpose(n: int) -> Callable[..., Tensor]:
    name = f"conv_transpose{n}d"

    def conv_transpose(input, weight, bias=None, stride=(1,), padding=(0,), output_padding=(0,), groups=1,
                       dilation=(1,)):
        batched = _batchify(name, input, n)
        x = input if batched else A.unsqueeze(input, 0)
        out = A.convolution(x, weight, bias, stride, padding, dilation, True, output_padding, groups)
        return out if batched else A.squeeze(out, [0])

    conv_transpose.__name__ = name
    return conv_transpose


# ---- pooling ----------------------------------------------------------------------------------------
def _check1d(fn: str, arg: str, values: Sequence[int]) -> None:
    if len(values) != 1:
        raise RuntimeError(f"{fn}() argument '{arg}' should contain one int (got {len(values)})")


def _check_dim_range(fn: str, t: Tensor, lo: int, hi: int) -> None:
    if not lo <= t.dim() < hi:
        raise RuntimeError(
            f"Expected {lo} to {hi - 1} dimensions, but got {t.dim()}-dimensional tensor for argument #1 'self' "
            f"(while checking arguments for {fn})"
        )


def max_pool1d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    if len(stride) == 0:
        stride = kernel_size
    _check_dim_range("max_pool1d", self, 2, 4)
    _check1d("max_pool1d", "kernel_size", kernel_size)
    _check1d("max_pool1d", "stride", stride)
    _check1d("max_pool1d", "padding", padding)
    _check1d("max_pool1d", "dilation", dilation)
    out, idx = A.max_pool2d_with_indices(A.unsqueeze(self, -2), [1, kernel_size[0]], [1, stride[0]],
                                         [0, padding[0]], [1, dilation[0]], ceil_mode)
    return A.squeeze(out, [-2]), A.squeeze(idx, [-2])


def max_pool1d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    if self.dim() not in (2, 3) or 0 in self.shape[-2:] or (self.dim() == 2 and self.shape[0] == 0):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:"
            f"{S.fmt_sizes(self.shape)}"
        )
    if len(kernel_size) != 1:
        raise RuntimeError(
            f"max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size "
            f"{len(kernel_size)}"
        )
    if len(stride) not in (0, 1):
        raise RuntimeError(
            f"max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size {len(stride)}"
        )
    if len(padding) != 1:
        raise RuntimeError(
            f"max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size {len(padding)}"
        )
    if len(dilation) != 1:
        raise RuntimeError(
            f"max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size {len(dilation)}"
        )
    if len(stride) == 0:
        stride = kernel_size
    k, s, p, d = kernel_size[0], stride[0], padding[0], dilation[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    ow = S.pool_output_size(self.shape[-1], k, p, s, d, ceil_mode)
    if ow <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {ow}")
    if self.device.type == "cpu" and not self.dtype.is_floating_point:
        # PyTorch's cpu path without indices (max_pool1d_impl) takes floating types only.
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for \'{_torch_name(self.dtype)}\'')
    return max_pool1d_with_indices(self, [k], [s], [p], [d], ceil_mode)[0]


def max_pool2d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return A.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return A.max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def avg_pool1d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True):
    if len(stride) == 0:
        stride = kernel_size
    _check_dim_range("avg_pool1d", self, 2, 4)
    _check1d("avg_pool1d", "kernel_size", kernel_size)
    _check1d("avg_pool1d", "stride", stride)
    _check1d("avg_pool1d", "padding", padding)
    out = A.avg_pool2d(A.unsqueeze(self, -2), [1, kernel_size[0]], [1, stride[0]], [0, padding[0]], ceil_mode,
                       count_include_pad)
    return A.squeeze(out, [-2])


def adaptive_avg_pool2d(self, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if output_size[0] < 0 or output_size[1] < 0:
        raise RuntimeError(
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received "
            f"{{{output_size[0]}, {output_size[1]}}}"
        )
    if tuple(output_size) == (1, 1):
        # PyTorch's shortcut: a mean over the spatial dims.
        return A.mean(self, [-1, -2], True)
    return A._adaptive_avg_pool2d(self, output_size)


def adaptive_avg_pool1d(self, output_size):
    _check_dim_range("adaptive_avg_pool1d", self, 2, 4)
    _check1d("adaptive_avg_pool1d", "output_size", output_size)
    return A.squeeze(adaptive_avg_pool2d(A.unsqueeze(self, -2), [1, output_size[0]]), [-2])


def adaptive_max_pool1d(self, output_size):
    _check_dim_range("adaptive_max_pool1d", self, 2, 4)
    _check1d("adaptive_max_pool1d", "output_size", output_size)
    for i in range(1, self.dim()):
        if self.shape[i] <= 0:
            raise RuntimeError(
                f"adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, but input "
                f"has sizes {S.fmt_sizes(self.shape)} with dimension {i} being empty"
            )
    out, idx = A.adaptive_max_pool2d(A.unsqueeze(self, -2), [1, output_size[0]])
    return A.squeeze(out, [-2]), A.squeeze(idx, [-2])


# ---- softmax ----------------------------------------------------------------------------------------
def _converted(self: Tensor, dtype: D.dtype | None) -> Tensor:
    return self if dtype is None or dtype is self.dtype else A._to_copy(self, dtype=dtype)


def softmax(self, dim, dtype=None):
    return A._softmax(_converted(self, dtype), dim, False)


def log_softmax(self, dim, dtype=None):
    return A._log_softmax(_converted(self, dtype), dim, False)


# ---- normalization ------------------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return A.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def _check_features(name: str, expected: int, actual: int) -> None:
    if expected != actual:
        raise RuntimeError(f"{name} should contain {expected} elements not {actual}")


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")
    num_features = input.shape[1]
    if input.numel() == 0:
        out = A.clone(input)
        if weight is not None:
            out = A.mul(out, A.select(weight, 0, 0)) if weight.numel() else out
        if bias is not None:
            out = A.add(out, A.select(bias, 0, 0)) if bias.numel() else out
        return out
    if running_mean is not None:
        _check_features("running_mean", num_features, running_mean.numel())
    elif not training:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if running_var is not None:
        _check_features("running_var", num_features, running_var.numel())
    elif not training:
        raise RuntimeError("running_var must be defined in evaluation mode")
    if weight is not None:
        _check_features("weight", num_features, weight.numel())
    if bias is not None:
        _check_features("bias", num_features, bias.numel())
    return A.native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    shape = list(input.shape)
    b, c = shape[0], shape[1]
    shape[1] = b * c
    shape[0] = 1

    def repeat(t):
        return None if t is None else A.cat([t] * b, 0)

    rm, rv = repeat(running_mean), repeat(running_var)
    x = A.reshape(A.clone(input, memory_format="contiguous_format") if not input.is_contiguous() else input, shape)
    out = batch_norm(x, repeat(weight), repeat(bias), rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    if running_mean is not None:
        A.copy_(running_mean, A.mean(A.view(rm, [b, c]), [0], False))
    if running_var is not None:
        A.copy_(running_var, A.mean(A.view(rv, [b, c]), [0], False))
    return A.view(out, list(input.shape))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{S.fmt_sizes(input.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of "
                f"shape {S.fmt_sizes(t.shape)} and input of shape {S.fmt_sizes(input.shape)}"
            )
    hxw = math.prod(input.shape[2:])
    x = input if input.is_contiguous() else A.clone(input, memory_format="contiguous_format")
    return A.native_group_norm(x, weight, bias, n, c, hxw, num_groups, eps)[0]


_OPMATH = {"float16": D.float32, "bfloat16": D.float32}
_EPS = {"float16": 1.1920928955078125e-07, "bfloat16": 1.1920928955078125e-07, "float32": 1.1920928955078125e-07,
        "float64": 2.220446049250313e-16}


def rms_norm(input, normalized_shape, weight=None, eps=None):
    normalized_shape = list(normalized_shape)
    S.layer_norm_check(list(input.shape), normalized_shape, None if weight is None else list(weight.shape), None)
    dt = input.dtype
    if dt.name not in _EPS:
        raise NotImplementedError(f'"rms_norm" not implemented for \'{_torch_name(dt)}\'')
    eps_val = _EPS[dt.name] if eps is None else eps
    opmath = _OPMATH.get(dt.name, dt)
    x = _converted(input, opmath)
    dims = [input.dim() - i - 1 for i in range(len(normalized_shape))]
    r = A.rsqrt(A["add.Scalar"](A.mean(A["pow.Tensor_Tensor"](x, 2), dims, True), eps_val))  # ATen: pow(x, 2).mean(...)
    result = _converted(A.mul(x, r), dt)
    if weight is not None:
        result = A.mul(result, weight)
    return result


# ---- dropout --------------------------------------------------------------------------------------------
def _check_p(p: float) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p, train):
    # PyTorch's CPU path (_dropout_impl): input * bernoulli_(1 - p) / (1 - p), so the mask takes
    # the generator's words exactly as torch's does; native_dropout stays for direct calls.
    return _dropout_impl(input, p, train, False, False)


def _dropout_impl(input, p, train, feature, alpha):
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return A.mul(input, A.zeros([], dtype=input.dtype, device=input.device))
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    else:
        shape = list(input.shape)
    noise = A["bernoulli_.float"](A.empty(shape, dtype=input.dtype, device=input.device), 1 - p)
    if alpha:
        a_const = 1.7580993408473766
        a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
        b = A.add(A.mul(A.add(noise, -1), a_const * a), a_const * a * p)
        return A.add(A.mul(input, A.mul(noise, a)), b)
    return A.mul(input, A.div(noise, 1 - p))


def feature_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, False)


def alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, False, True)


def feature_alpha_dropout(input, p, train):
    return _dropout_impl(input, p, train, True, True)


# ---- embedding ------------------------------------------------------------------------------------------
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices.dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{_type_string(indices)} instead (while checking arguments for embedding)"
        )
    if indices.dim() == 1:
        return A.index_select(weight, 0, indices)
    size = list(indices.shape) + list(weight.shape[1:])
    return A.view(A.index_select(weight, 0, A.reshape(indices, [-1])), size)


def _type_string(t: Tensor) -> str:
    dev = "" if t.device.type == "cpu" else f"{t.device.type}."
    return f"torch.{dev}{_torch_name(t.dtype)}Tensor"


# ---- activations ------------------------------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(self):
    return A.elu(self, _SELU_ALPHA, _SELU_SCALE, 1)


def celu(self, alpha=1.0):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return A.elu(self, alpha, 1.0, 1.0 / alpha)


def relu6(self):
    return A.hardtanh(self, 0, 6)


def log_sigmoid(self):
    return A.log_sigmoid_forward(self)[0]


def prelu(self, weight):
    if self.dtype is not weight.dtype:
        raise RuntimeError(
            f"prelu: Type promoting not supported. Got {_torch_name(self.dtype)} and {_torch_name(weight.dtype)}"
        )
    n = self.dim()
    if weight.numel() != 1:
        if n == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.shape[1] if n > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(
                f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {weight.numel()} "
                f"and channel size = {channels}."
            )
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    w = weight
    if n != weight.dim():
        shape = [1] * n
        if n > 1:
            shape[1] = weight.numel()
        w = A.reshape(weight, shape)
    return A._prelu_kernel(self, w)


# ---- losses -------------------------------------------------------------------------------------------------
def nll_loss(self, target, weight=None, reduction=1, ignore_index=-100):
    return A.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d(self, target, weight=None, reduction=1, ignore_index=-100):
    return A.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd(self, target, weight=None, reduction=1, ignore_index=-100):
    if self.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.dim()})")
    if self.dim() != 1 and self.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({self.shape[0]}) to match target batch_size ({target.shape[0]}).")
    if self.dim() <= 2:
        return nll_loss(self, target, weight, reduction, ignore_index)
    if self.dim() == 4:
        return nll_loss2d(self, target, weight, reduction, ignore_index)
    n, c = self.shape[0], self.shape[1]
    out_size = [n] + list(self.shape[2:])
    if list(target.shape[1:]) != list(self.shape[2:]):
        raise RuntimeError(f"Expected target size {S.fmt_sizes(out_size)}, got {S.fmt_sizes(target.shape)}")
    x = A.reshape(self, [n, c, 1, -1] if self.numel() > 0 else [n, c, 0, 0])
    t = A.reshape(target, [n, 1, -1] if target.numel() > 0 else [n, 0, 0])
    out = nll_loss2d(x, t, weight, reduction, ignore_index)
    return out if reduction != 0 else A.view(out, out_size)


def cross_entropy_loss(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    class_dim = 0 if self.dim() == 1 else 1
    if tuple(self.shape) == tuple(target.shape):
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {_torch_name(target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _ce_prob_target(self, target, weight, reduction, label_smoothing, class_dim)
    logp = A._log_softmax(self, class_dim, False)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _ce_label_smoothing(logp, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    return nll_loss_nd(logp, target, weight, reduction, ignore_index)


def _ce_prob_target(self, target, weight, reduction, label_smoothing, class_dim):
    n_classes = self.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no classes but "
            f"got weight tensor of shape: {S.fmt_sizes(weight.shape)}"
        )
    logp = A._log_softmax(self, class_dim, False)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = A["add.Scalar"](A["mul.Scalar"](target, 1 - label_smoothing), label_smoothing / n_classes)
    prod = A.mul(logp, target)
    if weight is not None:
        w = weight
        if logp.dim() > 1:
            shape = [1] * logp.dim()
            shape[1] = weight.shape[0]
            w = A.view(weight, shape)
        prod = A.mul(prod, w)
    if reduction == 1:
        total = A.neg(A.sum(prod))
        if logp.numel() == 0:
            return A["mul.Scalar"](total, math.nan)
        return A["div.Scalar"](total, logp.numel() // n_classes)
    if reduction == 2:
        return A.neg(A.sum(prod))
    return A.neg(A.sum(prod, [class_dim]))


def _ce_label_smoothing(logp, target, weight, reduction, ignore_index, label_smoothing, class_dim):
    n_classes = logp.shape[class_dim]
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    ignore_mask = A.eq(target, ignore_index)
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = weight.shape[0]
        smooth = A.neg(A.sum(A.mul(logp, A.view(weight, shape)), [class_dim]))
    else:
        smooth = A.neg(A.sum(logp, [class_dim]))
    smooth = A["masked_fill.Scalar"](smooth, ignore_mask, 0.0)
    if reduction == 1:
        if weight is not None:
            filtered = A["masked_fill.Scalar"](target, ignore_mask, 0)
            tw = A.view(A.gather(weight, 0, A.reshape(filtered, [-1])), list(filtered.shape))
            ret = A.div(A.sum(smooth), A.sum(A["masked_fill.Scalar"](tw, ignore_mask, 0)))
        else:
            ret = A.div(A.sum(smooth), A.sum(A.logical_not(ignore_mask)))
    elif reduction == 2:
        ret = A.sum(smooth)
    else:
        ret = smooth
    return A.add(A["mul.Scalar"](nll, 1 - label_smoothing), A["mul.Scalar"](ret, label_smoothing / n_classes))


def _floating_loss(kernel: str, self: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    # PyTorch's cpu kernels of these losses dispatch on the two inputs' common dtype, floating types
    # only, and compute in it (a bool input beside a float target is fine there, unlike bool - float).
    dt = D.promote_types(self.dtype, target.dtype)
    if self.device.type == "cpu" and not dt.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_torch_name(dt)}\'')
    if dt.is_floating_point and D.bool_ in (self.dtype, target.dtype):
        self, target = A._to_copy(self, dtype=dt), A._to_copy(target, dtype=dt)
    return self, target


def mse_loss(self, target, reduction=1):
    self, target = _floating_loss("mse_cpu", self, target)
    d = A.sub(self, target)
    return apply_reduction(A.mul(d, d), reduction)


def l1_loss(self, target, reduction=1):
    return apply_reduction(A.abs(A.sub(self, target)), reduction)


def smooth_l1_loss(self, target, reduction=1, beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    self, target = _floating_loss("smooth_l1_cpu", self, target)
    if beta == 0:
        return l1_loss(self, target, reduction)
    z = A.abs(A.sub(self, target))
    loss = A.where(A.lt(z, beta), A.div(A.mul(A.mul(z, z), 0.5), beta), A.sub(z, 0.5 * beta))
    return apply_reduction(loss, reduction)


def huber_loss(self, target, reduction=1, delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    from torchplug._ops.composites import check_castable

    out_dtype = self.dtype  # PyTorch's huber_loss writes into a tensor like self
    check_castable(D.promote_types(self.dtype, target.dtype), out_dtype)
    self, target = _floating_loss("huber_cpu", self, target)
    z = A.abs(A.sub(self, target))
    loss = A.where(A.lt(z, delta), A.mul(A.mul(z, z), 0.5), A.mul(A.sub(z, 0.5 * delta), delta))
    if loss.dtype is not out_dtype:
        loss = A._to_copy(loss, dtype=out_dtype)
    return apply_reduction(loss, reduction)


def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=1):
    ls = log_sigmoid(self)
    if pos_weight is not None:
        ls = A.mul(ls, A.add(A.mul(A.sub(pos_weight, 1), target), 1))
    loss = A.sub(A.mul(A.sub(1, target), self), ls)
    if weight is not None:
        loss = A.mul(loss, weight)
    return apply_reduction(loss, reduction)


def kl_div(self, target, reduction=1, log_target=False):
    if self.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (self.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = A.mul(A.exp(target), A.sub(target, self))
    else:
        out = A.sub(A["xlogy.Tensor"](target, target), A.mul(target, self))  # ATen's kl_div
    return apply_reduction(out, reduction)


# ---- attention -------------------------------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: {query.dim()} "
            f"key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if enable_gqa and query.dim() >= 3:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq != hk:
            rep = hq // hk
            key = _repeat_heads(key, rep)
            value = _repeat_heads(value, rep)
    e = query.shape[-1]
    sc = (1.0 / math.sqrt(e) if scale is None else scale)
    root = math.sqrt(sc)
    q = A.mul(query, root)
    attn = A.matmul(q, A.mul(A.transpose(key, -2, -1), root))
    l, s = query.shape[-2], key.shape[-2]
    if is_causal:
        rows = A.unsqueeze(A["arange.start_step"](0, l, 1, dtype=D.int64, device=query.device), 1)
        cols = A.unsqueeze(A["arange.start_step"](0, s, 1, dtype=D.int64, device=query.device), 0)
        attn_mask = A.ge(rows, cols)
    if attn_mask is not None:
        if attn_mask.dtype is D.bool_:  # ATen's convert_boolean_attn_mask: an additive 0 / -inf mask
            blocked = A.logical_not(attn_mask)
            attn_mask = A["masked_fill_.Scalar"](A.zeros(list(attn_mask.shape), dtype=attn.dtype, device=attn.device),
                                                 blocked, -math.inf)
        attn = A.add(attn, attn_mask)
    attn = _safe_softmax(attn)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return A.matmul(attn, value)


def _safe_softmax(x: Tensor) -> Tensor:
    return A._safe_softmax(x, -1)


def safe_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """ATen's _safe_softmax: softmax along ``dim`` with rows that are entirely -inf (fully masked attention)
    giving zeros instead of NaN."""
    x = self if dtype is None or dtype is self.dtype else A._to_copy(self, dtype=dtype)
    out = A._softmax(x, dim, False)
    masked = A.all(A.eq(self, -math.inf), [dim], True)
    return A.where(masked, A.zeros([], dtype=out.dtype, device=out.device), out)


def _repeat_heads(t: Tensor, rep: int) -> Tensor:
    shape = list(t.shape)
    h = shape[-3]
    expanded = A.expand(A.unsqueeze(t, -3), shape[:-3] + [h, rep] + shape[-2:])
    return A.reshape(expanded, shape[:-3] + [h * rep] + shape[-2:])


# ---- padding -----------------------------------------------------------------------------------------------------
def _pad_circular(self, pad):
    shape = list(self.shape)
    ndim = len(shape)
    padded = len(pad) // 2
    nonpadded = ndim - padded
    if nonpadded not in (1, 2):
        raise RuntimeError(
            "Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent to padding of "
            f"length {(ndim - 1) * 2} or {(ndim - 2) * 2} respectively but got {len(pad)}"
        )
    out_shape = shape[:nonpadded]
    for i in range(padded):
        lo, hi = pad[2 * (padded - i - 1)], pad[2 * (padded - i - 1) + 1]
        size = shape[nonpadded + i]
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if max(lo, hi) > size - max(-lo, 0) - max(-hi, 0):
            # a wrap wider than what the negative pad on the other side leaves: ATen copies overlapping
            # regions there and returns uninitialized memory; refused instead
            raise RuntimeError("Padding value causes wrapping around more than once (after the negative padding "
                               f"of dimension {nonpadded + i} crops it to {size - max(-lo, 0) - max(-hi, 0)}).")
        out_shape.append(size + lo + hi)
    if not (self._requires_grad and _grad_mode_on()):
        return _pad_circular_cat(self, pad, shape, nonpadded, padded)
    # ATen's _pad_circular, copy for copy (so autograd records its CopySlices graph): the input (cropped by
    # negative pads) into the middle of an empty output, then each dim's wrapped borders copied from the output
    # itself, last dim first (corners are written again by the later dims)
    out = self.new_empty(out_shape)  # the method: under vmap a batched self gives a batched output
    out_slice, in_slice = out, self
    for i in range(padded):
        d = padded - i + nonpadded - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = A.slice(out_slice, d, max(lo, 0), out_shape[d] - max(hi, 0))
        in_slice = A.slice(in_slice, d, max(-lo, 0), shape[d] - max(-hi, 0))
    A.copy_(out_slice, in_slice)
    for i in range(padded):
        d = padded - i + nonpadded - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            A.copy_(A.slice(out, d, 0, lo), A.slice(out, d, out_shape[d] - lo - max(hi, 0), out_shape[d] - max(hi, 0)))
        if hi > 0:
            A.copy_(A.slice(out, d, out_shape[d] - hi, out_shape[d]), A.slice(out, d, max(lo, 0), max(lo, 0) + hi))
    return out


def _pad_circular_cat(self, pad, shape, nonpadded, padded):
    # the same values without a graph to match: each dim's wrapped borders concatenated to its (cropped) core,
    # a third of the copy sequence's time
    out, fresh = self, False
    for i in range(padded):
        lo, hi = pad[2 * (padded - i - 1)], pad[2 * (padded - i - 1) + 1]
        d = nonpadded + i
        start, stop = max(-lo, 0), shape[d] - max(-hi, 0)
        core = A.slice(out, d, start, stop)
        pieces = ([A.slice(core, d, stop - start - lo, stop - start)] if lo > 0 else []) + [core]
        if hi > 0:
            pieces.append(A.slice(core, d, 0, hi))
        if len(pieces) > 1:
            out, fresh = A.cat(pieces, d), True
        else:
            out = core
    # never a view of the input (only cropped, or not padded at all): a new tensor, as ATen's
    return out if fresh else A.clone(out, memory_format="contiguous_format")


_PAD_FNS = {"reflect": "reflection", "replicate": "replication"}


def pad(self, pad, mode="constant", value=None):
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    ndim = self.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > ndim * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {ndim}"
        )
    if mode == "constant":  # (F.pad's value is a double: -1 into uint8 overflows where constant_pad_nd's wraps)
        return A.constant_pad_nd(self, pad, 0.0 if value is None else float(value))
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n in (1, 2, 3) and ndim in (n + 1, n + 2):
        if mode == "circular":
            return _pad_circular(self, pad)
        return getattr(A, f"{_PAD_FNS[mode]}_pad{n}d")(self, pad)
    raise NotImplementedError(
        f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\nSupported combinations for non-constant "
        "padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 "
        "(pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
    )


# ---- shuffles and distances -------------------------------------------------------------------------------------
def pixel_shuffle(self, upscale_factor):
    if self.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {self.dim()} dimension(s)"
        )
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = self.shape[-3:]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={c} is not divisible by {r * r}"
        )
    lead = list(self.shape[:-3])
    oc = c // (r * r)
    n = len(lead)
    x = A.reshape(self, lead + [oc, r, r, h, w])
    x = A.permute(x, list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return A.reshape(x, lead + [oc, h * r, w * r])


def pixel_unshuffle(self, downscale_factor):
    if self.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {self.dim()} dimension(s)"
        )
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = self.shape[-3:]
    if h % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not "
            f"divisible by {r}"
        )
    if w % r:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not "
            f"divisible by {r}"
        )
    lead = list(self.shape[:-3])
    n = len(lead)
    x = A.reshape(self, lead + [c, h // r, r, w // r, r])
    x = A.permute(x, list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return A.reshape(x, lead + [c * r * r, h // r, w // r])


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    common = D.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_torch_name(common)}")
    a = x1 if x1.dtype.is_floating_point or x1.dtype.is_complex else A._to_copy(x1, dtype=common)
    b = x2 if x2.dtype.is_floating_point or x2.dtype.is_complex else A._to_copy(x2, dtype=common)
    shape = S_broadcast(list(a.shape), list(b.shape))
    if list(a.shape) != list(b.shape):  # ATen's expand_outplace: both, unless the shapes are equal
        a, b = A.expand(a, shape), A.expand(b, shape)
    # ATen's cosine_similarity: the norms are cloned and clamped in place without recording, so the
    # gradient ignores the clamp (the graph: Sum(Mul(Div(x1, Clone(LinalgVectorNorm)), ...)))
    na = A.clone(A.linalg_vector_norm(a, 2, [dim], True))
    nb = A.clone(A.linalg_vector_norm(b, 2, [dim], True))
    with _no_grad():
        A.clamp_min_(na, eps)
        A.clamp_min_(nb, eps)
    return A.sum(A.mul(A.div(a, na), A.div(b, nb)), [dim])




def S_broadcast(a: list[int], b: list[int]) -> list[int]:
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
            )
        out.append(y if x == 1 else x)
    return out


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    out_dim = max(x1.dim(), x2.dim())
    inner = out_dim - 1
    return A["norm.ScalarOpt_dim"](A["add.Scalar"](A.sub(x1, x2), eps), p, [inner], keepdim)  # ATen: at::norm(x1 - x2 + eps, p, ...)


# op name -> (key, kernel): registered by the core at import, attributed to "torchplug core".
COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "linear": (_I, linear),
    **{f"conv{n}d": (_I, _conv(n)) for n in (1, 2, 3)},
    **{f"conv{n}d.padding": (_I, _conv_str(n)) for n in (1, 2, 3)},
    **{f"conv_transpose{n}d": (_I, _conv_transpose(n)) for n in (1, 2, 3)},
    "max_pool1d_with_indices": (_I, max_pool1d_with_indices),
    "max_pool1d": (_I, max_pool1d),
    "max_pool2d": (_I, max_pool2d),
    "max_pool3d": (_I, max_pool3d),
    "avg_pool1d": (_I, avg_pool1d),
    "adaptive_avg_pool2d": (_I, adaptive_avg_pool2d),
    "adaptive_avg_pool1d": (_I, adaptive_avg_pool1d),
    "adaptive_max_pool1d": (_I, adaptive_max_pool1d),
    "softmax.int": (_I, softmax),
    "log_softmax.int": (_I, log_softmax),
    "layer_norm": (_I, layer_norm),
    "batch_norm": (_I, batch_norm),
    "instance_norm": (_I, instance_norm),
    "group_norm": (_I, group_norm),
    "rms_norm": (_I, rms_norm),
    "dropout": (_I, dropout),
    "feature_dropout": (_I, feature_dropout),
    "alpha_dropout": (_I, alpha_dropout),
    "feature_alpha_dropout": (_I, feature_alpha_dropout),
    "embedding": (_E, embedding),
    "selu": (_I, selu),
    "celu": (_E, celu),
    "relu6": (_I, relu6),
    "log_sigmoid": (_I, log_sigmoid),
    "prelu": (_I, prelu),
    "nll_loss": (_I, nll_loss),
    "nll_loss2d": (_I, nll_loss2d),
    "nll_loss_nd": (_I, nll_loss_nd),
    "cross_entropy_loss": (_I, cross_entropy_loss),
    "mse_loss": (_E, mse_loss),
    "l1_loss": (_I, l1_loss),
    "smooth_l1_loss": (_E, smooth_l1_loss),
    "huber_loss": (_E, huber_loss),
    "binary_cross_entropy_with_logits": (_E, binary_cross_entropy_with_logits),
    "kl_div": (_I, kl_div),
    "scaled_dot_product_attention": (_I, scaled_dot_product_attention),
    "_safe_softmax": (_E, safe_softmax),  # one SafeSoftmaxBackward0 node, as ATen's
    "_pad_circular": (_I, _pad_circular),
    "pad": (_I, pad),
    "pixel_shuffle": (_E, pixel_shuffle),
    "pixel_unshuffle": (_E, pixel_unshuffle),
    "cosine_similarity": (_I, cosine_similarity),
    "pairwise_distance": (_I, pairwise_distance),
    "max_unpool2d": (_E, lambda self, indices, output_size: _unpool_kernel(self, indices, output_size, 2)),
    "max_unpool3d": (_E, lambda self, indices, output_size, stride, padding:
                     _unpool_kernel(self, indices, output_size, 3)),
}


def _unpool_kernel(self: Tensor, indices: Tensor, output_size: Any, n: int) -> Tensor:
    from torchplug._ops.nn_functional_more import unpool

    return unpool(self, indices, list(output_size), f"max_unpooling{n}d")
