"""The cuda autocast policy against PyTorch's documented CUDA lists (AMP docs, torch 2.13).

The documentation names user-facing functions; the policy holds the aten ops they reach
(``__matmul__`` -> ``matmul``, ``softmin`` -> ``softmax.int``...).  Every documented name must
be covered, with the same effect: lower precision, float32 (inputs cast or output dtype set)
or promotion.  Runs without a GPU; the dtypes on a device are checked in test_emulated/test_gpu.
"""

from __future__ import annotations

import pytest

from torchplug_cuda import autocast_policy as P

# "CUDA Ops that can autocast to float16" (user-facing name -> aten op)
DOC_FP16 = {
    "__matmul__": "matmul", "addbmm": "addbmm", "addmm": "addmm", "addmv": "addmv", "addr": "addr",
    "baddbmm": "baddbmm", "bmm": "bmm", "chain_matmul": "chain_matmul", "multi_dot": "linalg_multi_dot",
    "conv1d": "conv1d", "conv2d": "conv2d", "conv3d": "conv3d", "conv_transpose1d": "conv_transpose1d",
    "conv_transpose2d": "conv_transpose2d.input", "conv_transpose3d": "conv_transpose3d.input",
    "GRUCell": "gru_cell", "linear": "linear", "LSTMCell": "lstm_cell", "matmul": "matmul", "mm": "mm",
    "mv": "mv", "prelu": "prelu", "RNNCell": "rnn_tanh_cell",
}
# "CUDA Ops that can autocast to float32"
DOC_FP32 = {
    "__pow__": "pow.Tensor_Scalar", "__rdiv__": "reciprocal", "__rpow__": "pow.Scalar", "__rtruediv__": "reciprocal",
    "acos": "acos", "asin": "asin", "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits",
    "cosh": "cosh", "cosine_embedding_loss": "cosine_embedding_loss", "cdist": "cdist",
    "cosine_similarity": "cosine_similarity", "cross_entropy": "nll_loss", "cumprod": "cumprod", "cumsum": "cumsum",
    "dist": "dist", "erfinv": "erfinv", "exp": "exp", "expm1": "expm1", "group_norm": "group_norm",
    "hinge_embedding_loss": "hinge_embedding_loss", "kl_div": "kl_div", "l1_loss": "l1_loss",
    "layer_norm": "layer_norm", "log": "log", "log_softmax": "log_softmax.int", "log10": "log10", "log1p": "log1p",
    "log2": "log2", "margin_ranking_loss": "margin_ranking_loss", "mse_loss": "mse_loss",
    "multilabel_margin_loss": "multilabel_margin_loss", "multi_margin_loss": "multi_margin_loss",
    "nll_loss": "nll_loss", "norm": "norm.Scalar", "normalize": "linalg_vector_norm", "pdist": "pdist",
    "poisson_nll_loss": "poisson_nll_loss", "pow": "pow.Tensor_Tensor", "prod": "prod", "reciprocal": "reciprocal",
    "rsqrt": "rsqrt", "sinh": "sinh", "smooth_l1_loss": "smooth_l1_loss", "soft_margin_loss": "soft_margin_loss",
    "softmax": "softmax.int", "softmin": "softmax.int", "softplus": "softplus", "sum": "sum", "renorm": "renorm",
    "tan": "tan", "triplet_margin_loss": "triplet_margin_loss",
}
# "CUDA Ops that promote to the widest input type"
DOC_PROMOTE = {
    "addcdiv": "addcdiv", "addcmul": "addcmul", "atan2": "atan2", "bilinear": "bilinear", "cross": "cross",
    "dot": "dot", "grid_sample": "grid_sampler", "index_put": "index_put", "scatter_add": "scatter_add",
    "tensordot": "tensordot",
}


@pytest.mark.parametrize("doc, aten", sorted(DOC_FP16.items()))
def test_documented_float16_ops(doc, aten):
    assert aten in P.LOWER_PRECISION_FP


@pytest.mark.parametrize("doc, aten", sorted(DOC_FP32.items()))
def test_documented_float32_ops(doc, aten):
    assert aten in P.FP32 or aten in P.FP32_SET_OPT_DTYPE


@pytest.mark.parametrize("doc, aten", sorted(DOC_PROMOTE.items()))
def test_documented_promote_ops(doc, aten):
    assert aten in P.PROMOTE


def test_lists_are_disjoint_and_bce_is_banned():
    groups = [set(P.LOWER_PRECISION_FP), set(P.FP32), set(P.FP32_SET_OPT_DTYPE), set(P.PROMOTE)]
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            assert not a & b, a & b
    assert "binary_cross_entropy" in P.BANNED and "unsafe to autocast" in P.BANNED["binary_cross_entropy"]
    assert P.POLICY["default_dtype"] == "float16"


def test_the_amp_plugin_accepts_the_policy():
    amp_policy = pytest.importorskip("torchplug_amp.policy")
    policy = amp_policy.AutocastPolicy.from_data(P.POLICY, "cuda")
    assert policy.device_type == "cuda" and "aten::mm" in policy.lower_precision_fp
    assert "aten::binary_cross_entropy" in policy.banned
