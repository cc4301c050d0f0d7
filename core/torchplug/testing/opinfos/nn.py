"""OpInfos for the nn rows (``_schemas/nn.py``) through ``torch.nn.functional``: convolution, pooling, softmax,
normalization, activations, losses, embedding, padding, interpolation, unfold/fold, distances and attention.

Backward ops are checked against ``torch.autograd.grad`` in ``backends/cpu/tests/test_nn_backward.py``;
dropout's values cannot match torch's RNG (``random=True``: shapes and dtypes only).
"""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import FLOAT_DTYPES, OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
FLOAT = ("float32", "float64")
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}
CONV_TOL = {"float16": (5e-3, 5e-3), "bfloat16": (3e-2, 3e-2), "float32": (1e-5, 1e-5)}
IDX = "int64"


def _gen(*samples: SampleInput):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield from samples

    return gen


def _f(name: str) -> str:
    return f"nn.functional.{name}"


# ---- sample generators ----------------------------------------------------------------------------------------------
def _conv2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 4, 7, 7)), T((6, 4, 3, 3), seed=1), T((6,), seed=2)), name="bias")
    yield S((T((2, 4, 7, 8)), T((6, 2, 3, 2), seed=1)), {"stride": 2, "padding": 1, "dilation": (2, 1), "groups": 2},
            name="grouped")
    yield S((T((2, 4, 5, 5)), T((6, 4, 3, 3), seed=1)), {"padding": "same"}, name="same")
    yield S((T((4, 5, 5), noncontig=True), T((6, 4, 3, 3), seed=1)), name="unbatched")
    yield S((T((0, 4, 5, 5)), T((6, 4, 3, 3), seed=1)), name="empty")
    yield S((T((64, 1, 8, 8)), T((8, 1, 3, 3), seed=1), T((8,), seed=2)), name="cnn")
    yield S((T((2, 4, 2, 2)), T((6, 4, 3, 3), seed=1)), name="kernel_too_big")


def _conv1d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 6, 9)), T((3, 6, 3), seed=1)), {"stride": 2, "padding": 2, "dilation": 2}, name="strided")
    yield S((T((2, 6, 9)), T((3, 2, 3), seed=1)), {"groups": 3, "padding": "same"}, name="same")


def _conv3d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((1, 2, 4, 5, 4)), T((3, 2, 2, 3, 2), seed=1), T((3,), seed=2)), {"padding": 1}, name="padded")


def _conv_t2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 4, 5, 5)), T((4, 3, 3, 3), seed=1), T((3,), seed=2)), {"stride": 2, "padding": 1,
                                                                          "output_padding": 1}, name="strided")
    yield S((T((2, 4, 5, 6)), T((4, 2, 3, 2), seed=1)), {"stride": (2, 3), "groups": 2, "dilation": 2}, name="grouped")


def _linear(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), T((3, 4), seed=1), T((3,), seed=2)), name="2d")
    yield S((T((2, 5, 4)), T((3, 4), seed=1)), name="3d")
    yield S((T((4,)), T((3, 4), seed=1), T((3,), seed=2)), name="1d")


def _max_pool2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 6, 6)), 2), name="k2")
    yield S((T((2, 3, 7, 8)), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil")
    yield S((T((3, 7, 8), noncontig=True), (3, 2)), {"stride": (2, 1), "dilation": (1, 2)}, name="dilated")
    yield S((T((2, 3, 6, 6)), 2), {"return_indices": True}, name="indices")
    yield S((T((2, 3, 7, 7)), 3), {"padding": 2}, name="bad_padding")


def _avg_pool2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 6, 6)), 2), name="k2")
    yield S((T((2, 3, 7, 8)), 3), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
            name="ceil")
    yield S((T((2, 3, 7, 8)), (2, 3)), {"divisor_override": 5}, name="divisor")


def _pool1d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 9)), 3), {"stride": 2, "padding": 1}, name="padded")
    yield S((T((3, 9)), 2), {"ceil_mode": True}, name="unbatched")


def _adaptive(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 7, 8)), (3, 5)), name="3x5")
    yield S((T((2, 3, 7, 8)), 1), name="global")
    yield S((T((3, 7, 8)), (9, None)), name="upsample")


