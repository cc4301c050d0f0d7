"""nn backward ops against ``torch.autograd.grad`` of the forward op on the same inputs.

Each case runs the forward in torch with ``requires_grad`` and takes the gradients for a random
``grad_output``; torchplug runs its forward op and then the backward op an autograd formula calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug

torch = pytest.importorskip("torch")
aten = torchplug.ops.aten


def _np(shape, seed, dtype="float64", low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _t(arr, requires_grad=False):
    return torch.from_numpy(arr.copy()).requires_grad_(requires_grad)


def _p(arr):
    return torchplug.from_numpy(arr.copy())


def _grads(torch_fn, arrays, grad_shape_of=0, seed=99):
    """torch's gradients of ``torch_fn(*tensors)[grad_shape_of]`` w.r.t. every float input, and grad_output."""
    ts = [_t(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = torch_fn(*ts)
    main = out[grad_shape_of] if isinstance(out, (tuple, list)) else out
    g = _np(tuple(main.shape), seed, str(main.dtype).split(".")[-1])
    wrt = [t for t in ts if t.requires_grad]
    grads = torch.autograd.grad(main, wrt, torch.from_numpy(g), allow_unused=True)
    return g, grads


def _close(actual, expected, rtol=1e-6, atol=1e-8):
    if expected is None:
        return
    assert actual is not None
    assert tuple(actual.shape) == tuple(expected.shape)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(actual.numpy(), expected.detach().numpy(), rtol=rtol, atol=atol)


# ---- convolution ------------------------------------------------------------------------------------------------
CONV = [
    ((2, 4, 7, 7), (6, 4, 3, 3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ((2, 4, 7, 8), (6, 2, 3, 2), [2, 1], [1, 2], [2, 1], False, [0, 0], 2),
    ((2, 4, 5, 5), (4, 3, 3, 3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
    ((2, 4, 5, 6), (4, 2, 3, 2), [2, 3], [0, 1], [2, 1], True, [1, 0], 2),
    ((2, 3, 9), (4, 3, 3), [2], [1], [1], False, [0], 1),
    ((1, 2, 4, 5, 4), (2, 2, 2, 3, 2), [1, 2, 1], [1, 0, 1], [1, 1, 1], False, [0, 0, 0], 1),
    ((64, 1, 8, 8), (8, 1, 3, 3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
]


@pytest.mark.parametrize("case", range(len(CONV)))
def test_convolution_backward(case):
    xs, ws, stride, padding, dilation, transposed, opad, groups = CONV[case]
    x, w = _np(xs, 0), _np(ws, 1)
    b = _np((ws[1] * groups if transposed else ws[0],), 2)
    g, (gx, gw, gb) = _grads(
        lambda x, w, b: torch.convolution(x, w, b, stride, padding, dilation, transposed, opad, groups), [x, w, b])
    got = aten.convolution_backward(_p(g), _p(x), _p(w), [b.shape[0]], stride, padding, dilation, transposed, opad,
                                    groups, [True, True, True])
    for a, e in zip(got, (gx, gw, gb)):
        _close(a, e)
    partial = aten.convolution_backward(_p(g), _p(x), _p(w), None, stride, padding, dilation, transposed, opad,
                                        groups, [False, True, False])
    assert partial[0] is None and partial[2] is None
    _close(partial[1], gw)


def test_convolution_backward_float32():
    x, w = _np((2, 3, 6, 6), 0, "float32"), _np((4, 3, 3, 3), 1, "float32")
    g, (gx, gw) = _grads(lambda x, w: torch.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1), [x, w])
    got = aten.convolution_backward(_p(g), _p(x), _p(w), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                    [True, True, False])
    _close(got[0], gx, 1e-5, 1e-5)
    _close(got[1], gw, 1e-5, 1e-5)


# ---- im2col / col2im are each other's backward -----------------------------------------------------------------
def test_im2col_col2im_backward():
    x = _np((2, 3, 6, 5), 0)
    k, d, p, s = [3, 2], [1, 2], [1, 0], [2, 1]
    g, (gx,) = _grads(lambda x: torch.nn.functional.unfold(x, k, d, p, s), [x])
    _close(aten.col2im(_p(g), [6, 5], k, d, p, s), gx)
    cols = torch.nn.functional.unfold(_t(x), k, d, p, s).detach().numpy()
    g2, (gc,) = _grads(lambda c: torch.nn.functional.fold(c, (6, 5), k, d, p, s), [cols])
    _close(aten.im2col(_p(g2), k, d, p, s), gc)


# ---- pooling ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [([2, 2], [], [0, 0], [1, 1], False), ([3, 3], [2, 2], [1, 1], [1, 1], True),
                                  ([3, 2], [1, 2], [1, 0], [2, 1], False)])
def test_max_pool2d_backward(args):
    x = _np((2, 3, 7, 8), 0)
    g, (gx,) = _grads(lambda x: torch.ops.aten.max_pool2d_with_indices(x, *args), [x])
    _, idx = aten.max_pool2d_with_indices(_p(x), *args)
    _close(aten.max_pool2d_with_indices_backward(_p(g), _p(x), *args, idx), gx)


def test_max_pool3d_backward():
    x = _np((1, 2, 5, 6, 5), 0)
    args = ([2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], True)
    g, (gx,) = _grads(lambda x: torch.ops.aten.max_pool3d_with_indices(x, *args), [x])
    _, idx = aten.max_pool3d_with_indices(_p(x), *args)
    _close(aten.max_pool3d_with_indices_backward(_p(g), _p(x), *args, idx), gx)


@pytest.mark.parametrize("args", [([2, 2], [], [0, 0], False, True, None), ([3, 3], [2, 2], [1, 1], True, False, None),
                                  ([3, 2], [1, 2], [1, 0], True, True, 4)])
def test_avg_pool2d_backward(args):
    x = _np((2, 3, 7, 8), 0)
    g, (gx,) = _grads(lambda x: torch.ops.aten.avg_pool2d(x, *args), [x])
    _close(aten.avg_pool2d_backward(_p(g), _p(x), *args), gx)
    x3 = _np((1, 2, 5, 6, 5), 0)
    args3 = ([2, 3, 2], [1, 2, 2], [1, 1, 0]) + args[3:]
    g3, (gx3,) = _grads(lambda x: torch.ops.aten.avg_pool3d(x, *args3), [x3])
    _close(aten.avg_pool3d_backward(_p(g3), _p(x3), *args3), gx3)


@pytest.mark.parametrize("out", [[3, 4], [1, 1], [5, 9]])
def test_adaptive_pool_backward(out):
    x = _np((2, 3, 7, 8), 0)
    g, (gx,) = _grads(lambda x: torch.ops.aten._adaptive_avg_pool2d(x, out), [x])
    _close(aten._adaptive_avg_pool2d_backward(_p(g), _p(x)), gx)
    g, (gx,) = _grads(lambda x: torch.ops.aten.adaptive_max_pool2d(x, out), [x])
    _, idx = aten.adaptive_max_pool2d(_p(x), out)
    _close(aten.adaptive_max_pool2d_backward(_p(g), _p(x), idx), gx)


# ---- softmax / norms ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_backward(dim, log):
    x = _np((3, 4, 5), 0)
    fw = torch._log_softmax if log else torch._softmax
    g, (gx,) = _grads(lambda x: fw(x, dim, False), [x])
    out = (aten._log_softmax if log else aten._softmax)(_p(x), dim, False)
    bw = aten._log_softmax_backward_data if log else aten._softmax_backward_data
    _close(bw(_p(g), out, dim, torchplug.float64), gx)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_backward(affine):
    x, w, b = _np((3, 4, 5), 0), _np((4, 5), 1), _np((4, 5), 2)
    if affine:
        g, grads = _grads(lambda x, w, b: torch.native_layer_norm(x, [4, 5], w, b, 1e-5), [x, w, b])
    else:
        g, grads = _grads(lambda x: torch.native_layer_norm(x, [4, 5], None, None, 1e-5), [x])
    pw, pb = (_p(w), _p(b)) if affine else (None, None)
    _, mean, rstd = aten.native_layer_norm(_p(x), [4, 5], pw, pb, 1e-5)
    got = aten.native_layer_norm_backward(_p(g), _p(x), [4, 5], mean, rstd, pw, pb, [True, affine, affine])
    for a, e in zip(got, grads):
        _close(a, e)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4, 5)])
def test_batch_norm_backward(training, shape):
    x, w, b = _np(shape, 0), _np((3,), 1), _np((3,), 2)
    rm, rv = _np((3,), 3), _np((3,), 4, low=0.5, high=2)
    g, grads = _grads(lambda x, w, b: torch.native_batch_norm(x, w, b, _t(rm), _t(rv), training, 0.1, 1e-5),
                      [x, w, b])
    prm, prv = _p(rm), _p(rv)
    _, sm, si = aten.native_batch_norm(_p(x), _p(w), _p(b), prm, prv, training, 0.1, 1e-5)
    got = aten.native_batch_norm_backward(_p(g), _p(x), _p(w), prm, prv, sm, si, training, 1e-5, [True, True, True])
    for a, e in zip(got, grads):
        _close(a, e)


def test_group_norm_backward():
    x, w, b = _np((2, 6, 5), 0), _np((6,), 1), _np((6,), 2)
    g, grads = _grads(lambda x, w, b: torch.native_group_norm(x, w, b, 2, 6, 5, 3, 1e-5), [x, w, b])
    _, mean, rstd = aten.native_group_norm(_p(x), _p(w), _p(b), 2, 6, 5, 3, 1e-5)
    got = aten.native_group_norm_backward(_p(g), _p(x), mean, rstd, _p(w), 2, 6, 5, 3, [True, True, True])
    for a, e in zip(got, grads):
        _close(a, e)


# ---- embedding / dropout -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("padding_idx,freq", [(-1, False), (2, False), (-1, True), (4, True)])
def test_embedding_dense_backward(padding_idx, freq):
    w = _np((6, 3), 0)
    idx = np.array([[1, 2, 4], [4, 4, 0]])
    g, (gw,) = _grads(lambda w: torch.embedding(w, torch.from_numpy(idx), padding_idx, freq), [w])
    _close(aten.embedding_dense_backward(_p(g), _p(idx), 6, padding_idx, freq), gw)


def test_native_dropout_backward():
    x = _np((50, 40), 0)
    out, mask = aten.native_dropout(_p(x), 0.3, True)
    g = _np((50, 40), 1)
    expected = torch.ops.aten.native_dropout_backward(_t(g), torch.from_numpy(mask.numpy()), 1 / 0.7)
    _close(aten.native_dropout_backward(_p(g), mask, 1 / 0.7), expected)


# ---- activations ---------------------------------------------------------------------------------------------------
ACT = {
    "gelu": (lambda x: torch.ops.aten.gelu(x), lambda g, x, y: aten.gelu_backward(g, x)),
    "gelu_tanh": (lambda x: torch.ops.aten.gelu(x, approximate="tanh"),
                  lambda g, x, y: aten.gelu_backward(g, x, approximate="tanh")),
    "silu": (torch.ops.aten.silu, lambda g, x, y: aten.silu_backward(g, x)),
    "mish": (torch.ops.aten.mish, lambda g, x, y: aten.mish_backward(g, x)),
    "elu": (lambda x: torch.ops.aten.elu(x, 0.7, 1.2, 0.8),
            lambda g, x, y: aten.elu_backward(g, 0.7, 1.2, 0.8, False, x)),
    "elu_result": (lambda x: torch.ops.aten.elu(x, 0.7, 1.2, 0.8),
                   lambda g, x, y: aten.elu_backward(g, 0.7, 1.2, 0.8, True, y)),
    "leaky_relu": (lambda x: torch.ops.aten.leaky_relu(x, 0.2),
                   lambda g, x, y: aten.leaky_relu_backward(g, x, 0.2, False)),
    "hardtanh": (lambda x: torch.ops.aten.hardtanh(x, -0.5, 0.7),
                 lambda g, x, y: aten.hardtanh_backward(g, x, -0.5, 0.7)),
    "softplus": (lambda x: torch.ops.aten.softplus(x, 2, 1.5),
                 lambda g, x, y: aten.softplus_backward(g, x, 2, 1.5)),
    "hardswish": (torch.ops.aten.hardswish, lambda g, x, y: aten.hardswish_backward(g, x)),
    "hardsigmoid": (torch.ops.aten.hardsigmoid, lambda g, x, y: aten.hardsigmoid_backward(g, x)),
    "log_sigmoid": (lambda x: torch.ops.aten.log_sigmoid_forward(x)[0],
                    lambda g, x, y: aten.log_sigmoid_backward(g, x, aten.log_sigmoid_forward(x)[1])),
    "threshold": (lambda x: torch.ops.aten.threshold(x, 0.3, -2.0),
                  lambda g, x, y: aten.threshold_backward(g, x, 0.3)),
    "relu": (torch.relu, lambda g, x, y: aten.threshold_backward(g, y, 0)),
    "hardshrink": (lambda x: torch.ops.aten.hardshrink(x, 0.5), lambda g, x, y: aten.hardshrink_backward(g, x, 0.5)),
    "softshrink": (lambda x: torch.ops.aten.softshrink(x, 0.5), lambda g, x, y: aten.softshrink_backward(g, x, 0.5)),
    "glu": (lambda x: torch.ops.aten.glu(x, 0), lambda g, x, y: aten.glu_backward(g, x, 0)),
}
# the forward result, for backward ops that take it instead of the input
_RESULT = {"relu": lambda x: torchplug.relu(x), "elu_result": lambda x: aten.elu(x, 0.7, 1.2, 0.8)}


@pytest.mark.parametrize("name", list(ACT))
def test_activation_backward(name):
    x = _np((4, 6), 0, low=-4, high=4)
    fw, bw = ACT[name]
    g, (gx,) = _grads(fw, [x])
    px = _p(x)
    y = _RESULT[name](px) if name in _RESULT else None
    _close(bw(_p(g), px, y), gx)


def test_prelu_backward():
    x, w = _np((2, 3, 4), 0), _np((1, 3, 1), 1)
    g, (gx, gw) = _grads(lambda x, w: torch.ops.aten._prelu_kernel(x, w), [x, w])
    got = aten._prelu_kernel_backward(_p(g), _p(x), _p(w))
    _close(got[0], gx)
    assert tuple(got[1].shape) == (2, 3, 4)  # the broadcast shape, as PyTorch's kernel returns
    _close(got[1].sum((0, 2), keepdim=True), gw)


# ---- losses ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("two_d", [False, True])
def test_nll_loss_backward(reduction, weighted, two_d):
    shape, tshape = ((2, 4, 3, 2), (2, 3, 2)) if two_d else ((5, 4), (5,))
    x = _np(shape, 0)
    t = np.random.default_rng(1).integers(0, 4, tshape)
    t.reshape(-1)[0] = 1
    w = _np((4,), 2, low=0.5, high=2) if weighted else None
    fw = torch.ops.aten.nll_loss2d_forward if two_d else torch.ops.aten.nll_loss_forward
    g, (gx,) = _grads(lambda x: fw(x, torch.from_numpy(t), None if w is None else _t(w), reduction, 1), [x])
    ours_fw = aten.nll_loss2d_forward if two_d else aten.nll_loss_forward
    ours_bw = aten.nll_loss2d_backward if two_d else aten.nll_loss_backward
    pw = None if w is None else _p(w)
    _, total = ours_fw(_p(x), _p(t), pw, reduction, 1)
    _close(ours_bw(_p(g), _p(x), _p(t), pw, reduction, 1, total), gx)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_backward(reduction, weighted):
    x, y = _np((4, 5), 0, low=0.05, high=0.95), _np((4, 5), 1, low=0, high=1)
    w = _np((4, 5), 2, low=0.5, high=2) if weighted else None
    g, (gx,) = _grads(lambda x: torch.ops.aten.binary_cross_entropy(x, _t(y), None if w is None else _t(w),
                                                                    reduction), [x])
    _close(aten.binary_cross_entropy_backward(_p(g), _p(x), _p(y), None if w is None else _p(w), reduction), gx)


# ---- padding / upsampling -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode,dims,pad", [("reflection", 1, [2, 3]), ("reflection", 2, [1, 2, 3, 0]),
                                           ("reflection", 3, [1, 0, 2, 1, 1, 1]), ("replication", 1, [3, 7]),
                                           ("replication", 2, [1, 2, -1, 3]), ("replication", 3, [1, 0, 2, 1, 1, 1])])
