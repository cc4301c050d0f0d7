"""The cpu device's autocast policy as plain data: PyTorch's CPU lists (``AutocastCPU``, torch 2.13).

Names are aten operator names with PyTorch's overload names; where torchplug's op table folds
several overloads into one (``prod`` / ``prod.dim_int``), the amp plugin maps the name onto the
folded op.  Names of ops no plugin defines yet stay in the table and take effect when the op
is defined.  float16 autocast on CPU uses the same lists as bfloat16, as in PyTorch.
"""

from __future__ import annotations

__all__ = ["POLICY", "LOWER_PRECISION_FP", "FP32", "FP32_SET_OPT_DTYPE", "PROMOTE", "BANNED"]

LOWER_PRECISION_FP = (
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding",
    "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm", "linear",
    "_convolution.deprecated", "matmul", "conv_tbc", "mkldnn_rnn_layer",
    "conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input", "prelu",
    "scaled_dot_product_attention", "_native_multi_head_attention",
)

FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "prod.dim_int",
    "quantile", "quantile.scalar", "nanquantile", "nanquantile.scalar", "stft", "stft.center",
    "cdist", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace",
    "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve",
    "orgqr", "ormqr", "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d",
    "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
    "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss",
    "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss",
    "triplet_margin_loss", "multi_margin_loss", "ctc_loss.IntList", "ctc_loss.Tensor", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits",
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
    "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
    "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank", "linalg_matrix_rank.tol_tensor",
    "linalg_matrix_rank.atol_rtol_tensor", "linalg_matrix_rank.atol_rtol_float", "linalg_solve",
    "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve",
    "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve",
    "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d",
    "multilabel_margin_loss_forward", "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig",
    "linalg_eigh", "linalg_lstsq", "linalg_inv_ex",
)

# PyTorch's CPU policy has no fp32_set_opt_dtype ops (sum/softmax run in their input dtype).
FP32_SET_OPT_DTYPE: tuple[str, ...] = ()

PROMOTE = ("stack", "cat", "index_copy")

# Unlike CUDA, CPU autocast allows binary_cross_entropy (it runs in float32).
BANNED: dict[str, str] = {}

POLICY = {
    "default_dtype": "bfloat16",
    "supported_dtypes": ("bfloat16", "float16"),
    "lower_precision_fp": LOWER_PRECISION_FP,
    "fp32": FP32,
    "fp32_set_opt_dtype": FP32_SET_OPT_DTYPE,
    "promote": PROMOTE,
    "banned": BANNED,
}
