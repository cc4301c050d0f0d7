"""nn cpu kernels against real PyTorch through the functional API: conv, pooling, softmax, norms, activations,
embedding, padding, upsampling, unfold/fold, distances and attention (values, dtypes, shapes and errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug
from torchplug._ops import nn_functional as TF

torch = pytest.importorskip("torch")
TorchF = torch.nn.functional

FLOATS = ["float32", "float64"]
HALVES = ["float16", "bfloat16"]


def F(M):
    """The functional module of library ``M`` (torch or torchplug)."""
    return TorchF if M is torch else TF


def rand(tc, shape, dtype="float32", seed=0, low=-1, high=1):
    return tc.pair(dtype, shape, seed=seed, low=low, high=high)


# ---- convolution ---------------------------------------------------------------------------------------------------
CONV2D = [
    # (input shape, weight shape, kwargs)
    ((2, 4, 7, 7), (6, 4, 3, 3), {}),
    ((2, 4, 7, 7), (6, 4, 3, 3), {"stride": 2, "padding": 1}),
    ((2, 4, 7, 8), (6, 2, 3, 2), {"groups": 2, "dilation": 2, "padding": (1, 2)}),
    ((1, 4, 6, 6), (4, 1, 3, 3), {"groups": 4, "stride": (2, 1)}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"padding": "same"}),
    ((2, 4, 5, 5), (6, 4, 4, 2), {"padding": "same", "dilation": (1, 3)}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"padding": "valid"}),
    ((4, 5, 5), (6, 4, 3, 3), {}),  # unbatched
    ((0, 4, 5, 5), (6, 4, 3, 3), {}),  # empty batch
    ((64, 1, 8, 8), (8, 1, 3, 3), {}),  # the CNN benchmark layer
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", range(len(CONV2D)))
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d(tc, case, dtype, bias):
    xs, ws, kw = CONV2D[case]
    x, w = rand(tc, xs, dtype), rand(tc, ws, dtype, seed=1)
    b = rand(tc, (ws[0],), dtype, seed=2) if bias else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # padding='same' with even kernels warns once in torch
        tc.compare(lambda M, x, w, b: F(M).conv2d(x, w, b, **kw), x, w, b)


@pytest.mark.parametrize("dtype", HALVES)
def test_conv2d_half(tc, dtype):
    x, w, b = rand(tc, (2, 4, 6, 6), dtype), rand(tc, (4, 2, 3, 3), dtype, seed=1), rand(tc, (4,), dtype, seed=2)
    torch_out = TorchF.conv2d(x.th.float(), w.th.float(), b.th.float(), groups=2).to(x.th.dtype)
    tc.assert_same(TF.conv2d(x.tp, w.tp, b.tp, groups=2), torch_out)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 2, "dilation": 2}, {"groups": 3, "padding": "same"}])
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv1d_conv3d(tc, dtype, kw):
    x1, w1 = rand(tc, (2, 6, 9), dtype), rand(tc, (3, 6 // kw.get("groups", 1), 3), dtype, seed=1)
    tc.compare(lambda M, x, w: F(M).conv1d(x, w, **kw), x1, w1)
    x3, w3 = rand(tc, (2, 6, 5, 6, 5), dtype), rand(tc, (3, 6 // kw.get("groups", 1), 3, 2, 3), dtype, seed=1)
    tc.compare(lambda M, x, w: F(M).conv3d(x, w, **kw), x3, w3)


CONVT = [
    ((2, 4, 5, 5), (4, 3, 3, 3), {}),
    ((2, 4, 5, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((2, 4, 5, 6), (4, 2, 3, 2), {"stride": (2, 3), "groups": 2, "dilation": 2, "output_padding": (1, 0)}),
    ((4, 5, 5), (4, 3, 2, 2), {"stride": 2}),
]


@pytest.mark.parametrize("case", range(len(CONVT)))
@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_transpose2d(tc, case, dtype):
    xs, ws, kw = CONVT[case]
    x, w, b = rand(tc, xs, dtype), rand(tc, ws, dtype, seed=1), rand(tc, (ws[1] * kw.get("groups", 1),), dtype, seed=2)
    tc.compare(lambda M, x, w, b: F(M).conv_transpose2d(x, w, b, **kw), x, w, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv_transpose1d(tc, dtype):
    x, w = rand(tc, (2, 4, 7), dtype), rand(tc, (4, 3, 3), dtype, seed=1)
    tc.compare(lambda M, x, w: F(M).conv_transpose1d(x, w, stride=3, padding=1, output_padding=2), x, w)


CONV_ERRORS = [
    ((2, 4, 5, 5), (6, 2, 3, 3), {}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"groups": 3}),
    ((2, 4, 2, 2), (6, 4, 3, 3), {}),
    ((2, 4, 5, 5), (6, 4, 3), {}),
    ((5, 5), (6, 4, 3, 3), {}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"stride": 0}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"padding": -1}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"dilation": 0}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"groups": 0}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"stride": (1, 1, 1)}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"padding": "same", "stride": 2}),
    ((2, 4, 5, 5), (6, 4, 3, 3), {"padding": "full"}),
    ((2, 4, 5, 5), (5, 2, 3, 3), {"groups": 2}),
]


@pytest.mark.parametrize("case", range(len(CONV_ERRORS)))
def test_conv2d_errors(tc, case):
    xs, ws, kw = CONV_ERRORS[case]
    x, w = rand(tc, xs), rand(tc, ws, seed=1)
    assert isinstance(tc.compare(lambda M, x, w: F(M).conv2d(x, w, **kw), x, w), Exception)


def test_conv_error_dtypes_and_bias(tc):
    x, w = rand(tc, (2, 4, 5, 5)), rand(tc, (6, 4, 3, 3), seed=1)
    tc.compare(lambda M, x, w: F(M).conv2d(x, w.double()), x, w)
    tc.compare(lambda M, x, w: F(M).conv2d(x, w, w.sum((1, 2, 3))[:5]), x, w)
    tc.compare(lambda M, x, w: F(M).conv2d(x.long(), w.long()), x, w)
    tc.compare(lambda M, x, w: F(M).conv_transpose2d(x, w, output_padding=1), x, w)
    tc.compare(lambda M, x, w: F(M).conv_transpose2d(x, w[:3]), x, w)



# (input shape, weight shape, kwargs): PyTorch runs some float32 convolutions on oneDNN and the rest on its
# native kernel, and the two word a dtype mismatch differently; the bias's dtype is compared first.
CONV_DTYPE_PATHS = [
    ("conv2d", (2, 4, 5, 5), (6, 4, 3, 3), {}), ("conv2d", (1, 4, 5, 5), (6, 4, 3, 3), {}),
    ("conv2d", (2, 4, 5, 5), (6, 4, 1, 1), {}), ("conv2d", (1, 4, 5, 5), (6, 4, 1, 1), {"stride": 2}),
    ("conv2d", (1, 4, 80, 80), (6, 4, 3, 3), {}), ("conv2d", (1, 4, 9, 9), (6, 4, 4, 4), {}),
    ("conv2d", (1, 4, 9, 9), (6, 2, 3, 3), {"groups": 2}), ("conv2d", (1, 4, 5, 5), (6, 4, 3, 3), {"dilation": 2}),
    ("conv1d", (2, 4, 5), (6, 4, 3), {}), ("conv1d", (1, 4, 5), (6, 4, 3), {}),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", range(len(CONV_DTYPE_PATHS)))
@pytest.mark.parametrize("dtypes", [("float32", "float64", None), ("float64", "float32", None),
                                    ("float32", "float64", "float32"), ("float64", "float64", "float32"),
                                    ("float32", "float32", "float64")])
def test_conv_dtype_mismatch_message_follows_torch_backend(tc, threads, case, dtypes):
    name, xs, ws, kw = CONV_DTYPE_PATHS[case]
    xd, wd, bd = dtypes
    x, w = rand(tc, xs, xd), rand(tc, ws, wd, seed=1)
    b = None if bd is None else rand(tc, ws[:1], bd, seed=2)
    before = torch.get_num_threads(), torchplug.get_num_threads()
    torch.set_num_threads(threads)  # 1x1 filters leave oneDNN when single-threaded
    torchplug.set_num_threads(threads)
    try:
        assert isinstance(tc.compare(lambda M, x, w, b: getattr(F(M), name)(x, w, b, **kw), x, w, b), RuntimeError)
    finally:
        torch.set_num_threads(before[0])
        torchplug.set_num_threads(before[1])

# ---- linear ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs", [(5, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_linear(tc, xs, bias, dtype):
    x, w = rand(tc, xs, dtype), rand(tc, (3, 4), dtype, seed=1)
    b = rand(tc, (3,), dtype, seed=2) if bias else None
    tc.compare(lambda M, x, w, b: F(M).linear(x, w, b), x, w, b)


def test_linear_errors(tc):
    x, w = rand(tc, (5, 4)), rand(tc, (3, 5), seed=1)
    tc.compare(lambda M, x, w: F(M).linear(x, w), x, w)


# ---- pooling ----------------------------------------------------------------------------------------------------------
MAXPOOL2D = [
    (2, {}),
    (3, {"stride": 2, "padding": 1}),
    ((3, 2), {"stride": (2, 1), "dilation": (1, 2), "padding": (1, 0)}),
    (3, {"stride": 2, "ceil_mode": True}),
    (2, {"stride": 3, "ceil_mode": True, "padding": 1}),
]


@pytest.mark.parametrize("case", range(len(MAXPOOL2D)))
@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
@pytest.mark.parametrize("shape", [(2, 3, 7, 8), (3, 6, 6)])
def test_max_pool2d(tc, case, dtype, shape):
    k, kw = MAXPOOL2D[case]
    x = rand(tc, shape, dtype, high=40, low=-40)
    tc.compare(lambda M, x: F(M).max_pool2d(x, k, **kw), x)
    tc.compare(lambda M, x: tuple(F(M).max_pool2d(x, k, return_indices=True, **kw)), x)


@pytest.mark.parametrize("dtype", HALVES)
def test_max_pool2d_half(tc, dtype):
    x = rand(tc, (2, 3, 6, 6), dtype, high=40, low=-40)
    tc.compare(lambda M, x: tuple(F(M).max_pool2d(x, 2, return_indices=True)), x)


@pytest.mark.parametrize("kw", [{}, {"stride": 1, "padding": 1}, {"ceil_mode": True, "stride": 2}, {"dilation": 2}])
@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 9)])
def test_max_pool1d_3d(tc, kw, shape):
    x = rand(tc, shape, "float64", high=50, low=-50)
    tc.compare(lambda M, x: F(M).max_pool1d(x, 3, **kw), x)
    tc.compare(lambda M, x: tuple(F(M).max_pool1d(x, 3, return_indices=True, **kw)), x)
    x3 = rand(tc, (1, 2) + (6, 7, 6), "float64", high=50, low=-50)
    tc.compare(lambda M, x: tuple(F(M).max_pool3d(x, 3, return_indices=True, **kw)), x3)


MAXPOOL_ERRORS = [
    (lambda f, x: f.max_pool2d(x, 3, padding=2)),
    (lambda f, x: f.max_pool2d(x, 3, stride=0)),
    (lambda f, x: f.max_pool2d(x, 3, dilation=0)),
    (lambda f, x: f.max_pool2d(x, 9)),
    (lambda f, x: f.max_pool2d(x, [2, 2, 2])),
    (lambda f, x: f.max_pool2d(x[0, 0, 0], 2)),
    (lambda f, x: f.max_pool2d(x[:, :0], 2)),
    (lambda f, x: f.max_pool2d(x.bool(), 2)),
    (lambda f, x: f.max_pool1d(x[0, 0, 0], 2)),
    (lambda f, x: f.max_pool1d(x[0, 0], 2, padding=2)),
    (lambda f, x: f.max_pool1d(x[0, 0, 0], 2, return_indices=True)),
    (lambda f, x: f.avg_pool2d(x, 3, padding=2)),
    (lambda f, x: f.avg_pool2d(x, 9)),
    (lambda f, x: f.avg_pool2d(x, 2, divisor_override=0)),
    (lambda f, x: f.avg_pool1d(x[0, 0, 0], 2)),
    (lambda f, x: f.adaptive_avg_pool2d(x, (2, 2, 2))),
    (lambda f, x: f.adaptive_avg_pool2d(x.long(), 3)),
    (lambda f, x: f.adaptive_max_pool2d(x.long(), 3)),
    (lambda f, x: f.adaptive_max_pool2d(x[:, :0], 3)),
]


@pytest.mark.parametrize("case", range(len(MAXPOOL_ERRORS)))
def test_pool_errors(tc, case):
    x = rand(tc, (2, 3, 7, 7))
    assert isinstance(tc.compare(lambda M, x: MAXPOOL_ERRORS[case](F(M), x), x), Exception)


AVGPOOL2D = [
    (2, {}),
    (3, {"stride": 2, "padding": 1}),
    (3, {"stride": 2, "padding": 1, "count_include_pad": False}),
    (3, {"stride": 2, "padding": 1, "ceil_mode": True}),
    (3, {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ((2, 3), {"stride": (1, 2), "divisor_override": 5}),
]


@pytest.mark.parametrize("case", range(len(AVGPOOL2D)))
@pytest.mark.parametrize("dtype", FLOATS + ["int64"])
def test_avg_pool2d(tc, case, dtype):
    k, kw = AVGPOOL2D[case]
    x = rand(tc, (2, 3, 7, 8), dtype, low=-20, high=20)
    tc.compare(lambda M, x: F(M).avg_pool2d(x, k, **kw), x)


@pytest.mark.parametrize("kw", [{}, {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}])
def test_avg_pool1d_3d(tc, kw):
    x = rand(tc, (2, 3, 9), "float64")
    tc.compare(lambda M, x: F(M).avg_pool1d(x, 3, **kw), x)
    x3 = rand(tc, (2, 2, 5, 6, 7), "float64")
    tc.compare(lambda M, x: F(M).avg_pool3d(x, 3, **kw), x3)


@pytest.mark.parametrize("out", [1, 3, (2, 5), (4, None), (7, 8), (9, 3)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_adaptive_pool2d(tc, out, dtype):
    x = rand(tc, (2, 3, 7, 8), dtype, high=30, low=-30)
    tc.compare(lambda M, x: F(M).adaptive_avg_pool2d(x, out), x)
    tc.compare(lambda M, x: tuple(F(M).adaptive_max_pool2d(x, out, return_indices=True)), x)
    tc.compare(lambda M, x: F(M).adaptive_avg_pool2d(x[0], out), x)


@pytest.mark.parametrize("out", [1, 3, 5, 9])
def test_adaptive_pool1d(tc, out):
    x = rand(tc, (2, 3, 7), "float64", high=30, low=-30)
    tc.compare(lambda M, x: F(M).adaptive_avg_pool1d(x, out), x)
    tc.compare(lambda M, x: tuple(F(M).adaptive_max_pool1d(x, out, return_indices=True)), x)


def test_pool_empty_batch(tc):
    x = rand(tc, (0, 3, 6, 6))
    tc.compare(lambda M, x: tuple(F(M).max_pool2d(x, 2, return_indices=True)), x)
    tc.compare(lambda M, x: F(M).avg_pool2d(x, 2), x)
    tc.compare(lambda M, x: F(M).adaptive_avg_pool2d(x, 3), x)


# ---- softmax -------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", FLOATS + HALVES)
def test_softmax(tc, dim, dtype):
    x = rand(tc, (3, 4, 5), dtype)
    tc.compare(lambda M, x: F(M).softmax(x, dim), x)
    tc.compare(lambda M, x: F(M).log_softmax(x, dim), x)
    tc.compare(lambda M, x: F(M).softmin(x, dim), x)
    tc.compare(lambda M, x: M.softmax(x, dim), x)
    tc.compare(lambda M, x: x.log_softmax(dim), x)


def test_softmax_dtype_special_and_errors(tc):
    x = rand(tc, (3, 4), "float32")
    tc.compare(lambda M, x: F(M).softmax(x, 1, dtype=M.float64), x)
    tc.compare(lambda M, x: F(M).log_softmax(x.long(), 0, dtype=M.float32), x)
    tc.compare(lambda M, x: F(M).softmax(x.long(), 1), x)
    tc.compare(lambda M, x: F(M).softmax(x.long(), 0), x)
    tc.compare(lambda M, x: F(M).log_softmax(x.long(), 1), x)
    tc.compare(lambda M, x: F(M).softmax(x, 2), x)
    tc.compare(lambda M, x: F(M).softmax(x[0, 0], 0), x)
    tc.compare(lambda M, x: F(M).log_softmax(x[:0], 1), x)
    special = tc.pair("float32", (2, 6), special=True)
    tc.compare(lambda M, x: F(M).softmax(x, 1), special)
    big = tc.pair_from_numpy(np.array([[1000.0, 0.0, -1000.0]], dtype=np.float32))
    tc.compare(lambda M, x: F(M).log_softmax(x, 1), big)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        TF.softmax(x.tp)


# ---- normalization ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("norm", [[5], [4, 5]])
@pytest.mark.parametrize("dtype", FLOATS + HALVES)
def test_layer_norm(tc, affine, norm, dtype):
    x = rand(tc, (3, 4, 5), dtype)
    w = rand(tc, tuple(norm), dtype, seed=1) if affine else None
    b = rand(tc, tuple(norm), dtype, seed=2) if affine else None
    tc.compare(lambda M, x, w, b: F(M).layer_norm(x, norm, w, b, eps=1e-3), x, w, b)
    tc.compare(lambda M, x, w, b: M.native_layer_norm(x, norm, w, b, 1e-5), x, w, b)


def test_layer_norm_mixed_and_errors(tc):
    x = rand(tc, (3, 4, 5), "bfloat16")
    w = rand(tc, (5,), "float32", seed=1)
    tc.compare(lambda M, x, w: M.native_layer_norm(x, [5], w, w, 1e-5), x, w)
    x = rand(tc, (3, 4, 5))
    tc.compare(lambda M, x: F(M).layer_norm(x, [4]), x)
    tc.compare(lambda M, x: F(M).layer_norm(x, [5], x[0, 0, :4]), x)
    tc.compare(lambda M, x: F(M).layer_norm(x, [5], None, x[0, :, 0]), x)
    tc.compare(lambda M, x: F(M).layer_norm(x.long(), [5]), x)
    tc.compare(lambda M, x: F(M).layer_norm(x[:0], [4, 5]), x)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_training(tc, shape, affine, dtype):
    x = rand(tc, shape, dtype)
    w = rand(tc, (3,), dtype, seed=1) if affine else None
    b = rand(tc, (3,), dtype, seed=2) if affine else None
    rm_np, rv_np = np.linspace(-1, 1, 3).astype(dtype), np.linspace(0.5, 2, 3).astype(dtype)
    rm, rv = tc.pair_from_numpy(rm_np), tc.pair_from_numpy(rv_np)
    tc.compare(lambda M, x, w, b, rm, rv: F(M).batch_norm(x, rm, rv, w, b, training=True, momentum=0.3), x, w, b, rm, rv)
    tc.assert_same(rm.tp, rm.th)  # running stats were updated the same way
    tc.assert_same(rv.tp, rv.th)
    tc.compare(lambda M, x, w, b, rm, rv: F(M).batch_norm(x, rm, rv, w, b, training=False), x, w, b, rm, rv)
    tc.compare(lambda M, x, w, b: F(M).batch_norm(x, None, None, w, b, training=True), x, w, b)
    tc.compare(lambda M, x, rm, rv: M.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5), x, rm, rv)


def test_batch_norm_half_and_errors(tc):
    x = rand(tc, (4, 3, 5), "bfloat16")
    rm, rv = tc.pair_from_numpy(np.zeros(3, np.float32)), tc.pair_from_numpy(np.ones(3, np.float32))
    tc.compare(lambda M, x, rm, rv: M.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5), x, rm, rv)
    x = rand(tc, (4, 3))
    tc.compare(lambda M, x: F(M).batch_norm(x, None, None, training=False), x)
    tc.compare(lambda M, x: F(M).batch_norm(x, x[0, :2], x[1], training=False), x)
    tc.compare(lambda M, x: F(M).batch_norm(x, None, None, x[0, :2], training=True), x)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        TF.batch_norm(x.tp[:1], None, None, training=True)


def test_instance_and_group_norm(tc):
    x = rand(tc, (2, 4, 5, 3), "float64")
    w, b = rand(tc, (4,), "float64", seed=1), rand(tc, (4,), "float64", seed=2)
    tc.compare(lambda M, x, w, b: F(M).instance_norm(x, weight=w, bias=b), x, w, b)
    rm, rv = tc.pair_from_numpy(np.zeros(4)), tc.pair_from_numpy(np.ones(4))
    tc.compare(lambda M, x, rm, rv: F(M).instance_norm(x, rm, rv, momentum=0.2), x, rm, rv)
    tc.assert_same(rm.tp, rm.th)
    tc.assert_same(rv.tp, rv.th)
    for groups in (1, 2, 4):
        tc.compare(lambda M, x, w, b: F(M).group_norm(x, groups, w, b, eps=1e-3), x, w, b)
        tc.compare(lambda M, x: F(M).group_norm(x, groups), x)
        tc.compare(lambda M, x: M.native_group_norm(x, None, None, 2, 4, 15, groups, 1e-5), x)
    tc.compare(lambda M, x: F(M).group_norm(x, 3), x)
    tc.compare(lambda M, x, w: F(M).group_norm(x, 2, w[:3]), x, w)
    tc.compare(lambda M, x: F(M).group_norm(x.long(), 2), x)
    xh = rand(tc, (2, 4, 5), "float16")
    tc.compare(lambda M, x: F(M).group_norm(x, 2), xh)


@pytest.mark.parametrize("dtype", FLOATS + HALVES)
def test_rms_norm(tc, dtype):
    x = rand(tc, (3, 4, 5), dtype)
    w = rand(tc, (4, 5), dtype, seed=1)
    tc.compare(lambda M, x: F(M).rms_norm(x, [5]), x)
    tc.compare(lambda M, x, w: F(M).rms_norm(x, [4, 5], w, eps=1e-3), x, w)
    tc.compare(lambda M, x, w: F(M).rms_norm(x, [4, 5], w[0]), x, w)


@pytest.mark.parametrize("p", [1, 2, 3, float("inf")])
def test_normalize(tc, p):
    x = rand(tc, (3, 4, 5), "float64")
    tc.compare(lambda M, x: F(M).normalize(x, p=p), x)
    tc.compare(lambda M, x: F(M).normalize(x, p=p, dim=-1), x)
    tc.compare(lambda M, x: F(M).normalize(x * 0, dim=0), x)


# ---- dropout (statistics; PyTorch's stream cannot be matched) -----------------------------------------------------------------
def test_dropout_statistics():
    torchplug.manual_seed(0)
    x = torchplug.ones(200, 500)
    y = TF.dropout(x, 0.3)
    kept = (y != 0).float().mean().item()
    assert abs(kept - 0.7) < 0.01
    vals = y[y != 0]
    assert torchplug.allclose(vals, torchplug.full_like(vals, 1 / 0.7))
    assert abs(y.mean().item() - 1.0) < 0.02
    assert TF.dropout(x, 0.3, training=False) is x
    assert TF.dropout(x, 0.0) is x
    assert (TF.dropout(x, 1.0) == 0).all().item()
    torchplug.manual_seed(5)
    a = TF.dropout(x, 0.5)
    torchplug.manual_seed(5)
    b = TF.dropout(x, 0.5)
    assert torchplug.equal(a, b)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        TF.dropout(x, 1.5)


def test_dropout_inplace_and_feature():
    torchplug.manual_seed(1)
    x = torchplug.ones(50, 40, 3, 3)
    v = x._version
    out = TF.dropout(x, 0.5, inplace=True)
    assert out is x and x._version > v
    assert abs((x != 0).float().mean().item() - 0.5) < 0.02
    z = torchplug.ones(50, 40, 3, 3)
    y = TF.dropout2d(z, 0.25)
    per_channel = y.reshape(50, 40, 9)
    # whole channels are dropped together
    assert ((per_channel == 0).all(-1) | (per_channel != 0).all(-1)).all().item()
    assert abs((per_channel[:, :, 0] != 0).float().mean().item() - 0.75) < 0.03
    y1 = TF.dropout1d(torchplug.ones(40, 6), 0.5)
    assert ((y1 == 0).all(-1) | (y1 != 0).all(-1)).all().item()
    y3 = TF.dropout3d(torchplug.ones(2, 30, 2, 2, 2), 0.5)
    assert y3.shape == (2, 30, 2, 2, 2)
    a = TF.alpha_dropout(torchplug.randn(20000), 0.2, training=True)
    assert abs(a.mean().item()) < 0.05 and abs(a.std().item() - 1) < 0.05
    assert TF.feature_alpha_dropout(torchplug.randn(10, 4, 3), 0.2, training=True).shape == (10, 4, 3)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        TF.dropout1d(torchplug.ones(2, 3, 4, 5))


def test_native_dropout():
    torchplug.manual_seed(3)
    x = torchplug.randn(100, 100)
    out, mask = torchplug.native_dropout(x, 0.4, True)
    assert mask.dtype is torchplug.bool
    assert torchplug.allclose(out, x * mask / 0.6)
    g = torchplug.ones(100, 100)
    assert torchplug.allclose(torchplug.ops.aten.native_dropout_backward(g, mask, 1 / 0.6), mask.float() / 0.6)
    out, mask = torchplug.native_dropout(x, 0.4, False)
    assert torchplug.equal(out, x) and mask.all().item()


# ---- embedding / one_hot ---------------------------------------------------------------------------------------------------------
def test_embedding(tc):
    w = rand(tc, (10, 3), "float64")
    idx = tc.pair_from_numpy(np.array([[1, 2, 4], [4, 3, 9]]))
    tc.compare(lambda M, w, i: F(M).embedding(i, w), w, idx)
    tc.compare(lambda M, w, i: F(M).embedding(i[0], w, padding_idx=-1), w, idx)
    tc.compare(lambda M, w, i: F(M).embedding(i.int(), w), w, idx)
    tc.compare(lambda M, w, i: F(M).embedding(i.float(), w), w, idx)
    tc.compare(lambda M, w, i: F(M).embedding(i, w[0]), w, idx)
    w2 = rand(tc, (10, 3), "float64")
    tc.compare(lambda M, w, i: (F(M).embedding(i, w, max_norm=1.0), w), w2, idx)


@pytest.mark.parametrize("n", [-1, 6])
def test_one_hot(tc, n):
    idx = tc.pair_from_numpy(np.array([[0, 2], [4, 1]]))
    tc.compare(lambda M, i: F(M).one_hot(i, n), idx)
    tc.compare(lambda M, i: F(M).one_hot(i[:0], n), idx)
    tc.compare(lambda M, i: F(M).one_hot(i - 1, n), idx)
    tc.compare(lambda M, i: F(M).one_hot(i.int(), n), idx)
    tc.compare(lambda M, i: F(M).one_hot(i, 3), idx)


# ---- activations ----------------------------------------------------------------------------------------------------------------
ACTIVATIONS = {
    "gelu": lambda f, x: f.gelu(x),
    "gelu_tanh": lambda f, x: f.gelu(x, approximate="tanh"),
    "silu": lambda f, x: f.silu(x),
    "elu": lambda f, x: f.elu(x, 0.7),
    "selu": lambda f, x: f.selu(x),
    "celu": lambda f, x: f.celu(x, 1.3),
    "leaky_relu": lambda f, x: f.leaky_relu(x, 0.2),
    "hardtanh": lambda f, x: f.hardtanh(x, -0.5, 1.5),
    "relu6": lambda f, x: f.relu6(x),
    "relu": lambda f, x: f.relu(x),
    "softplus": lambda f, x: f.softplus(x),
    "softplus_beta": lambda f, x: f.softplus(x, beta=2, threshold=3),
    "mish": lambda f, x: f.mish(x),
    "hardswish": lambda f, x: f.hardswish(x),
    "hardsigmoid": lambda f, x: f.hardsigmoid(x),
    "logsigmoid": lambda f, x: f.logsigmoid(x),
    "softsign": lambda f, x: f.softsign(x),
    "tanhshrink": lambda f, x: f.tanhshrink(x),
    "threshold": lambda f, x: f.threshold(x, 0.5, -2.0),
    "hardshrink": lambda f, x: f.hardshrink(x, 1.0),
    "softshrink": lambda f, x: f.softshrink(x, 1.0),
    "glu": lambda f, x: f.glu(x, 0),
    "glu_last": lambda f, x: f.glu(x),
    "rrelu_eval": lambda f, x: f.rrelu(x),
}


@pytest.mark.parametrize("dtype", FLOATS + HALVES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation(tc, name, dtype):
    from torchplug.testing.reference_quirks import correct_reference

    def act(M, x):
        out = ACTIVATIONS[name](F(M), x)
        if M.__name__ == "torch" and name == "gelu":  # torch's gelu(+inf) depends on its CPU dispatch level
            out = correct_reference("nn.functional.gelu", dtype, (x,), {}, out)
        return out

    x = tc.pair(dtype, (4, 6), low=-25, high=25, special=True)
    tc.compare(act, x)
    y = tc.pair(dtype, (2, 3), layout="transposed")
    tc.compare(act, y)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_int_and_bool(tc, name):
    for dtype in ("int64", "bool"):
        x = tc.pair(dtype, (4, 6))
        tc.compare(lambda M, x: ACTIVATIONS[name](F(M), x), x)


INPLACE = ["elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6", "relu", "threshold", "hardsigmoid", "silu",
           "mish", "hardswish", "rrelu"]


@pytest.mark.parametrize("name", INPLACE)
def test_activation_inplace(tc, name):
    args = {"threshold": (0.1, 20.0)}.get(name, ())
    x = tc.pair("float64", (3, 5))

    def fn(M, x):
        y = x.clone()
        out = getattr(F(M), name)(y, *args, inplace=True)
        return out, y

    tc.compare(fn, x)


def test_prelu(tc):
    x = rand(tc, (2, 3, 4), "float64")
    w = tc.pair_from_numpy(np.array([0.1, -0.2, 0.3]))
    tc.compare(lambda M, x, w: F(M).prelu(x, w), x, w)
    tc.compare(lambda M, x, w: F(M).prelu(x, w[:1]), x, w)
    tc.compare(lambda M, x, w: M.prelu(x[0, 0], w[:1]), x, w)
    tc.compare(lambda M, x, w: x.prelu(w), x, w)
    tc.compare(lambda M, x, w: F(M).prelu(x, w[:2]), x, w)
    tc.compare(lambda M, x, w: F(M).prelu(x, w.float()), x, w)
    tc.compare(lambda M, x, w: F(M).prelu(x, w.reshape(3, 1)), x, w)


def test_activation_errors(tc):
    x = rand(tc, (4, 3))
    tc.compare(lambda M, x: F(M).gelu(x, approximate="fast"), x)
    tc.compare(lambda M, x: F(M).glu(x, 1), x)
    tc.compare(lambda M, x: F(M).glu(x.sum()), x)
    tc.compare(lambda M, x: F(M).softshrink(x, -1.0), x)
    tc.compare(lambda M, x: F(M).hardtanh(x, 2.0, 1.0), x)


# ---- losses ------------------------------------------------------------------------------------------------------------------------
REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 2])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (3, 4, 5), (2, 4, 3, 2), (2, 4, 2, 3, 2)])
def test_nll_loss(tc, reduction, weighted, ignore, shape):
    x = rand(tc, shape, "float64")
    t_shape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = tc.pair_from_numpy(np.random.default_rng(len(shape)).integers(0, 4, t_shape))
    w = tc.pair_from_numpy(np.array([0.5, 1.0, 2.0, 1.5])) if weighted else None
    tc.compare(lambda M, x, t, w: F(M).nll_loss(x, t, w, ignore_index=ignore, reduction=reduction), x, t, w)
    tc.compare(lambda M, x, t, w: F(M).cross_entropy(x, t, w, ignore_index=ignore, reduction=reduction), x, t, w)
    tc.compare(lambda M, x, t, w: F(M).cross_entropy(x, t, w, ignore_index=ignore, reduction=reduction,
                                                     label_smoothing=0.2), x, t, w)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(tc, reduction, weighted, smoothing):
    x = rand(tc, (5, 4, 3), "float64")
    p = tc.pair_from_numpy(np.random.default_rng(1).dirichlet(np.ones(4), (5, 3)).transpose(0, 2, 1).copy())
    w = tc.pair_from_numpy(np.array([0.5, 1.0, 2.0, 1.5])) if weighted else None
    tc.compare(lambda M, x, p, w: F(M).cross_entropy(x, p, w, reduction=reduction, label_smoothing=smoothing), x, p, w)


@pytest.mark.parametrize("dtype", FLOATS + HALVES)
def test_cross_entropy_dtypes(tc, dtype):
    x = rand(tc, (6, 5), dtype)
    t = tc.pair_from_numpy(np.array([0, 1, 4, 2, 3, 1]))
    tc.compare(lambda M, x, t: F(M).cross_entropy(x, t), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(F(M).log_softmax(x, 1), t, reduction="none"), x, t)


def test_loss_errors(tc):
    x = rand(tc, (5, 4), "float32")
    t = tc.pair_from_numpy(np.array([0, 1, 3, 2, 1]))
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t + 4), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t[:3]), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t.float()), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t, x[0, :3]), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t, reduction="avg"), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x.reshape(5, 2, 2), t.reshape(5, 1)), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x[0, 0], t), x, t)
    tc.compare(lambda M, x, t: F(M).cross_entropy(x, x.long()), x, t)
    tc.compare(lambda M, x, t: F(M).cross_entropy(x, F(M).softmax(x, 1), ignore_index=1), x, t)
    tc.compare(lambda M, x, t: F(M).cross_entropy(x, t, label_smoothing=1.5), x, t)
    tc.compare(lambda M, x, t: F(M).cross_entropy(x, F(M).softmax(x, 1), x[0, :3]), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x[:0], t[:0]), x, t)
    tc.compare(lambda M, x, t: F(M).cross_entropy(x[:0], t[:0], reduction="sum"), x, t)
    tc.compare(lambda M, x, t: F(M).nll_loss(x, t * 0 - 100), x, t)


REGRESSION = {
    "mse": lambda f, x, y, r: f.mse_loss(x, y, reduction=r),
    "l1": lambda f, x, y, r: f.l1_loss(x, y, reduction=r),
    "smooth_l1": lambda f, x, y, r: f.smooth_l1_loss(x, y, reduction=r, beta=0.5),
    "smooth_l1_0": lambda f, x, y, r: f.smooth_l1_loss(x, y, reduction=r, beta=0.0),
    "huber": lambda f, x, y, r: f.huber_loss(x, y, reduction=r, delta=0.7),
    "kl": lambda f, x, y, r: f.kl_div(x, y, reduction=r),
    "kl_log": lambda f, x, y, r: f.kl_div(x, y, reduction=r, log_target=True),
    "bce_logits": lambda f, x, y, r: f.binary_cross_entropy_with_logits(x, y.abs() / 4, reduction=r),
}


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("dtype", FLOATS + HALVES)
@pytest.mark.parametrize("name", list(REGRESSION))
def test_regression_losses(tc, name, dtype, reduction):
    if reduction == "batchmean" and not name.startswith("kl"):
        return
    x, y = rand(tc, (4, 5), dtype), rand(tc, (4, 5), dtype, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc.compare(lambda M, x, y: REGRESSION[name](F(M), x, y, reduction), x, y)


def test_loss_weights_and_broadcast(tc):
    x, y, w = rand(tc, (4, 5), "float64"), rand(tc, (4, 5), "float64", seed=1), rand(tc, (4, 5), "float64", seed=2)
    for r in REDUCTIONS:
        tc.compare(lambda M, x, y, w: F(M).mse_loss(x, y, reduction=r, weight=w.abs()), x, y, w)
        tc.compare(lambda M, x, y, w: F(M).l1_loss(x, y, reduction=r, weight=w.abs()), x, y, w)
        tc.compare(lambda M, x, y, w: F(M).huber_loss(x, y, reduction=r, weight=w.abs()), x, y, w)
        tc.compare(lambda M, x, y, w: F(M).binary_cross_entropy_with_logits(x, y.sigmoid(), w, reduction=r,
                                                                            pos_weight=w[0].abs()), x, y, w)
    with pytest.warns(UserWarning, match="Using a target size"):
        out = TF.mse_loss(x.tp, y.tp[0])
    tc.assert_same(out, TorchF.mse_loss(x.th, y.th[0].expand(4, 5)))
    tc.compare(lambda M, x, y: F(M).smooth_l1_loss(x, y, beta=-1.0), x, y)
    tc.compare(lambda M, x, y: F(M).huber_loss(x, y, delta=0.0), x, y)
    tc.compare(lambda M, x, y: F(M).binary_cross_entropy_with_logits(x, y[0]), x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc.compare(lambda M, x, y: F(M).mse_loss(x, y, size_average=False), x, y)
        tc.compare(lambda M, x, y: F(M).l1_loss(x, y, reduce=False), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_cross_entropy(tc, reduction, dtype):
    x = tc.pair_from_numpy(np.random.default_rng(0).uniform(0, 1, (4, 5)).astype(dtype))
    x.tp[0, 0] = 0.0
    x.th[0, 0] = 0.0
    x.tp[1, 1] = 1.0
    x.th[1, 1] = 1.0
    y = tc.pair_from_numpy(np.random.default_rng(1).uniform(0, 1, (4, 5)).astype(dtype))
    w = tc.pair_from_numpy(np.random.default_rng(2).uniform(0, 2, (5,)).astype(dtype))
    tc.compare(lambda M, x, y: F(M).binary_cross_entropy(x, y, reduction=reduction), x, y)
    tc.compare(lambda M, x, y, w: F(M).binary_cross_entropy(x, y, w, reduction=reduction), x, y, w)
    tc.compare(lambda M, x, y: F(M).binary_cross_entropy(x * 2, y), x, y)
    tc.compare(lambda M, x, y: F(M).binary_cross_entropy(x, y[0]), x, y)


# ---- attention ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": "bool"}, {"mask": "float"}])
@pytest.mark.parametrize("dtype", FLOATS)
def test_sdpa(tc, kw, dtype):
    q, k, v = rand(tc, (2, 3, 4, 8), dtype), rand(tc, (2, 3, 5, 8), dtype, seed=1), rand(tc, (2, 3, 5, 6), dtype, seed=2)
    kw = dict(kw)
    mask = kw.pop("mask", None)
    if mask == "bool":
        m = tc.pair_from_numpy(np.random.default_rng(0).integers(0, 2, (4, 5)).astype(bool) | np.eye(4, 5, dtype=bool))
    elif mask == "float":
        m = rand(tc, (4, 5), dtype, seed=3)
    else:
        m = None
    if kw.get("is_causal"):
        k, v = rand(tc, (2, 3, 4, 8), dtype, seed=1), rand(tc, (2, 3, 4, 6), dtype, seed=2)
    tc.compare(lambda M, q, k, v, m: F(M).scaled_dot_product_attention(q, k, v, m, **kw), q, k, v, m)


def test_sdpa_gqa(tc):
    q, k, v = rand(tc, (2, 4, 3, 8), "float64"), rand(tc, (2, 2, 5, 8), "float64", seed=1), rand(tc, (2, 2, 5, 8), "float64", seed=2)
    tc.compare(lambda M, q, k, v: F(M).scaled_dot_product_attention(q, k, v, enable_gqa=True), q, k, v)


def test_sdpa_dropout_shape():
    q = torchplug.randn(2, 3, 4)
    out = TF.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert out.shape == (2, 3, 4)


# ---- padding ------------------------------------------------------------------------------------------------------------------------
PADS = [
    ("constant", (2, 4), [1, 2]),
    ("constant", (2, 3, 4), [1, 2, 0, 3]),
    ("constant", (2, 3, 4), [-1, 2, 1, -1]),
    ("constant", (2, 3, 4), [1, 1, 1, 1, 1, 1]),
    ("reflect", (2, 3, 5), [2, 3]),
    ("reflect", (3, 5), [4, 1]),
    ("reflect", (2, 3, 4, 5), [1, 2, 3, 0]),
    ("reflect", (1, 2, 3, 4, 5), [1, 2, 2, 0, 1, 1]),
    ("replicate", (2, 3, 5), [3, 7]),
    ("replicate", (2, 3, 4, 5), [1, 2, 3, 0]),
    ("replicate", (2, 3, 4, 4, 5), [1, 2, 3, 0, 1, 1]),
    ("replicate", (2, 3, 5), [-1, 2]),
    ("circular", (2, 3, 5), [2, 3]),
    ("circular", (2, 3, 4, 5), [1, 2, 3, 0]),
    ("circular", (2, 3, 4, 5), [-1, 2, 1, -2]),
    ("circular", (1, 2, 3, 4, 5), [1, 2, 2, 0, 1, 1]),
]


@pytest.mark.parametrize("case", range(len(PADS)))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_pad(tc, case, dtype):
    mode, shape, pad = PADS[case]
    x = rand(tc, shape, dtype)
    tc.compare(lambda M, x: F(M).pad(x, pad, mode=mode), x)
    if mode == "constant":
        tc.compare(lambda M, x: F(M).pad(x, pad, value=3.0), x)
        tc.compare(lambda M, x: M.constant_pad_nd(x, pad, 2), x)


def test_pad_errors(tc):
    x = rand(tc, (2, 3, 4))
    tc.compare(lambda M, x: F(M).pad(x, [1, 2, 3]), x)
    tc.compare(lambda M, x: F(M).pad(x, [1] * 8), x)
    tc.compare(lambda M, x: F(M).pad(x, [-3, -2]), x)
    tc.compare(lambda M, x: F(M).pad(x, [4, 0], mode="reflect"), x)
    tc.compare(lambda M, x: F(M).pad(x, [1, 1], mode="reflect", value=1.0), x)
    tc.compare(lambda M, x: F(M).pad(x, [1, 1], mode="wrap"), x)
    tc.compare(lambda M, x: F(M).pad(x, [5, 0], mode="circular"), x)
    tc.compare(lambda M, x: F(M).pad(x[0, 0], [1, 1], mode="replicate"), x)
    tc.compare(lambda M, x: F(M).pad(x, [1, 1, 1, 1, 1, 1], mode="reflect"), x)


# ---- interpolation ---------------------------------------------------------------------------------------------------------------------
INTERP = [
    ("nearest", (2, 3, 5), {"size": 9}),
    ("nearest", (2, 3, 5), {"scale_factor": 2}),
    ("nearest", (2, 3, 4, 5), {"size": (7, 3)}),
    ("nearest", (2, 3, 4, 5), {"scale_factor": 1.7}),
    ("nearest", (1, 2, 3, 4, 5), {"scale_factor": (2, 0.6, 1.5)}),
    ("nearest-exact", (2, 3, 4, 5), {"size": (7, 3)}),
    ("nearest-exact", (2, 3, 5), {"scale_factor": 1.3}),
    ("linear", (2, 3, 5), {"size": 8}),
    ("linear", (2, 3, 5), {"size": 8, "align_corners": True}),
    ("bilinear", (2, 3, 4, 5), {"size": (7, 3)}),
    ("bilinear", (2, 3, 4, 5), {"scale_factor": 2.5, "align_corners": True}),
    ("bilinear", (2, 3, 4, 5), {"scale_factor": (1.5, 0.7)}),
    ("bilinear", (2, 3, 4, 5), {"scale_factor": 1.5, "recompute_scale_factor": True}),
    ("trilinear", (1, 2, 3, 4, 5), {"size": (4, 6, 3)}),
    ("area", (2, 3, 8, 9), {"size": (3, 4)}),
    ("area", (2, 3, 8), {"scale_factor": 0.5}),
]


@pytest.mark.parametrize("case", range(len(INTERP)))
@pytest.mark.parametrize("dtype", FLOATS)
def test_interpolate(tc, case, dtype):
    mode, shape, kw = INTERP[case]
    x = rand(tc, shape, dtype)
    tc.compare(lambda M, x: F(M).interpolate(x, mode=mode, **kw), x)


def test_interpolate_errors(tc):
    x = rand(tc, (2, 3, 4, 5))
    tc.compare(lambda M, x: F(M).interpolate(x, size=3, scale_factor=2), x)
    tc.compare(lambda M, x: F(M).interpolate(x), x)
    tc.compare(lambda M, x: F(M).interpolate(x, size=(2, 3, 4)), x)
    tc.compare(lambda M, x: F(M).interpolate(x, size=3, mode="nearest", align_corners=True), x)
    tc.compare(lambda M, x: F(M).interpolate(x, size=3, mode="linear"), x)
    tc.compare(lambda M, x: F(M).interpolate(x, size=3, recompute_scale_factor=True), x)
    tc.compare(lambda M, x: F(M).interpolate(x.long(), size=3, mode="bilinear"), x)


# ---- unfold / fold / shuffles / distances --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"stride": 2}, {"padding": 1, "dilation": 2}, {"stride": (2, 1), "padding": (0, 1)}])
@pytest.mark.parametrize("dtype", FLOATS)
def test_unfold_fold(tc, kw, dtype):
    x = rand(tc, (2, 3, 7, 6), dtype)
    tc.compare(lambda M, x: F(M).unfold(x, (3, 2), **kw), x)
    tc.compare(lambda M, x: F(M).unfold(x[0], 2, **kw), x)
    cols = TorchF.unfold(x.th, (3, 2), **kw)
    c = tc.pair_from_numpy(cols.numpy())
    tc.compare(lambda M, c: F(M).fold(c, (7, 6), (3, 2), **kw), c)
    tc.compare(lambda M, c: F(M).fold(c[0], (7, 6), (3, 2), **kw), c)


def test_unfold_fold_errors(tc):
    x = rand(tc, (2, 3, 4, 4))
    tc.compare(lambda M, x: F(M).unfold(x, 5), x)
    tc.compare(lambda M, x: F(M).unfold(x[0, 0], 2), x)
    tc.compare(lambda M, x: F(M).fold(x[0], (4, 4), 3), x)
    tc.compare(lambda M, x: F(M).fold(x[0, :, :, :2].reshape(1, 8, 2), (4, 4), 2), x)


def test_pixel_shuffle(tc):
    x = rand(tc, (2, 8, 3, 4), "float64")
    tc.compare(lambda M, x: F(M).pixel_shuffle(x, 2), x)
    tc.compare(lambda M, x: F(M).pixel_unshuffle(x, 1), x)
    tc.compare(lambda M, x: F(M).pixel_unshuffle(F(M).pixel_shuffle(x, 2), 2), x)
    tc.compare(lambda M, x: F(M).pixel_shuffle(x[0], 2), x)
    tc.compare(lambda M, x: F(M).pixel_shuffle(x, 3), x)
    tc.compare(lambda M, x: F(M).pixel_unshuffle(x, 3), x)
    tc.compare(lambda M, x: F(M).pixel_shuffle(x[0, 0], 2), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_distances(tc, dtype):
    a, b = rand(tc, (4, 5), dtype), rand(tc, (4, 5), dtype, seed=1)
    tc.compare(lambda M, a, b: F(M).cosine_similarity(a, b), a, b)
    tc.compare(lambda M, a, b: F(M).cosine_similarity(a, b[0], dim=-1), a, b)
    tc.compare(lambda M, a, b: F(M).cosine_similarity(a, b * 0, dim=0), a, b)
    tc.compare(lambda M, a, b: M.cosine_similarity(a.long(), b.long()), a, b)
    for p in (1.0, 2.0, 3.0, float("inf"), 0.0):
        tc.compare(lambda M, a, b: F(M).pairwise_distance(a, b, p=p), a, b)
        tc.compare(lambda M, a, b: F(M).pairwise_distance(a, b[0], p=p, keepdim=True), a, b)


def test_top_level_functions(tc):
    x, w = rand(tc, (2, 4, 6, 6)), rand(tc, (3, 4, 3, 3), seed=1)
    tc.compare(lambda M, x, w: M.conv2d(x, w, None, 1, "same"), x, w)
    tc.compare(lambda M, x, w: M.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1), x, w)
    tc.compare(lambda M, x: M.max_pool2d(x, [2, 2]), x)
    tc.compare(lambda M, x: M.avg_pool1d(x[0], [2]), x)
    tc.compare(lambda M, x: M.layer_norm(x, [6]), x)
    tc.compare(lambda M, x: M.group_norm(x, 2), x)
    tc.compare(lambda M, x: M.selu(x), x)
    tc.compare(lambda M, x: M.pixel_shuffle(x, 2), x)
    tc.compare(lambda M, x: M.constant_pad_nd(x, [1, 1]), x)
    tc.compare(lambda M, x: M.threshold(x, 0.0, 1.0), x)
    tc.compare(lambda M, x: M.adaptive_avg_pool1d(x[0], [3]), x)
    tc.compare(lambda M, x: tuple(M.max_pool1d_with_indices(x[0], [2])), x)