def test_pad_backward(mode, dims, pad):
    x = _np((2, 3, 4, 5, 6)[: dims + 2], 0)
    fw = getattr(torch.ops.aten, f"{mode}_pad{dims}d")
    g, (gx,) = _grads(lambda x: fw(x, pad), [x])
    _close(getattr(aten, f"{mode}_pad{dims}d_backward")(_p(g), _p(x), pad), gx)


def test_constant_pad_backward_is_negative_pad():
    x = _np((2, 3, 4), 0)
    pad = [1, -2, 2, 3]
    g, (gx,) = _grads(lambda x: torch.constant_pad_nd(x, pad, 1.5), [x])
    _close(aten.constant_pad_nd(_p(g), [-p for p in pad], 0), gx)


UPSAMPLE = [
    ("upsample_nearest1d", (2, 3, 5), [8], [None]),
    ("upsample_nearest2d", (2, 3, 4, 5), [7, 3], [None, None]),
    ("upsample_nearest2d", (2, 3, 4, 5), [6, 8], [1.5, 1.7]),
    ("upsample_nearest3d", (1, 2, 3, 4, 5), [4, 6, 3], [None, None, None]),
    ("_upsample_nearest_exact2d", (2, 3, 4, 5), [7, 3], [None, None]),
    ("upsample_linear1d", (2, 3, 5), [8], [None]),
    ("upsample_bilinear2d", (2, 3, 4, 5), [7, 3], [None, None]),
    ("upsample_trilinear3d", (1, 2, 3, 4, 5), [4, 6, 3], [None, None, None]),
]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("case", range(len(UPSAMPLE)))
def test_upsample_backward(case, align):
    name, shape, size, scales = UPSAMPLE[case]
    linear = "linear" in name
    if align and not linear:
        return
    x = _np(shape, 0)
    fw = getattr(torch.ops.aten, name)
    extra = [align] if linear else []
    g, (gx,) = _grads(lambda x: fw(x, size, *extra, *scales), [x])
    got = getattr(aten, f"{name}_backward")(_p(g), size, list(shape), *extra, *scales)
    _close(got, gx)
