"""Padding, shuffle, resampling, distance, normalization, pooling and sampling layers and functionals
compared with real torch: values, gradients, unbatched shapes, reprs, state_dict keys and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
import torchplug.nn.functional as F

from nn_helpers import to_np

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(11)


def _r(*shape):
    return rng.standard_normal(shape)


def _compare(fn_t, fn_p, arrays, ng=99, rtol=1e-10, atol=1e-12):
    """Run both sides on the same data; check shape, dtype, values and the gradients of ``sum()``."""
    ts = [torch.tensor(a, requires_grad=i < ng and a.dtype.kind == "f") for i, a in enumerate(arrays)]
    ps = [tp.tensor(a, requires_grad=i < ng and a.dtype.kind == "f") for i, a in enumerate(arrays)]
    out_t, out_p = fn_t(*ts), fn_p(*ps)
    assert tuple(out_p.shape) == tuple(out_t.shape)
    assert str(out_p.dtype).split(".")[-1] == str(out_t.dtype).split(".")[-1]
    np.testing.assert_allclose(to_np(out_p), out_t.detach().numpy(), rtol=rtol, atol=atol)
    if any(t.requires_grad for t in ts):
        out_t.sum().backward()
        out_p.sum().backward()
        for t, p in zip(ts, ps):
            if t.requires_grad:
                assert p.grad is not None
                np.testing.assert_allclose(to_np(p.grad), t.grad.numpy(), rtol=rtol * 10, atol=atol * 10)
    return out_t, out_p


def _raises_like(fn_t, fn_p):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ep:
        fn_p()
    return str(et.value), str(ep.value)


# ---- padding -----------------------------------------------------------------------------------------------------
PADS = [
    ("ZeroPad1d", (2,)), ("ZeroPad2d", ((1, 2, 0, 3),)), ("ZeroPad3d", (1,)),
    ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", ((1, 0, 2, 1), -1.0)), ("ConstantPad3d", (1, 0.5)),
    ("ReflectionPad1d", ((3, 1),)), ("ReflectionPad2d", ((1, 2, 2, 1),)), ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", ((3, 1),)), ("ReplicationPad2d", (2,)), ("ReplicationPad3d", ((1, 0, 2, 1, 0, 1),)),
    ("CircularPad1d", (2,)), ("CircularPad2d", ((1, 2, 1, 0),)), ("CircularPad3d", (1,)),
]


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("name,args", PADS, ids=[p[0] for p in PADS])
def test_padding_modules(name, args, batched):
    nd = int(name[-2])
    shape = ((2,) if batched else ()) + (3,) + (4,) * nd
    mt, mp = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
    assert repr(mp) == repr(mt)
    assert mp.padding == mt.padding
    _compare(mt, mp, [_r(*shape)])


def test_circular_pad_rejects_wrong_rank():
    msg_t, msg_p = _raises_like(lambda: torch.nn.CircularPad2d(1)(torch.zeros(4, 4)),
                                lambda: nn.CircularPad2d(1)(tp.zeros(4, 4)))
    assert msg_p == msg_t


# ---- shuffles, upsampling, fold -------------------------------------------------------------------------------
def test_pixel_and_channel_shuffle():
    for mk, x in [(lambda m: m.PixelShuffle(2), _r(2, 8, 3, 4)), (lambda m: m.PixelUnshuffle(2), _r(2, 2, 4, 6)),
                  (lambda m: m.ChannelShuffle(3), _r(2, 6, 3, 4)), (lambda m: m.ChannelShuffle(2), _r(3, 4, 5)),
                  (lambda m: m.PixelShuffle(3), _r(9, 2, 2))]:
        mt, mp = mk(torch.nn), mk(nn)
        assert repr(mp) == repr(mt)
        _compare(mt, mp, [x])
    _compare(lambda a: TF.native_channel_shuffle(a, 2), lambda a: F.native_channel_shuffle(a, 2), [_r(2, 4, 3)],
             ng=0)
    for make in (lambda L, T: L.channel_shuffle(T(_r(2, 5)), 2), lambda L, T: L.channel_shuffle(T(_r(2, 5, 2)), 2),
                 lambda L, T: L.channel_shuffle(T(_r(2, 4, 2)), 0)):
        msg_t, msg_p = _raises_like(lambda: make(TF, torch.tensor), lambda: make(F, tp.tensor))
        assert msg_p == msg_t


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (lambda m: m.Upsample(size=(5, 7), mode="bilinear", align_corners=False), (2, 3, 4, 5)),
    (lambda m: m.Upsample(scale_factor=(2, 1.5), mode="bilinear", align_corners=True), (1, 2, 4, 4)),
    (lambda m: m.Upsample(scale_factor=3, mode="linear"), (2, 3, 4)),
    (lambda m: m.Upsample(size=(3, 4, 5), mode="trilinear"), (1, 2, 2, 3, 4)),
    (lambda m: m.UpsamplingNearest2d(scale_factor=2), (2, 3, 3, 4)),
    (lambda m: m.UpsamplingBilinear2d(size=(6, 9)), (2, 3, 3, 4)),
])
def test_upsample(make, shape):
    mt, mp = make(torch.nn), make(nn)
    assert repr(mp) == repr(mt)
    assert (mp.scale_factor, mp.size, mp.mode, mp.align_corners) == (mt.scale_factor, mt.size, mt.mode,
                                                                     mt.align_corners)
    _compare(mt, mp, [_r(*shape)])


def test_fold_unfold():
    ut, up = torch.nn.Unfold((2, 3), dilation=1, padding=1, stride=(1, 2)), nn.Unfold((2, 3), 1, 1, (1, 2))
    assert repr(up) == repr(ut)
    cols_t, _ = _compare(ut, up, [_r(2, 3, 5, 6)])
    ft, fp = torch.nn.Fold((5, 6), (2, 3), padding=1, stride=(1, 2)), nn.Fold((5, 6), (2, 3), padding=1, stride=(1, 2))
    assert repr(fp) == repr(ft)
    _compare(ft, fp, [cols_t.detach().numpy()])
    _compare(torch.nn.Fold(4, 2, stride=2), nn.Fold(4, 2, stride=2), [_r(12, 4)])  # unbatched


# ---- distances, activations, dropout ----------------------------------------------------------------------------
def test_cosine_similarity_and_pairwise_distance():
    a, b = _r(4, 5), _r(4, 5)
    _compare(torch.nn.CosineSimilarity(), nn.CosineSimilarity(), [a, b])
    _compare(torch.nn.CosineSimilarity(dim=0, eps=1e-3), nn.CosineSimilarity(dim=0, eps=1e-3), [a, b])
    _compare(torch.nn.PairwiseDistance(), nn.PairwiseDistance(), [a, b])
    _compare(torch.nn.PairwiseDistance(p=1.5, eps=1e-3, keepdim=True), nn.PairwiseDistance(1.5, 1e-3, True), [a, b])
    _compare(torch.nn.PairwiseDistance(), nn.PairwiseDistance(), [_r(5), _r(5)])
    assert repr(nn.PairwiseDistance()) == repr(torch.nn.PairwiseDistance())


def test_softmax2d():
    _compare(torch.nn.Softmax2d(), nn.Softmax2d(), [_r(2, 3, 4, 5)])
    _compare(torch.nn.Softmax2d(), nn.Softmax2d(), [_r(3, 4, 5)])
    msg_t, msg_p = _raises_like(lambda: torch.nn.Softmax2d()(torch.zeros(3, 4)), lambda: nn.Softmax2d()(tp.zeros(3, 4)))
    assert msg_p == msg_t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rrelu_draws_as_torch(dtype):
    x = _r(6, 7).astype(dtype)
    mt, mp = torch.nn.RReLU(0.1, 0.4), nn.RReLU(0.1, 0.4)
    assert repr(mp) == repr(mt) and repr(nn.RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    torch.manual_seed(5)
    tp.manual_seed(5)
    # The slopes come from the generator as torch's do (one double draw per element <= 0); the
    # products may differ in the last bit.
    tol = 1e-15 if dtype == np.float64 else 1e-6
    _compare(mt, mp, [x], rtol=tol, atol=tol)
    np.testing.assert_array_equal(to_np(tp.rand(3)), torch.rand(3).numpy())  # the streams stay in step
    mt.eval()
    mp.eval()
    _compare(mt, mp, [x], rtol=1e-6)


def test_alpha_dropouts():
    x = _r(4, 6, 3)
    for name in ("AlphaDropout", "FeatureAlphaDropout"):
        mt, mp = getattr(torch.nn, name)(0.3), getattr(nn, name)(0.3)
        assert repr(mp) == repr(mt)
        torch.manual_seed(9)
        tp.manual_seed(9)
        _compare(mt, mp, [x])
        mt.eval()
        mp.eval()
        np.testing.assert_array_equal(to_np(mp(tp.tensor(x))), x)


# ---- local response norm ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,size", [((2, 6, 5), 3), ((2, 6, 4, 5), 4), ((2, 7, 3, 2, 2), 2), ((1, 5, 3, 3), 5)])
def test_local_response_norm(shape, size):
    mt, mp = torch.nn.LocalResponseNorm(size, alpha=0.1, beta=0.6, k=1.5), nn.LocalResponseNorm(size, 0.1, 0.6, 1.5)
    assert repr(mp) == repr(mt)
    _compare(mt, mp, [_r(*shape)])


@pytest.mark.parametrize("size,channels", [(2, 3), (3, 7), (4, 7), (5, 3), (6, 7)])
def test_cross_map_lrn2d(size, channels):
    mt, mp = torch.nn.CrossMapLRN2d(size, 0.5, 0.75, 1.5), nn.CrossMapLRN2d(size, 0.5, 0.75, 1.5)
    assert repr(mp) == repr(mt)
    _compare(mt, mp, [_r(2, channels, 3, 4)])


def test_lrn_errors():
    msg_t, msg_p = _raises_like(lambda: TF.local_response_norm(torch.zeros(2, 3), 2),
                                lambda: F.local_response_norm(tp.zeros(2, 3), 2))
    assert msg_p == msg_t
    msg_t, msg_p = _raises_like(lambda: torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4)),
                                lambda: nn.CrossMapLRN2d(3)(tp.zeros(2, 3, 4)))
    assert msg_p == msg_t


# ---- adaptive / fractional max pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize("output_size", [(2, 3, 4), 3, (None, 2, 5), (5, 6, 7), (7, 8, 9)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_max_pool3d(output_size, batched):
    x = _r(*(((2,) if batched else ()) + (3, 5, 6, 7)))
    mt, mp = torch.nn.AdaptiveMaxPool3d(output_size), nn.AdaptiveMaxPool3d(output_size)
    assert repr(mp) == repr(mt)
    _compare(mt, mp, [x])
    it = TF.adaptive_max_pool3d(torch.tensor(x), output_size, return_indices=True)[1]
    ip = F.adaptive_max_pool3d_with_indices(tp.tensor(x), output_size)[1]
    assert ip.dtype == tp.int64
    np.testing.assert_array_equal(to_np(ip), it.numpy())


def test_adaptive_max_pool3d_errors():
    msg_t, msg_p = _raises_like(lambda: TF.adaptive_max_pool3d(torch.zeros(2, 3), 2),
                                lambda: F.adaptive_max_pool3d(tp.zeros(2, 3), 2))
    assert msg_p == msg_t


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel,output", [(2, (3, 4)), (3, (2, 2)), ((2, 3), (4, 5)), (1, (5, 7))])
def test_fractional_max_pool2d_with_samples(dtype, kernel, output):
    x = _r(2, 3, 5, 7).astype(dtype)
    samples = rng.random((2, 3, 2)).astype(dtype)
    _compare(lambda a, s: TF.fractional_max_pool2d(a, kernel, output_size=output, _random_samples=s),
             lambda a, s: F.fractional_max_pool2d(a, kernel, output_size=output, _random_samples=s), [x, samples], ng=1)
    it = TF.fractional_max_pool2d(torch.tensor(x), kernel, output_size=output, return_indices=True,
                                  _random_samples=torch.tensor(samples))[1]
    ip = F.fractional_max_pool2d(tp.tensor(x), kernel, output_size=output, return_indices=True,
                                 _random_samples=tp.tensor(samples))[1]
    np.testing.assert_array_equal(to_np(ip), it.numpy())


def test_fractional_max_pool2d_unbatched_and_ratio():
    x = _r(3, 6, 8)
    samples = rng.random((1, 3, 2))
    _compare(lambda a, s: TF.fractional_max_pool2d(a, (2, 3), output_ratio=(0.5, 0.6), _random_samples=s),
             lambda a, s: F.fractional_max_pool2d(a, (2, 3), output_ratio=(0.5, 0.6), _random_samples=s),
             [x, samples], ng=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fractional_max_pool3d_with_samples(dtype):
    x = _r(2, 3, 5, 6, 7).astype(dtype)
    samples = rng.random((2, 3, 3)).astype(dtype)
    _compare(lambda a, s: TF.fractional_max_pool3d(a, 2, output_ratio=0.5, _random_samples=s),
             lambda a, s: F.fractional_max_pool3d(a, 2, output_ratio=0.5, _random_samples=s), [x, samples], ng=1)
    kw = dict(output_size=(3, 3, 4), return_indices=True)
    it = TF.fractional_max_pool3d(torch.tensor(x), (2, 3, 2), _random_samples=torch.tensor(samples), **kw)[1]
    ip = F.fractional_max_pool3d(tp.tensor(x), (2, 3, 2), _random_samples=tp.tensor(samples), **kw)[1]
    np.testing.assert_array_equal(to_np(ip), it.numpy())
    unb = rng.random((1, 3, 3)).astype(dtype)
    _compare(lambda a, s: TF.fractional_max_pool3d(a, 2, output_size=2, _random_samples=s),
             lambda a, s: F.fractional_max_pool3d(a, 2, output_size=2, _random_samples=s), [x[0], unb], ng=1)


def test_fractional_max_pool_modules_draw_from_generator():
    x = _r(2, 3, 8, 9)
    mt, mp = torch.nn.FractionalMaxPool2d(3, output_ratio=0.5), nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert list(mp.state_dict()) == list(mt.state_dict())
    assert (mp.kernel_size, mp.output_ratio, mp.output_size) == (mt.kernel_size, mt.output_ratio, mt.output_size)
    torch.manual_seed(4)
    tp.manual_seed(4)
    _compare(mt, mp, [x])
    x5 = _r(1, 2, 6, 6, 6)
    mt3 = torch.nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    mp3 = nn.FractionalMaxPool3d(2, output_size=3, return_indices=True)
    torch.manual_seed(4)
    tp.manual_seed(4)
    (vt, it), (vp, ip) = mt3(torch.tensor(x5)), mp3(tp.tensor(x5))
    np.testing.assert_array_equal(to_np(vp), vt.numpy())
    np.testing.assert_array_equal(to_np(ip), it.numpy())
    samples = rng.random((1, 2, 3))
    fixed_t = torch.nn.FractionalMaxPool3d(2, output_size=3, _random_samples=torch.tensor(samples))
    fixed_p = nn.FractionalMaxPool3d(2, output_size=3, _random_samples=tp.tensor(samples))
    assert list(fixed_p.state_dict()) == list(fixed_t.state_dict()) == ["_random_samples"]
    np.testing.assert_array_equal(to_np(fixed_p(tp.tensor(x5))), fixed_t(torch.tensor(x5)).numpy())


@pytest.mark.parametrize("make", [
    lambda m: m.FractionalMaxPool2d(2),
    lambda m: m.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    lambda m: m.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda m: m.FractionalMaxPool3d(2),
])
def test_fractional_max_pool_constructor_errors(make):
    msg_t, msg_p = _raises_like(lambda: make(torch.nn), lambda: make(nn))
    assert msg_p == msg_t


@pytest.mark.parametrize("call", [
    lambda L, T, x: L.fractional_max_pool2d(x, 5, output_size=2),
    lambda L, T, x: L.fractional_max_pool2d(x, 2, output_size=5),
    lambda L, T, x: L.fractional_max_pool2d(x, 2, output_size=2, _random_samples=T(np.zeros((2, 3, 3)))),
    lambda L, T, x: L.fractional_max_pool2d(x, 2, output_size=2, _random_samples=T(np.zeros((2, 4, 2)))),
    lambda L, T, x: L.fractional_max_pool3d(x, 2, output_size=3),
])
def test_fractional_max_pool_errors(call):
    x = _r(2, 3, 5, 6)
    msg_t, msg_p = _raises_like(lambda: call(TF, torch.tensor, torch.tensor(x)),
                                lambda: call(F, tp.tensor, tp.tensor(x)))
    assert msg_p == msg_t


# ---- affine_grid / grid_sample -----------------------------------------------------------------------------------
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    _compare(lambda th: TF.affine_grid(th, [2, 3, 4, 5], align_corners=align_corners),
             lambda th: F.affine_grid(th, [2, 3, 4, 5], align_corners=align_corners), [_r(2, 2, 3)])
    _compare(lambda th: TF.affine_grid(th, [2, 3, 4, 5, 6], align_corners=align_corners),
             lambda th: F.affine_grid(th, [2, 3, 4, 5, 6], align_corners=align_corners), [_r(2, 3, 4)])
    _compare(lambda th: TF.affine_grid(th, [1, 1, 1, 3], align_corners=False),
             lambda th: F.affine_grid(th, [1, 1, 1, 3], align_corners=False), [_r(1, 2, 3)])


@pytest.mark.parametrize("call", [
    lambda L, T: L.affine_grid(T(_r(2, 2, 3)), [2, 3, 4, 5, 6], align_corners=False),
    lambda L, T: L.affine_grid(T(_r(2, 3, 4)), [2, 3, 4, 5], align_corners=False),
    lambda L, T: L.affine_grid(T(_r(2, 2, 3)), [2, 3, 4], align_corners=False),
    lambda L, T: L.affine_grid(T(_r(2, 2, 3)), [2, 3, 0, 5], align_corners=False),
    lambda L, T: L.affine_grid(T(np.zeros((2, 2, 3), dtype=np.int64)), [2, 3, 4, 5], align_corners=False),
    lambda L, T: L.grid_sample(T(_r(2, 3, 4, 4)), T(_r(2, 2, 2, 2)), mode="area", align_corners=False),
    lambda L, T: L.grid_sample(T(_r(2, 3, 4, 4)), T(_r(2, 2, 2, 2)), padding_mode="wrap", align_corners=False),
    lambda L, T: L.grid_sample(T(_r(2, 3, 4, 4)), T(_r(3, 2, 2, 2)), align_corners=False),
    lambda L, T: L.grid_sample(T(_r(2, 3, 4, 4)), T(_r(2, 2, 2, 3)), align_corners=False),
    lambda L, T: L.grid_sample(T(_r(2, 3, 4, 4, 4)), T(_r(2, 2, 2, 2, 3)), mode="bicubic", align_corners=False),
])
def test_grid_errors(call):
    msg_t, msg_p = _raises_like(lambda: call(TF, torch.tensor), lambda: call(F, tp.tensor))
    assert msg_p.replace("torchplug.", "torch.") == msg_t


def test_grid_sample_warns_without_align_corners():
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.grid_sample(tp.zeros(1, 1, 2, 2), tp.zeros(1, 1, 1, 2))


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    # Grid points well outside [-1, 1] exercise every padding mode, several reflections included.
    _compare(lambda a, g: TF.grid_sample(a, g, **kw), lambda a, g: F.grid_sample(a, g, **kw),
             [_r(2, 3, 5, 7), _r(2, 4, 6, 2) * 1.7])


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode, padding_mode, align_corners):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    _compare(lambda a, g: TF.grid_sample(a, g, **kw), lambda a, g: F.grid_sample(a, g, **kw),
             [_r(2, 3, 4, 5, 6), _r(2, 3, 2, 4, 3) * 1.7])


def test_grid_sample_float32_and_affine_pipeline():
    theta = np.array([[[0.8, -0.3, 0.1], [0.2, 0.9, -0.2]]], dtype=np.float32)
    x = _r(1, 2, 6, 6).astype(np.float32)

    def run(L, th, a):
        return L.grid_sample(a, L.affine_grid(th, [1, 2, 5, 5], align_corners=False), align_corners=False)

    _compare(lambda th, a: run(TF, th, a), lambda th, a: run(F, th, a), [theta, x], rtol=1e-5, atol=1e-6)


# ---- gumbel softmax / conv_tbc -----------------------------------------------------------------------------------
@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_draws_as_torch(hard):
    x = _r(4, 6)
    torch.manual_seed(2)
    tp.manual_seed(2)
    _compare(lambda a: TF.gumbel_softmax(a, tau=0.5, hard=hard, dim=0) * torch.arange(6.0, dtype=torch.float64),
             lambda a: F.gumbel_softmax(a, tau=0.5, hard=hard, dim=0) * tp.arange(6.0, dtype=tp.float64), [x])
    y = F.gumbel_softmax(tp.tensor(x), hard=hard)
    np.testing.assert_allclose(to_np(y).sum(-1), np.ones(4))
    if hard:
        assert set(np.unique(to_np(y))) <= {0.0, 1.0}
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        F.gumbel_softmax(tp.tensor(x), eps=1e-3)


def test_conv_tbc():
    _compare(lambda a, w, b: TF.conv_tbc(a, w, b, 1), lambda a, w, b: F.conv_tbc(a, w, b, 1),
             [_r(7, 2, 3), _r(3, 3, 4), _r(4)])
    _compare(lambda a, w, b: TF.conv_tbc(a, w, b), lambda a, w, b: F.conv_tbc(a, w, b), [_r(5, 1, 2), _r(2, 2, 3),
                                                                                      _r(3)])
    for args in ((_r(2, 3), _r(2, 3, 4), _r(4)), (_r(5, 2, 3), _r(2, 4, 4), _r(4)), (_r(5, 2, 3), _r(2, 3, 4), _r(5))):
        msg_t, msg_p = _raises_like(lambda: TF.conv_tbc(*map(torch.tensor, args)),
                                    lambda: F.conv_tbc(*map(tp.tensor, args)))
        assert msg_p == msg_t


def test_new_names_are_public():
    for name in ("ZeroPad1d", "CircularPad3d", "PixelShuffle", "ChannelShuffle", "Upsample", "Fold", "Unfold",
                 "CosineSimilarity", "PairwiseDistance", "Softmax2d", "RReLU", "AlphaDropout", "FeatureAlphaDropout",
                 "LocalResponseNorm", "CrossMapLRN2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d",
                 "FractionalMaxPool3d", "AdaptiveLogSoftmaxWithLoss", "CTCLoss", "NLLLoss2d"):
        assert name in nn.__all__ and hasattr(torch.nn, name)
    for name in ("grid_sample", "affine_grid", "ctc_loss", "gumbel_softmax", "conv_tbc", "local_response_norm",
                 "channel_shuffle", "adaptive_max_pool3d_with_indices", "fractional_max_pool3d_with_indices",
                 "triplet_margin_with_distance_loss"):
        assert name in F.__all__ and hasattr(TF, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Upsample(scale_factor=2)
