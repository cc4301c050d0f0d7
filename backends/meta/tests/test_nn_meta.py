"""nn meta kernels against PyTorch: shapes, dtypes and strides against torch's meta tensors (forward and
backward ops), error types against torch's CPU kernels.

Each case is ``fn(L, F, mk)``: ``L`` is ``torch`` or ``torchplug``, ``F`` its functional module
and ``mk(*shape, dtype=...)`` makes a tensor of that library on the device under test.
"""

from __future__ import annotations

import warnings

import pytest

import torchplug
from torchplug._ops import nn_functional as TF

torch = pytest.importorskip("torch")

I = "int64"


def _maker(L, device):
    def mk(*shape, dtype="float32"):
        dt = getattr(L, dtype)
        if device == "meta":
            return L.empty(shape, dtype=dt, device="meta")
        if dt.is_floating_point:
            return L.full(shape, 0.5, dtype=dt)  # valid probabilities and inputs
        return L.zeros(shape, dtype=dt)  # valid indices

    return mk


def _F(L):
    return torch.nn.functional if L is torch else TF


def _describe(r):
    if r is None:
        return None
    if isinstance(r, (tuple, list)):
        return [_describe(x) for x in r]
    return (tuple(r.shape), str(r.dtype).rsplit(".", 1)[-1], tuple(r.stride()))


def _aten(L):
    return L.ops.aten


MASK3 = [True, True, True]

