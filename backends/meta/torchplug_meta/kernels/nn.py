"""meta kernels for the nn ops: output shapes and dtypes (contiguous), with the cpu backend's checks.

Shape rules and messages come from ``torchplug._ops.nn_shapes`` (shared with the cpu kernels).
Checks that need data (target ranges, BCE input range, one_hot without num_classes) cannot run.
"""

from __future__ import annotations

import math

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_FLOATING = (D.float16, D.bfloat16, D.float32, D.float64)
_HALF = (D.float16, D.bfloat16)
_INTEGRAL = (D.uint8, D.int8, D.int16, D.int32, D.int64)


def _nie(name: str, dt) -> NotImplementedError:
    return NotImplementedError(f'"{name}" not implemented for \'{C.scalar_type_name(dt)}\'')


def _floating(name: str, dt) -> None:
    if dt not in _FLOATING:
        raise _nie(name, dt)


def _like(t, dtype=None):
    return C.new(C.shape(t), dtype or t._dtype)


def _param_dtype(input, *params):
    dt = input._dtype
    if dt in _HALF:
        for p in params:
            if p is not None and p._dtype is D.float32:
                return D.float32
    return dt


# ---- convolution ---------------------------------------------------------------------------------------------------
def _type_str(t) -> str:
    return f"torch.{C.scalar_type_name(t._dtype)}Tensor"