def _softmax(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)), 1), name="dim1")
    yield S((T((3, 4), special=True), -1), name="special")
    yield S((T((3, 4), noncontig=True), 0), name="noncontig")
    yield S((T(()), 0), name="0d")
    yield S((T((0, 3)), 1), name="empty")


def _layer_norm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)), [5]), name="plain")
    yield S((T((3, 4, 5)), [4, 5], T((4, 5), seed=1), T((4, 5), seed=2)), {"eps": 1e-3}, name="affine")
    yield S((T((3, 4)), [5]), name="bad_shape")


def _batch_norm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 3, 5)), T((3,), seed=1), T((3,), low=0.5, high=2, seed=2), T((3,), seed=3), T((3,), seed=4)),
            name="eval")
    yield S((T((4, 3)), None, None), {"training": True}, name="train")


def _group_norm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 4, 5, 3)), 2, T((4,), seed=1), T((4,), seed=2)), name="affine")
    yield S((T((2, 6, 5)), 3), name="plain")
    yield S((T((2, 6, 5)), 4), name="indivisible")


def _rms_norm(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)), [5]), name="plain")
    yield S((T((3, 4, 5)), [4, 5], T((4, 5), seed=1)), {"eps": 1e-3}, name="weight")


def _normalize(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)),), name="default")
    yield S((T((3, 4)),), {"p": 1.0, "dim": 0}, name="p1")


def _unary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=-5, high=5, special=True),), name="2d")
    yield S((T((3, 4), noncontig=True, low=-5, high=5),), name="noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")


def _with(*args, **kwargs):
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4), low=-5, high=5, special=True),) + args, dict(kwargs), name="2d")
        yield S((T((3, 4), noncontig=True, low=-5, high=5),) + args, dict(kwargs), name="noncontig")

    return gen


def _glu(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="last")
    yield S((T((4, 3)), 0), name="dim0")
    yield S((T((3, 3)),), name="odd")


def _prelu(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4), low=-2, high=2), T((3,), seed=1)), name="channels")
    yield S((T((2, 3, 4), low=-2, high=2), T((1,), seed=1)), name="shared")


def _nll(dtype: str) -> Iterator[SampleInput]:
    yield S((T((5, 4)), T((5,), dtype=IDX, low=0, high=3)), name="2d")
    yield S((T((5, 4)), T((5,), dtype=IDX, low=0, high=3), T((4,), low=0.5, high=2, seed=1)),
            {"reduction": "sum", "ignore_index": 2}, name="weighted")
    yield S((T((2, 4, 3, 2)), T((2, 3, 2), dtype=IDX, low=0, high=3)), {"reduction": "none"}, name="4d")
    yield S((T((2, 4, 3)), T((2, 3), dtype=IDX, low=0, high=3)), name="3d")
    yield S((T((5, 4)), T((3,), dtype=IDX, low=0, high=3)), name="size_mismatch")


def _cross_entropy(dtype: str) -> Iterator[SampleInput]:
    yield from _nll(dtype)
    yield S((T((5, 4)), T((5,), dtype=IDX, low=0, high=3)), {"label_smoothing": 0.2}, name="smoothing")
    yield S((T((5, 4)), T((5, 4), low=0, high=1, seed=1)), name="probabilities")


def _pair(**kwargs):
    def gen(dtype: str) -> Iterator[SampleInput]:
        for reduction in ("mean", "sum", "none"):
            yield S((T((3, 4)), T((3, 4), seed=1)), dict(kwargs, reduction=reduction), name=reduction)

    return gen


def _bce(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0.1, high=0.9), T((3, 4), low=0, high=1, seed=1)), name="mean")
    yield S((T((3, 4), low=0.1, high=0.9), T((3, 4), low=0, high=1, seed=1), T((4,), low=0.5, high=2, seed=2)),
            {"reduction": "none"}, name="weighted")
    yield S((T((3, 4), low=1.5, high=2.0), T((3, 4), low=0, high=1, seed=1)), name="out_of_range",
            data_dependent=True)