SHAPE_CASES = {
    # convolution
    "conv2d": lambda L, F, mk: F.conv2d(mk(2, 4, 7, 7), mk(6, 2, 3, 3), mk(6), stride=2, padding=1, groups=2),
    "conv2d_same": lambda L, F, mk: F.conv2d(mk(2, 4, 7, 7), mk(6, 4, 4, 3), padding="same"),
    "conv2d_unbatched": lambda L, F, mk: F.conv2d(mk(4, 7, 7), mk(6, 4, 3, 3)),
    "conv2d_half": lambda L, F, mk: F.conv2d(mk(2, 4, 7, 7, dtype="bfloat16"), mk(6, 4, 3, 3, dtype="bfloat16")),
    "conv1d": lambda L, F, mk: F.conv1d(mk(2, 4, 9), mk(6, 4, 3), dilation=2),
    "conv3d": lambda L, F, mk: F.conv3d(mk(1, 2, 5, 6, 7), mk(3, 2, 3, 2, 3), padding=1),
    "conv_transpose2d": lambda L, F, mk: F.conv_transpose2d(mk(2, 4, 5, 5), mk(4, 3, 3, 3), stride=2,
                                                            output_padding=1),
    "conv_transpose1d": lambda L, F, mk: F.conv_transpose1d(mk(2, 4, 5), mk(4, 3, 3), stride=3, groups=2),
    "convolution_backward": lambda L, F, mk: _aten(L).convolution_backward(
        mk(2, 6, 4, 4), mk(2, 4, 7, 7), mk(6, 2, 3, 3), [6], [2, 2], [1, 1], [1, 1], False, [0, 0], 2, MASK3),
    "convolution_backward_t": lambda L, F, mk: _aten(L).convolution_backward(
        mk(2, 3, 11, 11), mk(2, 4, 5, 5), mk(4, 3, 3, 3), [3], [2, 2], [0, 0], [1, 1], True, [0, 0], 1, MASK3),
    "unfold": lambda L, F, mk: F.unfold(mk(2, 3, 7, 6), (3, 2), padding=1, stride=2),
    "fold": lambda L, F, mk: F.fold(mk(2, 12, 30), (6, 7), 2),
    # linear
    "linear": lambda L, F, mk: F.linear(mk(5, 4), mk(3, 4), mk(3)),
    "linear_3d": lambda L, F, mk: F.linear(mk(2, 5, 4), mk(3, 4)),
    # pooling
    "max_pool2d": lambda L, F, mk: F.max_pool2d(mk(2, 3, 7, 8), 3, 2, 1, ceil_mode=True, return_indices=True),
    "max_pool2d_int": lambda L, F, mk: F.max_pool2d(mk(3, 7, 8, dtype=I), 2),
    "max_pool1d": lambda L, F, mk: F.max_pool1d(mk(2, 3, 9), 3, return_indices=True),
    "max_pool3d": lambda L, F, mk: F.max_pool3d(mk(1, 2, 5, 6, 7), 2, return_indices=True),
    "max_pool2d_backward": lambda L, F, mk: _aten(L).max_pool2d_with_indices_backward(
        mk(2, 3, 4, 4), mk(2, 3, 8, 8), [2, 2], [2, 2], [0, 0], [1, 1], False, mk(2, 3, 4, 4, dtype=I)),
    "avg_pool2d": lambda L, F, mk: F.avg_pool2d(mk(2, 3, 7, 8), 3, 2, 1, ceil_mode=True),
    "avg_pool1d": lambda L, F, mk: F.avg_pool1d(mk(2, 3, 9), 2),
    "avg_pool3d": lambda L, F, mk: F.avg_pool3d(mk(1, 2, 5, 6, 7), 2),
    "avg_pool2d_backward": lambda L, F, mk: _aten(L).avg_pool2d_backward(
        mk(2, 3, 4, 4), mk(2, 3, 8, 8), [2, 2], [2, 2], [0, 0], False, True, None),
    "adaptive_avg_pool2d": lambda L, F, mk: F.adaptive_avg_pool2d(mk(2, 3, 7, 8), (3, 5)),
    "adaptive_avg_pool2d_1": lambda L, F, mk: F.adaptive_avg_pool2d(mk(2, 3, 7, 8), 1),
    "adaptive_avg_pool1d": lambda L, F, mk: F.adaptive_avg_pool1d(mk(2, 3, 7), 3),
    "adaptive_max_pool2d": lambda L, F, mk: F.adaptive_max_pool2d(mk(2, 3, 7, 8), (3, 5), return_indices=True),
    "adaptive_avg_pool2d_backward": lambda L, F, mk: _aten(L)._adaptive_avg_pool2d_backward(
        mk(2, 3, 3, 4), mk(2, 3, 7, 8)),
    # softmax / norms
    "softmax": lambda L, F, mk: F.softmax(mk(3, 4, 5), 1),
    "log_softmax_dtype": lambda L, F, mk: F.log_softmax(mk(3, 4, 5), 1, dtype=L.float64),
    "softmax_backward": lambda L, F, mk: _aten(L)._softmax_backward_data(mk(3, 4), mk(3, 4), 1, L.float32),
    "log_softmax_backward": lambda L, F, mk: _aten(L)._log_softmax_backward_data(mk(3, 4), mk(3, 4), 0, L.float32),
    "layer_norm": lambda L, F, mk: L.native_layer_norm(mk(3, 4, 5), [4, 5], mk(4, 5), mk(4, 5), 1e-5),
    "layer_norm_mixed": lambda L, F, mk: L.native_layer_norm(mk(3, 4, 5, dtype="bfloat16"), [5], mk(5), None, 1e-5),
    "layer_norm_backward": lambda L, F, mk: _aten(L).native_layer_norm_backward(
        mk(3, 4, 5), mk(3, 4, 5), [5], mk(3, 4, 1), mk(3, 4, 1), mk(5), mk(5), MASK3),
    "batch_norm_train": lambda L, F, mk: L.native_batch_norm(mk(4, 3, 5), mk(3), mk(3), mk(3), mk(3), True, 0.1, 1e-5),
    "batch_norm_eval": lambda L, F, mk: L.native_batch_norm(mk(4, 3, 5), None, None, mk(3), mk(3), False, 0.1, 1e-5),
    "batch_norm_functional": lambda L, F, mk: F.batch_norm(mk(4, 3), None, None, training=True),
    "batch_norm_backward": lambda L, F, mk: _aten(L).native_batch_norm_backward(
        mk(4, 3, 5), mk(4, 3, 5), mk(3), mk(3), mk(3), mk(3), mk(3), True, 1e-5, MASK3),
    "group_norm": lambda L, F, mk: L.native_group_norm(mk(2, 6, 5), mk(6), mk(6), 2, 6, 5, 3, 1e-5),
    "group_norm_functional": lambda L, F, mk: F.group_norm(mk(2, 6, 5, 3), 3),
    "group_norm_backward": lambda L, F, mk: _aten(L).native_group_norm_backward(
        mk(2, 6, 5), mk(2, 6, 5), mk(2, 3), mk(2, 3), mk(6), 2, 6, 5, 3, MASK3),
    "rms_norm": lambda L, F, mk: F.rms_norm(mk(3, 4, 5), [5], mk(5)),
    "instance_norm": lambda L, F, mk: F.instance_norm(mk(2, 3, 5)),
    # dropout / embedding
    "native_dropout": lambda L, F, mk: L.native_dropout(mk(3, 4), 0.5, True),
    "native_dropout_backward": lambda L, F, mk: _aten(L).native_dropout_backward(mk(3, 4), mk(3, 4, dtype="bool"), 2.0),
    "dropout": lambda L, F, mk: F.dropout(mk(3, 4), 0.5),
    "embedding": lambda L, F, mk: F.embedding(mk(2, 3, dtype=I), mk(10, 4)),
    "embedding_backward": lambda L, F, mk: _aten(L).embedding_dense_backward(mk(2, 3, 4), mk(2, 3, dtype=I), 10, -1,
                                                                             False),
    "one_hot": lambda L, F, mk: F.one_hot(mk(2, 3, dtype=I), 5),
    # activations
    **{f"act_{name}": (lambda fn: lambda L, F, mk: fn(F, mk(3, 4)))(fn) for name, fn in {
        "gelu": lambda F, x: F.gelu(x), "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
        "silu": lambda F, x: F.silu(x), "elu": lambda F, x: F.elu(x), "selu": lambda F, x: F.selu(x),
        "celu": lambda F, x: F.celu(x), "leaky_relu": lambda F, x: F.leaky_relu(x),
        "hardtanh": lambda F, x: F.hardtanh(x), "relu6": lambda F, x: F.relu6(x),
        "softplus": lambda F, x: F.softplus(x), "mish": lambda F, x: F.mish(x),
        "hardswish": lambda F, x: F.hardswish(x), "hardsigmoid": lambda F, x: F.hardsigmoid(x),
        "logsigmoid": lambda F, x: F.logsigmoid(x), "softsign": lambda F, x: F.softsign(x),
        "tanhshrink": lambda F, x: F.tanhshrink(x), "threshold": lambda F, x: F.threshold(x, 0.1, 2.0),
        "hardshrink": lambda F, x: F.hardshrink(x), "softshrink": lambda F, x: F.softshrink(x),
        "glu": lambda F, x: F.glu(x), "prelu": lambda F, x: F.prelu(x, x[0]),
    }.items()},
    "hardtanh_int": lambda L, F, mk: F.hardtanh(mk(3, 4, dtype=I)),
    "gelu_backward": lambda L, F, mk: _aten(L).gelu_backward(mk(3, 4), mk(3, 4)),
    "threshold_backward": lambda L, F, mk: _aten(L).threshold_backward(mk(3, 4), mk(3, 4), 0),
    "elu_backward": lambda L, F, mk: _aten(L).elu_backward(mk(3, 4), 1.0, 1.0, 1.0, False, mk(3, 4)),
    "log_sigmoid_forward": lambda L, F, mk: _aten(L).log_sigmoid_forward(mk(3, 4)),
    "glu_backward": lambda L, F, mk: _aten(L).glu_backward(mk(3, 2), mk(3, 4), 1),
    "prelu_kernel_backward": lambda L, F, mk: _aten(L)._prelu_kernel_backward(mk(2, 3, 4), mk(2, 3, 4), mk(1, 3, 1)),
    # losses
    "nll_loss": lambda L, F, mk: _aten(L).nll_loss_forward(mk(5, 4), mk(5, dtype=I), None, 1, -100),
    "nll_loss_none": lambda L, F, mk: _aten(L).nll_loss_forward(mk(5, 4), mk(5, dtype=I), mk(4), 0, -100),
    "nll_loss2d": lambda L, F, mk: _aten(L).nll_loss2d_forward(mk(2, 4, 3, 2), mk(2, 3, 2, dtype=I), None, 0, -100),
    "nll_loss_nd": lambda L, F, mk: F.nll_loss(mk(2, 4, 3), mk(2, 3, dtype=I), reduction="none"),
    "nll_loss_backward": lambda L, F, mk: _aten(L).nll_loss_backward(mk(), mk(5, 4), mk(5, dtype=I), None, 1, -100,
                                                                       mk()),
    "cross_entropy": lambda L, F, mk: F.cross_entropy(mk(5, 4), mk(5, dtype=I)),
    "cross_entropy_probs": lambda L, F, mk: F.cross_entropy(mk(5, 4), mk(5, 4), reduction="none"),
    "cross_entropy_smooth": lambda L, F, mk: F.cross_entropy(mk(5, 4, 3), mk(5, 3, dtype=I), label_smoothing=0.1),
    "mse": lambda L, F, mk: F.mse_loss(mk(3, 4), mk(3, 4)),
    "l1_none": lambda L, F, mk: F.l1_loss(mk(3, 4), mk(3, 4), reduction="none"),
    "smooth_l1": lambda L, F, mk: F.smooth_l1_loss(mk(3, 4), mk(3, 4)),
    "huber": lambda L, F, mk: F.huber_loss(mk(3, 4), mk(3, 4), reduction="sum"),
    "bce": lambda L, F, mk: F.binary_cross_entropy(mk(3, 4), mk(3, 4)),
    "bce_backward": lambda L, F, mk: _aten(L).binary_cross_entropy_backward(mk(), mk(3, 4), mk(3, 4), None, 1),
    "bce_logits": lambda L, F, mk: F.binary_cross_entropy_with_logits(mk(3, 4), mk(3, 4), pos_weight=mk(4)),
    "kl_div": lambda L, F, mk: F.kl_div(mk(3, 4), mk(3, 4), reduction="batchmean"),
    # attention, padding, upsampling, shuffles, distances
    "sdpa": lambda L, F, mk: F.scaled_dot_product_attention(mk(2, 3, 4, 8), mk(2, 3, 5, 8), mk(2, 3, 5, 6)),
    "sdpa_causal": lambda L, F, mk: F.scaled_dot_product_attention(mk(2, 4, 8), mk(2, 4, 8), mk(2, 4, 8),
                                                                   is_causal=True),
    "pad_constant": lambda L, F, mk: F.pad(mk(2, 3, 4), [1, 2, -1, 1]),
    "pad_reflect": lambda L, F, mk: F.pad(mk(2, 3, 4, 5), [1, 2, 3, 0], mode="reflect"),
    "pad_replicate": lambda L, F, mk: F.pad(mk(2, 3, 5), [3, 7], mode="replicate"),
    "pad_circular": lambda L, F, mk: F.pad(mk(2, 3, 4, 5), [1, 2, 3, 0], mode="circular"),
    "reflection_pad2d_backward": lambda L, F, mk: _aten(L).reflection_pad2d_backward(mk(2, 3, 7, 8), mk(2, 3, 4, 5),
                                                                                     [1, 2, 3, 0]),
    "interp_nearest": lambda L, F, mk: F.interpolate(mk(2, 3, 4, 5), scale_factor=1.7),
    "interp_bilinear": lambda L, F, mk: F.interpolate(mk(2, 3, 4, 5), size=(7, 3), mode="bilinear"),
    "interp_linear": lambda L, F, mk: F.interpolate(mk(2, 3, 5), size=8, mode="linear", align_corners=True),
    "upsample_nearest2d_backward": lambda L, F, mk: _aten(L).upsample_nearest2d_backward(
        mk(2, 3, 7, 3), [7, 3], [2, 3, 4, 5]),
    "pixel_shuffle": lambda L, F, mk: F.pixel_shuffle(mk(2, 8, 3, 4), 2),
    "pixel_unshuffle": lambda L, F, mk: F.pixel_unshuffle(mk(2, 2, 4, 6), 2),
    "cosine_similarity": lambda L, F, mk: F.cosine_similarity(mk(4, 5), mk(4, 5)),
    "pairwise_distance": lambda L, F, mk: F.pairwise_distance(mk(4, 5), mk(4, 5)),
    "normalize": lambda L, F, mk: F.normalize(mk(4, 5)),
}