def _conv_check(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    params = S.check_conv(C.shape(input), C.shape(weight), None if bias is None else C.shape(bias), stride, padding,
                          dilation, transposed, output_padding, groups, _type_str(input), _type_str(weight),
                          None if bias is None else _type_str(bias))
    if input._dtype not in _FLOATING and input._dtype not in _INTEGRAL:
        nd = len(C.shape(weight)) - 2
        name = "slow_conv3d_cpu" if nd == 3 else "slow_conv2d_cpu"
        if transposed:
            name = "slow_conv_transpose3d_out_cpu" if nd == 3 else "slow_conv_transpose2d_out_cpu"
        raise _nie(name, input._dtype)
    return params


@TABLE.impl("aten::convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    stride, padding, dilation, output_padding = _conv_check(input, weight, bias, stride, padding, dilation, transposed,
                                                            output_padding, groups)
    if transposed:
        shape = S.conv_transpose_output_size(C.shape(input), C.shape(weight), stride, padding, dilation,
                                             output_padding, groups)
    else:
        shape = S.conv_output_size(C.shape(input), C.shape(weight), stride, padding, dilation)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {S.fmt_sizes(shape)}")
    return C.new(shape, input._dtype)


@TABLE.impl("aten::convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    _conv_check(input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    gi = _like(input) if output_mask[0] else None
    gw = _like(weight) if output_mask[1] else None
    gb = None
    if output_mask[2]:
        n = C.shape(grad_output)[1]
        gb = C.new((n,) if bias_sizes is None else tuple(bias_sizes), input._dtype)
    return gi, gw, gb


@TABLE.impl("aten::im2col")
def im2col(self, kernel_size, dilation, padding, stride):
    return C.new(S.im2col_check(C.shape(self), tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride)),
                 self._dtype)


@TABLE.impl("aten::col2im")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    return C.new(S.col2im_check(C.shape(self), tuple(output_size), tuple(kernel_size), tuple(dilation),
                                tuple(padding), tuple(stride)), self._dtype)


# ---- pooling -------------------------------------------------------------------------------------------------------------
def _max_pool(dims, self, kernel_size, stride, padding, dilation, ceil_mode):
    name = f"max_pool{dims}d"
    *_, out = S.check_max_pool(name, C.shape(self), dims, kernel_size, stride, padding, dilation, ceil_mode)
    if self._dtype is D.bool_ or self._dtype in (D.complex64, D.complex128):
        raise _nie(name, self._dtype)
    return C.new(out, self._dtype), C.new(out, D.int64)


@TABLE.impl("aten::max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _max_pool(2, self, kernel_size, stride, padding, dilation, ceil_mode)


@TABLE.impl("aten::max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _max_pool(3, self, kernel_size, stride, padding, dilation, ceil_mode)


@TABLE.impl("aten::max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _like(self)


@TABLE.impl("aten::max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _like(self)


def _avg_pool(dims, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    *_, out = S.check_avg_pool(f"avg_pool{dims}d", C.shape(self), dims, kernel_size, stride, padding, ceil_mode,
                               divisor_override)
    if self._dtype is D.bool_ or self._dtype in (D.complex64, D.complex128):
        raise _nie(f"avg_pool{dims}d" if dims == 3 else "avg_pool2d_out_frame", self._dtype)
    return C.new(out, self._dtype)


@TABLE.impl("aten::avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(2, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@TABLE.impl("aten::avg_pool3d")
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(3, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@TABLE.impl("aten::avg_pool2d_backward")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _like(self)


@TABLE.impl("aten::avg_pool3d_backward")
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _like(self)


@TABLE.impl("aten::_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    out = S.adaptive_check("adaptive_avg_pool2d", C.shape(self), output_size, 2)
    _floating("adaptive_avg_pool2d", self._dtype)
    return C.new(out, self._dtype)


@TABLE.impl("aten::_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward(grad_output, self):
    _floating("adaptive_avg_pool2d_backward_cpu", self._dtype)
    return _like(self)


@TABLE.impl("aten::adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    out = S.adaptive_check("adaptive_max_pool2d", C.shape(self), output_size, 2)
    _floating("adaptive_max_pool2d", self._dtype)
    return C.new(out, self._dtype), C.new(out, D.int64)


@TABLE.impl("aten::adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    _floating("adaptive_max_pool2d_backward", self._dtype)
    return _like(self)


# ---- softmax -----------------------------------------------------------------------------------------------------------
def _softmax(name, self, dim, half_to_float):
    if half_to_float:
        raise RuntimeError(f"{name} with half to float conversion is not supported on CPU")
    nd = len(C.shape(self))
    d = S.wrap_dim(dim, nd)
    if self._dtype not in _FLOATING:
        last = nd == 0 or d == nd - 1
        raise _nie(f"{name}_{'lastdim_' if last else ''}kernel_impl", self._dtype)
    return _like(self)


@TABLE.impl("aten::_softmax")
def _softmax_(self, dim, half_to_float):
    return _softmax("softmax", self, dim, half_to_float)


@TABLE.impl("aten::_log_softmax")
def _log_softmax(self, dim, half_to_float):
    return _softmax("log_softmax", self, dim, half_to_float)


@TABLE.impl("aten::_softmax_backward_data")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    S.wrap_dim(dim, len(C.shape(output)))
    return C.new(C.shape(grad_output), input_dtype)


@TABLE.impl("aten::_log_softmax_backward_data")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    S.wrap_dim(dim, len(C.shape(output)))
    return C.new(C.shape(grad_output), input_dtype)


# ---- normalization -------------------------------------------------------------------------------------------------------
@TABLE.impl("aten::native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    shape = C.shape(input)
    axis = S.layer_norm_check(shape, normalized_shape, None if weight is None else C.shape(weight),
                              None if bias is None else C.shape(bias))
    _floating("LayerNormKernelImpl", input._dtype)
    pdt = _param_dtype(input, weight, bias)
    stat = shape[:axis] + (1,) * (len(shape) - axis)
    return C.new(shape, input._dtype), C.new(stat, pdt), C.new(stat, pdt)


@TABLE.impl("aten::native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    return (_like(input) if output_mask[0] else None,
            _like(weight) if output_mask[1] and weight is not None else None,
            _like(bias) if output_mask[2] and bias is not None else None)


@TABLE.impl("aten::native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _floating("batch_norm", input._dtype)
    shape = C.shape(input)
    if len(shape) < 2:
        raise RuntimeError(f"batch_norm: Expected at least 2 dimensions for input, got {len(shape)}")
    c = shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    pdt = _param_dtype(input, weight, bias, running_mean, running_var)
    # torch's meta function reports (C,) statistics even in eval mode, where its cpu kernel returns (0,)
    return C.new(shape, input._dtype), C.new((c,), pdt), C.new((c,), pdt)


@TABLE.impl("aten::native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    c = C.shape(input)[1]
    pdt = weight._dtype if weight is not None else _param_dtype(input, running_mean)
    return (_like(input) if output_mask[0] else None,
            C.new((c,), pdt) if output_mask[1] else None,
            C.new((c,), pdt) if output_mask[2] else None)


@TABLE.impl("aten::native_group_norm")
def native_group_norm(input, weight, bias, N, C_, HxW, group, eps):
    _floating("GroupNormKernelImpl", input._dtype)
    shape = C.shape(input)
    if math.prod(shape) != N * C_ * HxW:
        raise RuntimeError(f"Expected X.numel() == N * C * HxW to be true, but got X.numel() = {math.prod(shape)}, "
                           f"N = {N}, C = {C_}, HxW = {HxW}")
    if group <= 0 or C_ % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {S.fmt_sizes(shape)} and num_groups={group}")
    pdt = _param_dtype(input, weight, bias)
    return C.new(shape, input._dtype), C.new((N, group), pdt), C.new((N, group), pdt)


@TABLE.impl("aten::native_group_norm_backward")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C_, HxW, group, output_mask):
    pdt = weight._dtype if weight is not None else _param_dtype(input)
    return (_like(input) if output_mask[0] else None,
            C.new((C_,), pdt) if output_mask[1] and weight is not None else None,
            C.new((C_,), pdt) if output_mask[2] else None)


# ---- dropout / embedding ---------------------------------------------------------------------------------------------------
@TABLE.impl("aten::native_dropout")
def native_dropout(input, p, train):
    return _like(input), _like(input, D.bool_)


@TABLE.impl("aten::native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    return _like(grad_output)


@TABLE.impl("aten::embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    shape = C.shape(grad_output)
    return C.new((num_weights, shape[-1] if shape else 1), grad_output._dtype)


@TABLE.impl("aten::embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    if len(C.shape(self)) != 2:
        raise RuntimeError(f"embedding_renorm_(): expected self to be 2D, but got {len(C.shape(self))}D")
    return self


@TABLE.impl("aten::one_hot")
def one_hot(self, num_classes=-1):
    if self._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from meta tensor.")
    return C.new(C.shape(self) + (num_classes,), D.int64)


# ---- activations -----------------------------------------------------------------------------------------------------------
def _unary(name, ints=False):
    def kernel(self, *args):
        dt = self._dtype
        if dt not in _FLOATING and not (ints and dt in _INTEGRAL):
            raise _nie(name, dt)
        return C.new_like(self)  # pointwise: the input's layout, like torch's meta

    return kernel


def _binary(name):
    def kernel(grad, self, *args):
        dt = C.result_dtype(grad, self)
        if dt not in _FLOATING:
            raise _nie(name, dt)
        shape = C.broadcast_shapes(C.shape(grad), C.shape(self))
        return C.new(shape, dt, C.elementwise_strides(shape, [grad, self]))

    return kernel


for _name, _kname in (("silu", "silu_cpu"), ("mish", "mish_cpu"), ("elu", "elu_cpu"),
                      ("leaky_relu", "leaky_relu_cpu"), ("softplus", "softplus_cpu"), ("hardswish", "hardswish_cpu"),
                      ("hardsigmoid", "hardsigmoid_cpu"), ("hardshrink", "hardshrink_cpu")):
    TABLE.impl(f"aten::{_name}")(_unary(_kname))
for _name in ("gelu", "silu", "mish", "leaky_relu", "softplus", "hardswish", "hardsigmoid", "log_sigmoid"):
    TABLE.impl(f"aten::{_name}_backward")(_binary(f"{_name}_backward_cpu"))
TABLE.impl("aten::hardshrink_backward")(_binary("hardshrink_backward_cpu"))
TABLE.impl("aten::softshrink_backward")(_binary("softshrink_backward_cpu"))
TABLE.impl("aten::hardtanh_backward")(_binary("hardtanh_backward_cpu"))


@TABLE.impl("aten::gelu")
def gelu(self, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _unary("GeluKernelImpl")(self)


@TABLE.impl("aten::elu_backward")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    return _binary("elu_backward_cpu")(grad_output, self_or_result)


@TABLE.impl("aten::softshrink")
def softshrink(self, lambd=0.5):
    if self._dtype not in _FLOATING:
        raise _nie("softshrink_check", self._dtype)
    name, top = {"float32": ("Float", 3.4028234663852886e38), "float64": ("Double", 1.7976931348623157e308),
                 "float16": ("Half", 65504.0), "bfloat16": ("BFloat16", 3.3895313892515355e38)}[self._dtype.name]
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {name}, but found {lambd:g}")
    return _unary("softshrink_cpu")(self)  # elementwise output strides, like torch's meta


@TABLE.impl("aten::hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    if self._dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    return _unary("hardtanh_cpu", ints=True)(self)


@TABLE.impl("aten::threshold")
def threshold(self, threshold, value):
    if self._dtype is D.bool_ or self._dtype in (D.complex64, D.complex128):
        raise _nie("threshold_cpu", self._dtype)
    return C.new_like(self)


@TABLE.impl("aten::threshold_backward")
def threshold_backward(grad_output, self, threshold):
    dt = C.result_dtype(grad_output, self)
    if dt is D.bool_:
        raise _nie("threshold_cpu", dt)
    return C.new(C.broadcast_shapes(C.shape(grad_output), C.shape(self)), dt)


@TABLE.impl("aten::log_sigmoid_forward")
def log_sigmoid_forward(self):
    _floating("log_sigmoid_cpu", self._dtype)
    return C.new_like(self), C.new_like(self)


@TABLE.impl("aten::_prelu_kernel")
def _prelu_kernel(self, weight):
    dt = C.result_dtype(self, weight)
    _floating("prelu_cpu", dt)
    return C.new(C.broadcast_shapes(C.shape(self), C.shape(weight)), dt)


@TABLE.impl("aten::_prelu_kernel_backward")
def _prelu_kernel_backward(grad_output, self, weight):
    _floating("prelu_backward_cpu", C.result_dtype(grad_output, self, weight))
    shape = C.broadcast_shapes(C.shape(self), C.shape(weight))
    # like PyTorch, grad_weight keeps the broadcast shape: autograd sums it to weight's shape
    return C.new(shape, self._dtype), C.new(shape, weight._dtype)


def _glu_shape(self, dim):
    shape = C.shape(self)
    if not shape:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = S.wrap_dim(dim, len(shape))
    if shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {shape[d]}")
    return shape[:d] + (shape[d] // 2,) + shape[d + 1:]


@TABLE.impl("aten::glu")
def glu(self, dim=-1):
    out = _glu_shape(self, dim)
    _floating("glu_cpu", self._dtype)
    return C.new(out, self._dtype)


@TABLE.impl("aten::glu_backward")
def glu_backward(grad_output, self, dim):
    _glu_shape(self, dim)
    _floating("glu_backward_cpu", self._dtype)
    return _like(self)


# ---- losses ----------------------------------------------------------------------------------------------------------------------
def _nll(name, self, target, weight, reduction):
    shape, t_shape = C.shape(self), C.shape(target)
    if name == "nll_loss":
        if not 1 <= len(shape) <= 2:
            raise RuntimeError("input tensor should be 1D or 2D")
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        no_batch = len(shape) == 1 and len(t_shape) == 0
        if not no_batch and (len(t_shape) == 0 or shape[0] != t_shape[0]):
            raise RuntimeError(f"size mismatch (got input: {S.fmt_sizes(shape)}, target: {S.fmt_sizes(t_shape)})")
        classes = shape[-1]
        if weight is not None and (len(C.shape(weight)) != 1 or weight.numel() != classes):
            raise RuntimeError(
                f"weight tensor should be defined either for all {classes} classes or no classes but got weight "
                f"tensor of shape: {S.fmt_sizes(C.shape(weight))}"
            )
        unreduced = shape[:1] if len(shape) == 2 else ()
    else:
        if len(t_shape) != 3:
            raise RuntimeError(
                f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {len(t_shape)}"
            )
        if len(shape) != 4:
            raise RuntimeError(
                f"only batches of spatial inputs supported (4D tensors), but got input of dimension: {len(shape)}"
            )
        if weight is not None and weight.numel() != shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if shape[0] != t_shape[0] or shape[2] != t_shape[1] or shape[3] != t_shape[2]:
            raise RuntimeError(f"size mismatch (got input: {S.fmt_sizes(shape)} , target: {S.fmt_sizes(t_shape)}")
        unreduced = t_shape
    if target._dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {C.scalar_type_name(target._dtype)}")
    _floating(f"{name}_out_frame", self._dtype)
    out = unreduced if reduction == 0 else ()
    return C.new(out, self._dtype), C.new((), self._dtype)


@TABLE.impl("aten::nll_loss_forward")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    return _nll("nll_loss", self, target, weight, reduction)


@TABLE.impl("aten::nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return _nll("nll_loss2d", self, target, weight, reduction)


@TABLE.impl("aten::nll_loss_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _like(self)


@TABLE.impl("aten::nll_loss2d_backward")
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _like(self)


@TABLE.impl("aten::binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=1):
    dt = C.result_dtype(self, target)
    _floating("binary_cross_entropy", dt)
    return C.new(C.shape(self) if reduction == 0 else (), dt)


@TABLE.impl("aten::binary_cross_entropy_backward")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=1):
    dt = C.result_dtype(self, target)
    _floating("binary_cross_entropy_backward", dt)
    return C.new(C.shape(self), dt)


# ---- padding / upsampling ------------------------------------------------------------------------------------------------------------
@TABLE.impl("aten::constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    return C.new(S.constant_pad_shape(C.shape(self), pad), self._dtype)


def _register_pads() -> None:
    for mode, name in (("reflect", "reflection"), ("replicate", "replication")):
        for dims in (1, 2, 3):
            def fw(self, padding, _m=mode, _d=dims, _n=name):
                out = S.pad_check(_m, C.shape(self), padding, _d)
                if _m == "reflect" and self._dtype is D.bool_:
                    raise _nie(f"{_n}_pad{_d}d", self._dtype)
                return C.new(out, self._dtype)

            def bw(grad_output, self, padding, _m=mode, _d=dims):
                S.pad_check(_m, C.shape(self), padding, _d)
                return C.new(C.shape(self), grad_output._dtype)

            TABLE.impl(f"aten::{name}_pad{dims}d")(fw)
            TABLE.impl(f"aten::{name}_pad{dims}d_backward")(bw)


_register_pads()


def _register_upsample() -> None:
    for dims in (1, 2, 3):
        linear = ["upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"][dims - 1]
        for prefix in ("upsample_nearest", "_upsample_nearest_exact"):
            def fw(self, output_size, *scales, _d=dims):
                return C.new(S.upsample_check(C.shape(self), output_size, _d), self._dtype)

            def bw(grad_output, output_size, input_size, *scales, _d=dims):
                return C.new(tuple(input_size), grad_output._dtype)

            TABLE.impl(f"aten::{prefix}{dims}d")(fw)
            TABLE.impl(f"aten::{prefix}{dims}d_backward")(bw)

        def lfw(self, output_size, align_corners, *scales, _d=dims, _n=linear):
            out = S.upsample_check(C.shape(self), output_size, _d)
            _floating("upsample_bilinear2d_channels_last" if _d == 2 else "compute_indices_weights_linear",
                      self._dtype)
            return C.new(out, self._dtype)

        def lbw(grad_output, output_size, input_size, align_corners, *scales):
            return C.new(tuple(input_size), grad_output._dtype)

        TABLE.impl(f"aten::{linear}")(lfw)
        TABLE.impl(f"aten::{linear}_backward")(lbw)


_register_upsample()
