"""Neural-network rows: convolution, pooling, softmax, normalization, dropout, embedding, activations,
losses, attention, padding, upsampling, unfold/fold, and the backward ops autograd formulas call."""

from __future__ import annotations

__all__ = ["ROWS"]

_CONV_ARGS = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, SymInt[{n}] padding=0, SymInt[{n}] dilation=1, SymInt groups=1"
_CONV_STR = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, str padding=\"valid\", SymInt[{n}] dilation=1, SymInt groups=1"
_CONVT_ARGS = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, SymInt[{n}] padding=0, SymInt[{n}] output_padding=0, SymInt groups=1, SymInt[{n}] dilation=1"
_MAXPOOL = "Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, int[{n}] dilation=1, bool ceil_mode=False"
_MAXPOOL_BW = "Tensor grad_output, Tensor self, int[{n}] kernel_size, int[{n}] stride, int[{n}] padding, int[{n}] dilation, bool ceil_mode, Tensor indices"
_AVGPOOL = "Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None"
_AVGPOOL_BW = "Tensor grad_output, Tensor self, int[{n}] kernel_size, int[{n}] stride, int[{n}] padding, bool ceil_mode, bool count_include_pad, int? divisor_override"
_LOSS = "Tensor self, Tensor target, int reduction=Mean"
_NLL = "Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100"
_NLL_FW = "Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index"
_NLL_BW = "Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight"
_NORM3 = "(Tensor, Tensor, Tensor)"
_SCALES = {1: "float? scales=None", 2: "float? scales_h=None, float? scales_w=None", 3: "float? scales_d=None, float? scales_h=None, float? scales_w=None"}

