"""The mps device's autocast policy as plain data: PyTorch's ``AutocastMPS`` lists (torch 2.13), float16.

PyTorch has no documented MPS autocast table; these are the lists its ``AutocastMPS`` key
registers (the GPU-style shared lists: lower-precision matmul/conv, float32 for
transcendental functions, norms and losses, float32 output dtype for reductions, widest type
for mixed-input ops).  Names are aten names with PyTorch's overload names; the amp plugin maps
them onto torchplug's folded overloads and picks up ops defined later.
"""

from __future__ import annotations

__all__ = ["POLICY", "LOWER_PRECISION_FP", "FP32", "FP32_SET_OPT_DTYPE", "PROMOTE", "BANNED"]

LOWER_PRECISION_FP = (
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc",
    "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "convolution",
    "_mps_convolution", "prelu", "addmm", "addmv", "addr", "matmul", "einsum", "mm", "mv", "linear",
    "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "lstm_cell",
    "scaled_dot_product_attention",
)

FP32 = (
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal",
    "rsqrt", "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus",
    "layer_norm", "native_layer_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm",
    "nuclear_norm.dim", "batch_norm", "cosine_similarity", "poisson_nll_loss",
    "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss", "kl_div", "l1_loss",
    "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
    "dist", "pdist", "cdist", "renorm", "logsumexp",
)

# Reductions whose output dtype becomes float32 (an explicit dtype= is respected).
FP32_SET_OPT_DTYPE = (
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum",
    "linalg_vector_norm", "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList",
)

PROMOTE = (
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sampler", "index_put",
    "tensordot", "scatter_add",
)

BANNED: dict[str, str] = {}

POLICY = {
    "default_dtype": "float16",
    "supported_dtypes": ("bfloat16", "float16"),
    "lower_precision_fp": LOWER_PRECISION_FP,
    "fp32": FP32,
    "fp32_set_opt_dtype": FP32_SET_OPT_DTYPE,
    "promote": PROMOTE,
    "banned": BANNED,
}