ERROR_CASES = {
    "conv_channels": lambda L, F, mk: F.conv2d(mk(2, 4, 5, 5), mk(6, 2, 3, 3)),
    "conv_kernel_too_big": lambda L, F, mk: F.conv2d(mk(2, 4, 2, 2), mk(6, 4, 3, 3)),
    "conv_rank": lambda L, F, mk: F.conv2d(mk(5, 5), mk(6, 4, 3, 3)),
    "conv_dtype": lambda L, F, mk: F.conv2d(mk(2, 4, 5, 5), mk(6, 4, 3, 3, dtype="float64")),
    "conv_bias": lambda L, F, mk: F.conv2d(mk(2, 4, 5, 5), mk(6, 4, 3, 3), mk(5)),
    "conv_stride": lambda L, F, mk: F.conv2d(mk(2, 4, 5, 5), mk(6, 4, 3, 3), stride=0),
    "conv_transpose_opad": lambda L, F, mk: F.conv_transpose2d(mk(2, 4, 5, 5), mk(4, 3, 3, 3), output_padding=1),
    "max_pool_pad": lambda L, F, mk: F.max_pool2d(mk(2, 3, 7, 7), 3, padding=2),
    "max_pool_small": lambda L, F, mk: F.max_pool2d(mk(2, 3, 2, 2), 3),
    "max_pool_bool": lambda L, F, mk: F.max_pool2d(mk(2, 3, 4, 4, dtype="bool"), 2),
    "avg_pool_divisor": lambda L, F, mk: F.avg_pool2d(mk(2, 3, 4, 4), 2, divisor_override=0),
    "adaptive_long": lambda L, F, mk: F.adaptive_avg_pool2d(mk(2, 3, 4, 4, dtype=I), 3),
    "softmax_long": lambda L, F, mk: F.softmax(mk(2, 3, dtype=I), 1),
    "softmax_dim": lambda L, F, mk: F.softmax(mk(2, 3), 2),
    "layer_norm_shape": lambda L, F, mk: F.layer_norm(mk(2, 3), [4]),
    "batch_norm_eval_stats": lambda L, F, mk: F.batch_norm(mk(4, 3), None, None),
    "batch_norm_features": lambda L, F, mk: F.batch_norm(mk(4, 3), mk(2), mk(3)),
    "group_norm_groups": lambda L, F, mk: F.group_norm(mk(2, 6, 5), 4),
    "embedding_float_indices": lambda L, F, mk: F.embedding(mk(2, 3), mk(10, 4)),
    "one_hot_infer": lambda L, F, mk: F.one_hot(mk(0, dtype=I)),
    "gelu_approx": lambda L, F, mk: F.gelu(mk(3), approximate="x"),
    "gelu_long": lambda L, F, mk: F.gelu(mk(3, dtype=I)),
    "glu_odd": lambda L, F, mk: F.glu(mk(3, 3)),
    "softshrink_neg": lambda L, F, mk: F.softshrink(mk(3), -1.0),
    "nll_size": lambda L, F, mk: F.nll_loss(mk(5, 4), mk(3, dtype=I)),
    "nll_weight": lambda L, F, mk: F.nll_loss(mk(5, 4), mk(5, dtype=I), mk(3)),
    "nll_target_dtype": lambda L, F, mk: F.nll_loss(mk(5, 4), mk(5)),
    "ce_smoothing": lambda L, F, mk: F.cross_entropy(mk(5, 4), mk(5, dtype=I), label_smoothing=2.0),
    "bce_size": lambda L, F, mk: F.binary_cross_entropy(mk(3, 4), mk(4)),
    "pad_odd": lambda L, F, mk: F.pad(mk(2, 3), [1, 2, 3]),
    "pad_reflect_big": lambda L, F, mk: F.pad(mk(2, 3, 4), [4, 0], mode="reflect"),
    "pad_mode": lambda L, F, mk: F.pad(mk(2, 3, 4), [1, 1], mode="wrap"),
    "interp_both": lambda L, F, mk: F.interpolate(mk(2, 3, 4), size=3, scale_factor=2.0),
    "unfold_small": lambda L, F, mk: F.unfold(mk(2, 3, 4, 4), 5),
    "pixel_shuffle_div": lambda L, F, mk: F.pixel_shuffle(mk(2, 8, 3, 4), 3),
}