ROWS = (
    # ---- linear / convolution ---------------------------------------------------------------------
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor | composite",
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    *(f"conv{n}d({_CONV_ARGS.format(n=n)}) -> Tensor | composite" for n in (1, 2, 3)),
    *(f"conv{n}d.padding({_CONV_STR.format(n=n)}) -> Tensor | composite" for n in (1, 2, 3)),
    *(f"conv_transpose{n}d({_CONVT_ARGS.format(n=n)}) -> Tensor | composite" for n in (1, 2, 3)),
    "im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
    "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
    # ---- pooling ------------------------------------------------------------------------------------
    *(f"max_pool{n}d_with_indices({_MAXPOOL.format(n=n)}) -> (Tensor, Tensor)" for n in (2, 3)),
    *(f"max_pool{n}d_with_indices_backward({_MAXPOOL_BW.format(n=n)}) -> Tensor" for n in (2, 3)),
    "max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor) | composite",
    *(f"max_pool{n}d({_MAXPOOL.format(n=n)}) -> Tensor | composite" for n in (1, 2, 3)),
    *(f"avg_pool{n}d({_AVGPOOL.format(n=n)}) -> Tensor" for n in (2, 3)),
    *(f"avg_pool{n}d_backward({_AVGPOOL_BW.format(n=n)}) -> Tensor" for n in (2, 3)),
    "avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor | composite",
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
    "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor | composite",
    "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor | composite",
    "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
    "adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
    "adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor) | composite",
    # ---- softmax ------------------------------------------------------------------------------------
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    # scaled_dot_product_attention's softmax: rows entirely -inf give zeros, not NaN (SafeSoftmaxBackward0)
    "_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor | composite",
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor | composite",
    "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor | composite",
    # ---- normalization -------------------------------------------------------------------------------
    f"native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> {_NORM3}",
    f"native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> {_NORM3}",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor | composite",
    # Like PyTorch, the running stats are updated in place without a version bump (not annotated).
    f"native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> {_NORM3}",
    f"native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> {_NORM3}",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor | composite",
    "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor | composite",
    f"native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> {_NORM3}",
    f"native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> {_NORM3}",
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor | composite",
    "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor | composite",
    # ---- dropout -------------------------------------------------------------------------------------
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor) | random",
    "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
    "dropout(Tensor input, float p, bool train) -> Tensor | inplace composite random",
    "feature_dropout(Tensor input, float p, bool train) -> Tensor | inplace composite random",
    "alpha_dropout(Tensor input, float p, bool train) -> Tensor | inplace composite random",
    "feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor | inplace composite random",
    # ---- embedding -----------------------------------------------------------------------------------
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor | composite",
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor",
    "embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)",
    "one_hot(Tensor self, int num_classes=-1) -> Tensor",
    # ---- activations -----------------------------------------------------------------------------------
    "gelu(Tensor self, *, str approximate=\"none\") -> Tensor | inplace pointwise",
    "gelu_backward(Tensor grad_output, Tensor self, *, str approximate=\"none\") -> Tensor | pointwise",
    "silu(Tensor self) -> Tensor | inplace pointwise",
    "silu_backward(Tensor grad_output, Tensor self) -> Tensor | pointwise",
    "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor | inplace pointwise",
    "elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor | pointwise",
    "selu(Tensor self) -> Tensor | inplace composite",
    "celu(Tensor self, Scalar alpha=1.0) -> Tensor | inplace composite",
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor | inplace pointwise",
    "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor | pointwise",
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor | inplace pointwise",
    "hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor | pointwise",
    "relu6(Tensor self) -> Tensor | inplace composite",
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor | pointwise",
    "softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor | pointwise",
    "mish(Tensor self) -> Tensor | inplace pointwise",
    "mish_backward(Tensor grad_output, Tensor self) -> Tensor | pointwise",
    "hardswish(Tensor self) -> Tensor | inplace pointwise",
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor | pointwise",
    "hardsigmoid(Tensor self) -> Tensor | inplace pointwise",
    "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor | pointwise",
    "log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer) | pointwise",
    "log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor | pointwise",
    "log_sigmoid(Tensor self) -> Tensor | composite",
    "threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor | inplace pointwise",
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor | pointwise",
    "hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor | pointwise",
    "hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor | pointwise",
    "softshrink(Tensor self, Scalar lambd=0.5) -> Tensor | pointwise",
    "softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor | pointwise",
    "prelu(Tensor self, Tensor weight) -> Tensor | composite",
    "_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
    "_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)",
    "glu(Tensor self, int dim=-1) -> Tensor",
    "glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor",
    # ---- losses ----------------------------------------------------------------------------------------
    f"nll_loss_forward({_NLL_FW}) -> (Tensor output, Tensor total_weight)",
    f"nll_loss_backward({_NLL_BW}) -> Tensor",
    f"nll_loss2d_forward({_NLL_FW}) -> (Tensor output, Tensor total_weight)",
    f"nll_loss2d_backward({_NLL_BW}) -> Tensor",
    f"nll_loss({_NLL}) -> Tensor | composite",
    f"nll_loss2d({_NLL}) -> Tensor | composite",
    f"nll_loss_nd({_NLL}) -> Tensor | composite",
    f"cross_entropy_loss({_NLL}, float label_smoothing=0.0) -> Tensor | composite",
    f"mse_loss({_LOSS}) -> Tensor | composite",
    f"l1_loss({_LOSS}) -> Tensor | composite",
    f"smooth_l1_loss({_LOSS}, float beta=1.0) -> Tensor | composite",
    f"huber_loss({_LOSS}, float delta=1.0) -> Tensor | composite",
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor",
    "binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor",
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=Mean) -> Tensor | composite",
    f"kl_div({_LOSS}, *, bool log_target=False) -> Tensor | composite",
    # ---- attention -------------------------------------------------------------------------------------
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor | composite",
    # ---- padding ---------------------------------------------------------------------------------------
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    *(f"{mode}_pad{n}d(Tensor self, SymInt[{2 * n}] padding) -> Tensor" for mode in ("reflection", "replication") for n in (1, 2, 3)),
    *(f"{mode}_pad{n}d_backward(Tensor grad_output, Tensor self, SymInt[{2 * n}] padding) -> Tensor"
      for mode in ("reflection", "replication") for n in (1, 2, 3)),
    "_pad_circular(Tensor self, SymInt[] pad) -> Tensor | composite",
    "pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor | composite",
    # ---- upsampling ------------------------------------------------------------------------------------
    *(f"upsample_nearest{n}d(Tensor self, SymInt[{n}] output_size, {_SCALES[n]}) -> Tensor" for n in (1, 2, 3)),
    *(f"_upsample_nearest_exact{n}d(Tensor self, SymInt[{n}] output_size, {_SCALES[n]}) -> Tensor" for n in (1, 2, 3)),
    *(f"upsample_nearest{n}d_backward(Tensor grad_output, SymInt[{n}] output_size, SymInt[{n + 2}] input_size, {_SCALES[n]}) -> Tensor" for n in (1, 2, 3)),
    *(f"_upsample_nearest_exact{n}d_backward(Tensor grad_output, SymInt[{n}] output_size, SymInt[{n + 2}] input_size, {_SCALES[n]}) -> Tensor" for n in (1, 2, 3)),
    *(f"upsample_{m}{n}d(Tensor self, SymInt[{n}] output_size, bool align_corners, {_SCALES[n]}) -> Tensor"
      for n, m in ((1, "linear"), (2, "bilinear"), (3, "trilinear"))),
    *(f"upsample_{m}{n}d_backward(Tensor grad_output, SymInt[{n}] output_size, SymInt[{n + 2}] input_size, bool align_corners, {_SCALES[n]}) -> Tensor"
      for n, m in ((1, "linear"), (2, "bilinear"), (3, "trilinear"))),
    # ---- shuffles and distances ------------------------------------------------------------------------
    "pixel_shuffle(Tensor self, int upscale_factor) -> Tensor | composite",
    "pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor | composite",
    "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor | composite",
    "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor | composite",
    # F.max_unpool1d/2d/3d's ops (1d through max_unpool2d): one MaxUnpool2DBackward0/3DBackward0 node, as ATen's
    "max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor | composite",
    "max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, int[3] padding) -> Tensor"
    " | composite",
)