def _bce_logits(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), low=0, high=1, seed=1)), name="mean")
    yield S((T((3, 4)), T((3, 4), low=0, high=1, seed=1)), {"pos_weight": T((4,), low=0.5, high=2, seed=2),
                                                            "reduction": "none"}, name="pos_weight")


def _kl(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), low=0, high=1, seed=1)), {"reduction": "batchmean"}, name="batchmean")
    yield S((T((3, 4)), T((3, 4), seed=1)), {"reduction": "sum", "log_target": True}, name="log_target")


def _embedding(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3), dtype=IDX, low=0, high=9), T((10, 4))), name="2d")
    yield S((T((5,), dtype=IDX, low=0, high=9), T((10, 4))), {"padding_idx": 3}, name="padding_idx")
    yield S((T((2, 3)), T((10, 4))), name="float_indices")


def _one_hot(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3), low=0, high=4), 5), name="explicit")
    yield S((T((2, 3), low=0, high=4),), name="inferred", data_dependent=True)


def _pad(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4)), [1, 2, -1, 1]), name="constant")
    yield S((T((2, 3, 4)), [1, 2]), {"value": 2.5}, name="value")
    yield S((T((2, 3, 4, 5)), [1, 2, 3, 0]), {"mode": "reflect"}, name="reflect")
    yield S((T((2, 3, 5)), [3, 7]), {"mode": "replicate"}, name="replicate")
    yield S((T((2, 3, 4, 5)), [1, 2, 3, 0]), {"mode": "circular"}, name="circular")
    yield S((T((2, 3, 4)), [4, 0]), {"mode": "reflect"}, name="too_wide")


def _interpolate(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4, 5)),), {"scale_factor": 1.7}, name="nearest")
    yield S((T((2, 3, 4, 5)),), {"size": (7, 3), "mode": "bilinear"}, name="bilinear")
    yield S((T((2, 3, 4, 5)),), {"scale_factor": 2.5, "mode": "bilinear", "align_corners": True}, name="aligned")
    yield S((T((2, 3, 5)),), {"size": 8, "mode": "linear"}, name="linear")
    yield S((T((2, 3, 4, 5)),), {"size": (7, 3), "mode": "nearest-exact"}, name="nearest_exact")
    yield S((T((2, 3, 8, 9)),), {"size": (3, 4), "mode": "area"}, name="area")


def _unfold(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 7, 6)), (3, 2)), {"padding": 1, "stride": 2}, name="strided")
    yield S((T((3, 5, 5)), 2), {"dilation": 2}, name="unbatched")


def _fold(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 12, 30)), (6, 7), 2), name="k2")
    yield S((T((2, 12, 20)), (6, 7), 2), name="bad_blocks")


def _pixel_shuffle(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 8, 3, 4)), 2), name="r2")
    yield S((T((8, 3, 4)), 2), name="unbatched")


def _pixel_unshuffle(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 2, 4, 6)), 2), name="r2")


def _two(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 5)), T((4, 5), seed=1)), name="same")
    yield S((T((4, 5)), T((5,), seed=1)), name="broadcast")


def _sdpa(dtype: str) -> Iterator[SampleInput]:
    yield S((T((2, 3, 4, 8)), T((2, 3, 5, 8), seed=1), T((2, 3, 5, 6), seed=2)), name="plain")
    yield S((T((2, 4, 8)), T((2, 4, 8), seed=1), T((2, 4, 8), seed=2)), {"is_causal": True}, name="causal")
    yield S((T((2, 4, 8)), T((2, 5, 8), seed=1), T((2, 5, 8), seed=2), T((4, 5), seed=3)), {"scale": 0.3},
            name="float_mask")


def _dropout(dtype: str) -> Iterator[SampleInput]:
    yield S((T((30, 40)), 0.3), name="train")
    yield S((T((30, 40)), 0.3), {"training": False}, name="eval")


def _dropout2d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 6, 3, 3)), 0.5), name="train")


