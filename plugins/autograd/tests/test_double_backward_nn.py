"""Second derivatives through the NN ``*_backward`` ops: gradgradcheck in float64, and the
Hessian-vector products compared with real torch's on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

# name -> (fn(lib, F, x) -> output, input shape); x is float64 and requires grad
CASES = {
    "silu": (lambda m, F, x: F.silu(x), (3, 4)),
    "gelu": (lambda m, F, x: F.gelu(x), (3, 4)),
    "gelu_tanh": (lambda m, F, x: F.gelu(x, approximate="tanh"), (3, 4)),
    "softplus": (lambda m, F, x: F.softplus(x, beta=2.0, threshold=1.5), (3, 4)),
    "logsigmoid": (lambda m, F, x: F.logsigmoid(x), (3, 4)),
    "hardswish": (lambda m, F, x: F.hardswish(x), (3, 4)),
    "elu": (lambda m, F, x: F.elu(x, 0.7), (3, 4)),
    "selu": (lambda m, F, x: F.selu(x), (3, 4)),
    "celu": (lambda m, F, x: F.celu(x, 1.3), (3, 4)),
    "hardsigmoid": (lambda m, F, x: F.hardsigmoid(x) * x, (3, 4)),
    "hardtanh": (lambda m, F, x: F.hardtanh(x, -0.5, 0.5) * x, (3, 4)),
    "leaky_relu": (lambda m, F, x: F.leaky_relu(x, 0.1) * x, (3, 4)),
    "relu": (lambda m, F, x: F.relu(x) * x, (3, 4)),
    "hardshrink": (lambda m, F, x: F.hardshrink(x, 0.3) * x, (3, 4)),
    "softshrink": (lambda m, F, x: F.softshrink(x, 0.3) * x, (3, 4)),
    "softmax": (lambda m, F, x: F.softmax(x, 1) * x, (3, 4)),
    "log_softmax": (lambda m, F, x: F.log_softmax(x, 1) * x, (3, 4)),
    "max_pool2d": (lambda m, F, x: F.max_pool2d(x * x, 2), (1, 2, 4, 4)),
    "avg_pool2d": (lambda m, F, x: F.avg_pool2d(x * x, 2), (1, 2, 4, 4)),
    "adaptive_avg_pool2d": (lambda m, F, x: F.adaptive_avg_pool2d(x * x, (2, 3)), (1, 2, 4, 6)),
    "adaptive_max_pool2d": (lambda m, F, x: F.adaptive_max_pool2d(x * x, (2, 2)), (1, 2, 4, 4)),
    "reflection_pad": (lambda m, F, x: F.pad(x * x, (1, 2), mode="reflect"), (2, 3, 5)),
    "replication_pad": (lambda m, F, x: F.pad(x * x, (1, 1, 2, 0), mode="replicate"), (1, 2, 3, 4)),
    "upsample_nearest": (lambda m, F, x: F.interpolate(x * x, scale_factor=2, mode="nearest"), (1, 2, 3, 3)),
    "upsample_bilinear": (lambda m, F, x: F.interpolate(x * x, size=(5, 4), mode="bilinear", align_corners=False),
                          (1, 2, 3, 3)),
    "mish": (lambda m, F, x: F.mish(x) ** 2, (3, 4)),  # squared: the incoming gradient depends on x too
    "glu": (lambda m, F, x: F.glu(x * x, dim=1) ** 2, (3, 4)),
    "prelu": (lambda m, F, x: F.prelu(x * x - 1, m.tensor([0.3, -0.2], dtype=m.float64)) * x, (2, 2, 3)),
    "prelu_weight": (lambda m, F, x: (F.prelu(m.tensor(np.linspace(-1, 1, 12).reshape(2, 2, 3)), x * x) ** 2), (2,)),
    "embedding": (lambda m, F, x: F.embedding(m.tensor([[0, 2], [2, 3]]), x * x, padding_idx=3) ** 2, (4, 3)),
    "bce": (lambda m, F, x: F.binary_cross_entropy(x.sigmoid(), m.tensor([[0.2, 1.0, 0.0, 0.7]] * 3, dtype=m.float64)),
            (3, 4)),
    "bce_sum_weight": (lambda m, F, x: F.binary_cross_entropy(
        x.sigmoid(), m.tensor([[0.2, 1.0, 0.0, 0.7]] * 3, dtype=m.float64),
        weight=m.tensor([1.0, 2.0, 0.5, 1.5], dtype=m.float64), reduction="sum"), (3, 4)),
    "bce_target": (lambda m, F, x: F.binary_cross_entropy(m.tensor([[0.2, 0.9], [0.4, 0.6]], dtype=m.float64),
                                                          x.sigmoid()) * x.sum(), (2, 2)),
    "group_norm": (lambda m, F, x: F.group_norm(x, 2, m.tensor([1.0, 2.0, 0.5, -1.0], dtype=m.float64),
                                                m.tensor([0.1, 0.2, 0.3, 0.4], dtype=m.float64)) ** 2, (2, 4, 3)),
    "group_norm_weight": (lambda m, F, x: F.group_norm(m.tensor(np.linspace(-1, 2, 24).reshape(2, 4, 3) ** 2), 2,
                                                       x * x, x) ** 2, (4,)),
    "group_norm_noaffine": (lambda m, F, x: F.group_norm(x * x, 2) ** 2, (2, 4, 3)),
    "cross_entropy": (lambda m, F, x: F.cross_entropy(x * x, m.tensor([1, 0, 3])), (3, 4)),
    "nll_loss": (lambda m, F, x: F.nll_loss(F.log_softmax(x, 1) * x, m.tensor([2, 0, 1]), reduction="sum"), (3, 4)),
}


def _input(shape, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    fn, shape = CASES[name]
    x = tp.tensor(_input(shape), dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda t: fn(tp, tp.nn.functional, t), (x,))


# torch 2.13 has no derivative for hardsigmoid_backward (ours: zeros w.r.t. self, f'' = 0)
@pytest.mark.parametrize("name", sorted(set(CASES) - {"hardsigmoid"}))
def test_hessian_vector_product_matches_torch(name):
    fn, shape = CASES[name]
    x0, v0 = _input(shape), _input(shape, seed=1)
    results = []
    for m in (tp, torch):
        x = m.tensor(x0, dtype=m.float64, requires_grad=True)
        out = fn(m, m.nn.functional, x)
        (g,) = m.autograd.grad(out.sum(), x, create_graph=True)
        (hv,) = m.autograd.grad((g * m.tensor(v0, dtype=m.float64)).sum(), x)
        results.append((g.detach().numpy(), hv.numpy()))
    # torch's float64 celu carries ~5e-9 error in its gradient (ours equals exp(x/alpha) exactly)
    rtol = 1e-7 if name == "celu" else 1e-10
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=max(rtol, 1e-9), atol=1e-11)


CONV = {
    "conv2d": (lambda m, F, x, w, b: F.conv2d(x, w, b, padding=1), (2, 3, 5, 5), (4, 3, 3, 3)),
    "conv2d_strided_groups": (lambda m, F, x, w, b: F.conv2d(x, w, b, stride=2, groups=3), (1, 3, 6, 6), (6, 1, 2, 2)),
    "conv1d_dilated": (lambda m, F, x, w, b: F.conv1d(x, w, b, dilation=2), (2, 2, 9), (3, 2, 3)),
    "conv_transpose2d": (lambda m, F, x, w, b: F.conv_transpose2d(x, w, b, stride=2), (1, 3, 3, 3), (3, 2, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(CONV))
def test_convolution_gradgradcheck(name):
    fn, xs, ws = CONV[name]
    bias = ws[1] * (3 if "groups" in name else 1) if "transpose" in name else ws[0]
    args = [tp.tensor(_input(s, seed=i), dtype=tp.float64, requires_grad=True)
            for i, s in enumerate((xs, ws, (bias,)))]
    assert tp.autograd.gradgradcheck(lambda x, w, b: fn(tp, tp.nn.functional, x, w, b) ** 2, args)


@pytest.mark.parametrize("name", sorted(CONV))
def test_convolution_gradient_penalty_matches_torch(name):
    fn, xs, ws = CONV[name]
    bias = ws[1] if "transpose" in name else ws[0]
    values = [_input(s, seed=i) for i, s in enumerate((xs, ws, (bias,)))]
    results = []
    for m in (tp, torch):
        x, w, b = (m.tensor(v, dtype=m.float64, requires_grad=True) for v in values)
        out = fn(m, m.nn.functional, x, w, b)
        (gx,) = m.autograd.grad((out * out).sum(), x, create_graph=True)
        (gx * gx).sum().backward()  # a WGAN-GP style penalty on the input gradient
        results.append([t.grad.numpy() for t in (x, w, b)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


def _assert_same_grads(ours_all, theirs_all):
    for ours, theirs in zip(ours_all, theirs_all):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_double_backward_matches_torch(affine):
    values = [_input((3, 4, 5)), _input((4, 5), seed=1) + 3.0, _input((4, 5), seed=2)]
    results = []
    for m in (tp, torch):
        x, w, b = (m.tensor(v, dtype=m.float64, requires_grad=True) for v in values)
        out = m.nn.functional.layer_norm(x, [4, 5], w if affine else None, b if affine else None, eps=1e-3)
        (gx,) = m.autograd.grad((out * out * out).sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        results.append([t.grad.numpy() if t.grad is not None else None for t in (x, w, b)])
    _assert_same_grads(*results)


def test_layer_norm_gradgradcheck():
    x = tp.tensor(_input((2, 6)), dtype=tp.float64, requires_grad=True)
    w = tp.tensor(_input((6,), seed=1), dtype=tp.float64, requires_grad=True)
    assert tp.autograd.gradgradcheck(lambda a, b: tp.nn.functional.layer_norm(a, [6], b, None) ** 3, (x, w))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_double_backward_matches_torch(training, affine):
    values = [_input((4, 3, 2, 2)), _input((3,), seed=1) + 2.0, _input((3,), seed=2)]
    stats = [_input((3,), seed=3), np.abs(_input((3,), seed=4)) + 0.5]
    results = []
    for m in (tp, torch):
        x, w, b = (m.tensor(v, dtype=m.float64, requires_grad=True) for v in values)
        rm, rv = (m.tensor(v, dtype=m.float64) for v in stats)
        out = m.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None,
                                         training=training, eps=1e-3)
        (gx,) = m.autograd.grad((out * out * out).sum(), x, create_graph=True)
        (gx * gx).sum().backward()
        results.append([t.grad.numpy() if t.grad is not None else None for t in (x, w, b)])
    _assert_same_grads(*results)


IN_PLACE = {
    "mul_": lambda m, b, a: b.mul_(a),
    "elu_": lambda m, b, a: m.nn.functional.elu_(b),
    "sigmoid_": lambda m, b, a: b.sigmoid_(),
    "addcmul_": lambda m, b, a: b.addcmul_(a, a, value=0.5),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_second_derivatives_through_in_place_ops_match_torch(name):
    """An in-place op's formula reads self's value from before the write: that value keeps its
    history, so second derivatives through it are complete."""
    x0 = np.array([-1.5, -0.2, 0.3, 1.1])
    results = []
    for m in (tp, torch):
        a = m.tensor(x0, dtype=m.float64, requires_grad=True)
        b = a * a
        IN_PLACE[name](m, b, a)
        (g,) = m.autograd.grad(b.sum(), a, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), a)
        results.append(h.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)