def _run(fn, L, device):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(L, _F(L), _maker(L, device))


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_matches_torch_meta(name):
    fn = SHAPE_CASES[name]
    expected = _describe(_run(fn, torch, "meta"))
    got = _run(fn, torchplug, "meta")
    for t in got if isinstance(got, (tuple, list)) else [got]:
        assert t is None or t.is_meta, name
    assert _describe(got) == expected


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch_cpu(name):
    fn = ERROR_CASES[name]
    with pytest.raises(Exception) as ref:
        _run(fn, torch, "cpu")
    with pytest.raises(Exception) as got:
        _run(fn, torchplug, "meta")
    assert isinstance(got.value, type(ref.value)), (
        f"torchplug raised {type(got.value).__name__}: {got.value}\n"
        f"torch (cpu) raised {type(ref.value).__name__}: {ref.value}"
    )


def test_one_hot_needs_num_classes_on_meta():
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from meta tensor"):
        TF.one_hot(torchplug.empty(3, dtype=torchplug.int64, device="meta"))


def test_meta_cnn_forward_chain():
    x = torchplug.empty(64, 1, 8, 8, device="meta")
    y = TF.relu(TF.conv2d(x, torchplug.empty(8, 1, 3, 3, device="meta"), torchplug.empty(8, device="meta")))
    y = TF.max_pool2d(y, 2).flatten(1)
    logits = TF.linear(y, torchplug.empty(10, 72, device="meta"), torchplug.empty(10, device="meta"))
    loss = TF.cross_entropy(logits, torchplug.empty(64, dtype=torchplug.int64, device="meta"))
    assert loss.is_meta and loss.shape == () and logits.shape == (64, 10)