_ACTIVATIONS = {
    "gelu": (_unary, ("gelu",)),
    "silu": (_unary, ("silu",)),
    "mish": (_unary, ("mish",)),
    "elu": (_with(0.7), ("elu",)),
    "selu": (_unary, ("elu",)),
    "celu": (_with(1.3), ("elu",)),
    "leaky_relu": (_with(0.2), ("leaky_relu",)),
    "hardtanh": (_with(-0.5, 1.5), ("hardtanh",)),
    "relu6": (_unary, ("hardtanh",)),
    "softplus": (_with(beta=2, threshold=3), ("softplus",)),
    "hardswish": (_unary, ("hardswish",)),
    "hardsigmoid": (_unary, ("hardsigmoid",)),
    "logsigmoid": (_unary, ("log_sigmoid_forward",)),
    "softsign": (_unary, ()),
    "tanhshrink": (_unary, ()),
    "threshold": (_with(0.5, -2.0), ("threshold",)),
    "hardshrink": (_with(1.0), ("hardshrink",)),
    "softshrink": (_with(1.0), ("softshrink",)),
}

OPS = [
    # convolution / linear
    OpInfo("nn.functional.conv2d", _conv2d, dtypes=FLOAT_DTYPES, aten=("convolution", "conv2d", "conv2d.padding"),
           tolerances=CONV_TOL),
    OpInfo("nn.functional.conv1d", _conv1d, dtypes=FLOAT, aten=("conv1d", "conv1d.padding"), tolerances=CONV_TOL),
    OpInfo("nn.functional.conv3d", _conv3d, dtypes=FLOAT, aten=("conv3d",), tolerances=CONV_TOL),
    OpInfo("nn.functional.conv_transpose2d", _conv_t2d, dtypes=FLOAT, aten=("conv_transpose2d",), tolerances=CONV_TOL),
    OpInfo("nn.functional.linear", _linear, dtypes=FLOAT, aten=("linear",), tolerances=CONV_TOL),
    OpInfo("nn.functional.unfold", _unfold, dtypes=FLOAT, aten=("im2col",)),
    OpInfo("nn.functional.fold", _fold, dtypes=FLOAT, aten=("col2im",)),
    # pooling
    OpInfo("nn.functional.max_pool2d", _max_pool2d, dtypes=FLOAT_DTYPES + ("int64",),
           aten=("max_pool2d", "max_pool2d_with_indices")),
    OpInfo("nn.functional.max_pool1d", _pool1d, dtypes=FLOAT, aten=("max_pool1d", "max_pool1d_with_indices")),
    OpInfo("nn.functional.avg_pool2d", _avg_pool2d, dtypes=FLOAT + ("int64",), aten=("avg_pool2d",)),
    OpInfo("nn.functional.avg_pool1d", _pool1d, dtypes=FLOAT, aten=("avg_pool1d",)),
    OpInfo("nn.functional.adaptive_avg_pool2d", _adaptive, dtypes=FLOAT,
           aten=("adaptive_avg_pool2d", "_adaptive_avg_pool2d")),
    OpInfo("nn.functional.adaptive_max_pool2d", _adaptive, dtypes=FLOAT, aten=("adaptive_max_pool2d",)),
    # softmax / normalization
    OpInfo("nn.functional.softmax", _softmax, dtypes=FLOAT_DTYPES, aten=("softmax.int", "_softmax"), tolerances=TOL),
    OpInfo("nn.functional.log_softmax", _softmax, dtypes=FLOAT_DTYPES, aten=("log_softmax.int", "_log_softmax"),
           tolerances=TOL),
    OpInfo("nn.functional.layer_norm", _layer_norm, dtypes=FLOAT_DTYPES, aten=("layer_norm", "native_layer_norm"),
           tolerances=TOL),
    OpInfo("nn.functional.batch_norm", _batch_norm, dtypes=FLOAT, aten=("batch_norm", "native_batch_norm"),
           tolerances=TOL),
    OpInfo("nn.functional.group_norm", _group_norm, dtypes=FLOAT, aten=("group_norm", "native_group_norm"),
           tolerances=TOL),
    OpInfo("nn.functional.rms_norm", _rms_norm, dtypes=FLOAT_DTYPES, aten=("rms_norm",), tolerances=TOL),
    OpInfo("nn.functional.normalize", _normalize, dtypes=FLOAT, tolerances=TOL),
    # dropout (values follow torchplug's generator: only shapes and dtypes are compared)
    OpInfo("nn.functional.dropout", _dropout, dtypes=FLOAT, aten=("dropout", "native_dropout"), random=True),
    OpInfo("nn.functional.dropout2d", _dropout2d, dtypes=FLOAT, aten=("feature_dropout",), random=True),
    # activations
    *(OpInfo(_f(name), gen, dtypes=FLOAT_DTYPES, aten=aten, tolerances=TOL)
      for name, (gen, aten) in _ACTIVATIONS.items()),
    OpInfo("nn.functional.glu", _glu, dtypes=FLOAT, aten=("glu",)),
    OpInfo("nn.functional.prelu", _prelu, dtypes=FLOAT, aten=("prelu", "_prelu_kernel")),
    # losses
    OpInfo("nn.functional.nll_loss", _nll, dtypes=FLOAT, aten=("nll_loss_nd", "nll_loss_forward",
                                                               "nll_loss2d_forward"), tolerances=TOL),
    OpInfo("nn.functional.cross_entropy", _cross_entropy, dtypes=FLOAT, aten=("cross_entropy_loss",), tolerances=TOL),
    OpInfo("nn.functional.mse_loss", _pair(), dtypes=FLOAT, aten=("mse_loss",), tolerances=TOL),
    OpInfo("nn.functional.l1_loss", _pair(), dtypes=FLOAT, aten=("l1_loss",), tolerances=TOL),
    OpInfo("nn.functional.smooth_l1_loss", _pair(beta=0.5), dtypes=FLOAT, aten=("smooth_l1_loss",), tolerances=TOL),
    OpInfo("nn.functional.huber_loss", _pair(delta=0.7), dtypes=FLOAT, aten=("huber_loss",), tolerances=TOL),
    OpInfo("nn.functional.binary_cross_entropy", _bce, dtypes=FLOAT, aten=("binary_cross_entropy",), tolerances=TOL),
    OpInfo("nn.functional.binary_cross_entropy_with_logits", _bce_logits, dtypes=FLOAT,
           aten=("binary_cross_entropy_with_logits",), tolerances=TOL),
    OpInfo("nn.functional.kl_div", _kl, dtypes=FLOAT, aten=("kl_div",), tolerances=TOL),
    # embedding, padding, resampling, shuffles, distances, attention
    OpInfo("nn.functional.embedding", _embedding, dtypes=FLOAT, aten=("embedding",),
           skips=(Skip("the message names torch.cuda.FloatTensor, as torch's CUDA message does; the reference "
                       "here is torch's CPU message (torch.FloatTensor)", devices=("cuda",), samples=("float_indices",)),)),
    OpInfo("nn.functional.one_hot", _one_hot, dtypes=("int64",), aten=("one_hot",)),
    OpInfo("nn.functional.pad", _pad, dtypes=FLOAT + ("int64",),
           aten=("pad", "constant_pad_nd", "reflection_pad2d", "replication_pad1d", "_pad_circular")),
    OpInfo("nn.functional.interpolate", _interpolate, dtypes=FLOAT,
           aten=("upsample_nearest2d", "upsample_bilinear2d", "upsample_linear1d", "_upsample_nearest_exact2d"),
           tolerances=TOL),
    OpInfo("nn.functional.pixel_shuffle", _pixel_shuffle, dtypes=FLOAT + ("int64",), aten=("pixel_shuffle",)),
    OpInfo("nn.functional.pixel_unshuffle", _pixel_unshuffle, dtypes=FLOAT + ("int64",), aten=("pixel_unshuffle",)),
    OpInfo("nn.functional.cosine_similarity", _two, dtypes=FLOAT, aten=("cosine_similarity",), tolerances=TOL),
    OpInfo("nn.functional.pairwise_distance", _two, dtypes=FLOAT, aten=("pairwise_distance",), tolerances=TOL),
    OpInfo("nn.functional.scaled_dot_product_attention", _sdpa, dtypes=FLOAT, aten=("scaled_dot_product_attention",),
           tolerances=TOL),
]
