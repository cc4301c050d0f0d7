"""nn.utils beyond clipping: weight_norm / spectral_norm (hooks), parametrize and parametrizations, BN fusion,
skip_init, stateless.functional_call, clip_grads_with_norm_, conv weight memory formats; compared with torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
from torchplug.nn.utils import parametrize

from nn_helpers import to_np

torch = pytest.importorskip("torch")


def _same_linear(in_f=4, out_f=3, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out_f, in_f)).astype(np.float32)
    b = rng.standard_normal(out_f).astype(np.float32)
    ours, theirs = nn.Linear(in_f, out_f), torch.nn.Linear(in_f, out_f)
    with tp.no_grad():
        ours.weight.copy_(tp.tensor(w))
        ours.bias.copy_(tp.tensor(b))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
        theirs.bias.copy_(torch.tensor(b))
    return ours, theirs


def _close(a, b, atol=1e-5):
    np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=1e-5, atol=atol)


# ---- weight_norm (hook) ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(dim):
    ours, theirs = _same_linear()
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(ours, dim=dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(theirs, dim=dim)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == ["bias", "weight_g", "weight_v"]
    _close(ours.weight_g, theirs.weight_g)
    assert tuple(ours.weight_g.shape) == tuple(theirs.weight_g.shape)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    y_ours, y_theirs = ours(tp.tensor(x)), theirs(torch.tensor(x))
    _close(y_ours, y_theirs)
    y_ours.sum().backward()
    y_theirs.sum().backward()
    _close(ours.weight_g.grad, theirs.weight_g.grad)
    _close(ours.weight_v.grad, theirs.weight_v.grad)


def test_weight_norm_remove_and_errors():
    ours, _ = _same_linear()
    before = to_np(ours.weight)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.utils.weight_norm(ours)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            nn.utils.weight_norm(ours)
    nn.utils.remove_weight_norm(ours)
    assert sorted(ours.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, nn.Parameter)
    np.testing.assert_allclose(to_np(ours.weight), before, rtol=1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(ours)


# ---- spectral_norm (hook) --------------------------------------------------------------------------------------
def _spectral_pair(module_t, module_p):
    torch.nn.utils.spectral_norm(module_t)
    nn.utils.spectral_norm(module_p)
    with tp.no_grad():  # the same starting vectors (both draw them at random)
        module_p.weight_u.copy_(tp.tensor(module_t.weight_u.numpy()))
        module_p.weight_v.copy_(tp.tensor(module_t.weight_v.numpy()))


def test_spectral_norm_power_iteration_matches_torch():
    ours, theirs = _same_linear(5, 4)
    _spectral_pair(theirs, ours)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    for _ in range(3):  # training: each forward runs one power-iteration step and updates the buffers
        _close(ours(tp.tensor(x)), theirs(torch.tensor(x)))
    _close(ours.weight_u, theirs.weight_u)
    _close(ours.weight_v, theirs.weight_v)
    _close(ours.weight, theirs.weight)
    ours.eval()
    theirs.eval()
    u_before = to_np(ours.weight_u).copy()
    _close(ours(tp.tensor(x)), theirs(torch.tensor(x)))
    np.testing.assert_array_equal(to_np(ours.weight_u), u_before)  # eval: no power iteration


def test_spectral_norm_conv_transpose_dim_and_remove():
    conv = nn.ConvTranspose2d(3, 5, 2)
    nn.utils.spectral_norm(conv)
    assert tuple(conv.weight_u.shape) == (5,)  # dim=1 for transposed convolutions
    x = tp.randn(1, 3, 4, 4)
    conv(x)
    expected = to_np(conv.weight)
    nn.utils.remove_spectral_norm(conv)
    assert sorted(conv.state_dict()) == ["bias", "weight"]
    assert not conv._state_dict_hooks and not conv._load_state_dict_pre_hooks
    np.testing.assert_allclose(to_np(conv.weight), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(conv)


def test_spectral_norm_state_dict_round_trip():
    src, _ = _same_linear(5, 4)
    nn.utils.spectral_norm(src)
    src(tp.randn(2, 5))
    dst, _ = _same_linear(5, 4, seed=3)
    nn.utils.spectral_norm(dst)
    dst.load_state_dict(src.state_dict())
    src.eval()
    dst.eval()
    x = tp.randn(2, 5)
    np.testing.assert_allclose(to_np(dst(x)), to_np(src(x)), rtol=1e-6)


# ---- parametrize ---------------------------------------------------------------------------------------------
class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    calls = 0

    def forward(self, x):
        Scale.calls += 1
        return x * 2


def test_register_parametrization_basics():
    m = nn.Linear(3, 3)
    original = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert type(nn.Linear(2, 2)) is nn.Linear  # other instances keep their class
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert m.parametrizations.weight.original is original  # the same Parameter, its data made upper-triangular
    w = to_np(m.weight)
    np.testing.assert_allclose(w, w.T)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    # assignment goes through right_inverse
    target = tp.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    m.weight = target
    np.testing.assert_allclose(to_np(m.weight), to_np(target))
    np.testing.assert_allclose(to_np(m.parametrizations.weight.original), np.triu(to_np(target)))
    # gradients reach the original
    m(tp.randn(2, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_parametrization_chain_cached_and_remove():
    m = nn.Linear(2, 2)
    before = to_np(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Scale())
    parametrize.register_parametrization(m, "weight", Scale())
    np.testing.assert_allclose(to_np(m.weight), before * 4, rtol=1e-6)
    Scale.calls = 0
    with parametrize.cached():
        m.weight
        m.weight
    assert Scale.calls == 2  # one evaluation of the two-step chain
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_allclose(to_np(m.weight), before * 4, rtol=1e-6)
    parametrize.register_parametrization(m, "bias", Scale())
    bias_before = to_np(m.parametrizations.bias.original).copy()
    parametrize.remove_parametrizations(m, "bias", leave_parametrized=False)
    np.testing.assert_allclose(to_np(m.bias), bias_before)


def test_parametrize_errors_match_torch():
    class Grow(nn.Module):
        def forward(self, x):
            return x.repeat(2, 1)

    class TGrow(torch.nn.Module):
        def forward(self, x):
            return x.repeat(2, 1)

    for mod, par, reg in ((nn.Linear(2, 2), Grow(), parametrize.register_parametrization),
                          (torch.nn.Linear(2, 2), TGrow(), torch.nn.utils.parametrize.register_parametrization)):
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            reg(mod, "weight", par)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            reg(mod, "nothing", par)
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(nn.Linear(2, 2), "weight")


# ---- parametrizations --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_is_orthogonal_and_trainable(orthogonal_map):
    shape = (5, 3) if orthogonal_map == "householder" else (4, 4)
    m = nn.Linear(shape[1], shape[0], bias=False)
    nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
    q = to_np(m.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(shape[1]), atol=1e-5)
    opt = tp.optim.SGD(m.parameters(), lr=0.1)
    m(tp.randn(8, shape[1])).pow(2).sum().backward()
    opt.step()
    q = to_np(m.weight)
    np.testing.assert_allclose(q.T @ q, np.eye(shape[1]), atol=1e-5)


def test_orthogonal_square_projection_matches_torch():
    ours, theirs = _same_linear(4, 4)
    nn.utils.parametrizations.orthogonal(ours)
    torch.nn.utils.parametrizations.orthogonal(theirs)
    _close(ours.weight, theirs.weight)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())


@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_householder_matches_torch(use_trivialization):
    ours, theirs = _same_linear(3, 5)
    tp.manual_seed(0)  # the trivialization completes a tall matrix with random columns: the same stream as torch's
    torch.manual_seed(0)
    nn.utils.parametrizations.orthogonal(ours, use_trivialization=use_trivialization)
    torch.nn.utils.parametrizations.orthogonal(theirs, use_trivialization=use_trivialization)
    _close(ours.weight, theirs.weight)
    target = np.linalg.qr(np.random.default_rng(5).standard_normal((5, 3)))[0].astype(np.float32)
    ours.weight = tp.tensor(target)  # assignment goes through right_inverse (geqrf without the trivialization)
    with torch.no_grad():
        theirs.weight = torch.tensor(target)
    _close(ours.weight, theirs.weight)


def test_parametrizations_weight_norm_matches_torch_and_loads_old_keys():
    ours, theirs = _same_linear()
    nn.utils.parametrizations.weight_norm(ours)
    torch.nn.utils.parametrizations.weight_norm(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    _close(ours.parametrizations.weight.original0, theirs.parametrizations.weight.original0)
    x = np.random.default_rng(4).standard_normal((2, 4)).astype(np.float32)
    _close(ours(tp.tensor(x)), theirs(torch.tensor(x)))
    # a checkpoint of the hook-based weight_norm loads into the parametrization
    old, _ = _same_linear(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nn.utils.weight_norm(old)
    ours.load_state_dict(old.state_dict())
    np.testing.assert_allclose(to_np(ours.weight), to_np(old.weight_g * old.weight_v / old.weight_v.norm(dim=1,
                                                                                                      keepdim=True)),
                               rtol=1e-5)


def test_parametrizations_spectral_norm_matches_torch():
    ours, theirs = _same_linear(6, 4)
    nn.utils.parametrizations.spectral_norm(ours)
    torch.nn.utils.parametrizations.spectral_norm(theirs)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    with tp.no_grad():
        ours.parametrizations.weight[0]._u.copy_(tp.tensor(theirs.parametrizations.weight[0]._u.numpy()))
        ours.parametrizations.weight[0]._v.copy_(tp.tensor(theirs.parametrizations.weight[0]._v.numpy()))
    x = np.random.default_rng(6).standard_normal((2, 6)).astype(np.float32)
    for _ in range(2):
        _close(ours(tp.tensor(x)), theirs(torch.tensor(x)))
    ours.eval()
    theirs.eval()
    _close(ours.weight, theirs.weight)
    s = np.linalg.svd(to_np(ours.weight), compute_uv=False)
    assert s[0] == pytest.approx(1.0, rel=1e-2)


# ---- fusion ----------------------------------------------------------------------------------------------------------
def _trained_bn(bn, channels):
    rng = np.random.default_rng(7)
    with tp.no_grad():
        bn.running_mean.copy_(tp.tensor(rng.standard_normal(channels).astype(np.float32)))
        bn.running_var.copy_(tp.tensor(rng.uniform(0.5, 2, channels).astype(np.float32)))
        bn.weight.copy_(tp.tensor(rng.standard_normal(channels).astype(np.float32)))
        bn.bias.copy_(tp.tensor(rng.standard_normal(channels).astype(np.float32)))
    return bn.eval()


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_eval(transpose):
    conv = (nn.ConvTranspose2d(3, 4, 3) if transpose else nn.Conv2d(3, 4, 3)).eval()
    bn = _trained_bn(nn.BatchNorm2d(4), 4)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
    x = tp.randn(2, 3, 6, 6)
    np.testing.assert_allclose(to_np(fused(x)), to_np(bn(conv(x))), rtol=1e-4, atol=1e-5)
    assert isinstance(fused.weight, nn.Parameter) and fused is not conv
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)


def test_fuse_weights_match_torch():
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((4, 3, 2, 2), (4,), (4,), (4,), (4,), (4,))]
    arrays[3] = np.abs(arrays[3]) + 0.5
    w, b, rm, rv, bw, bb = arrays
    ours = nn.utils.fuse_conv_bn_weights(*(tp.tensor(a) for a in (w, b, rm, rv)), 1e-5, tp.tensor(bw), tp.tensor(bb))
    theirs = torch.nn.utils.fuse_conv_bn_weights(*(torch.tensor(a) for a in (w, b, rm, rv)), 1e-5, torch.tensor(bw),
                                                 torch.tensor(bb))
    for o, t in zip(ours, theirs):
        _close(o, t)
    ours = nn.utils.fuse_linear_bn_weights(tp.tensor(w[:, :, 0, 0]), None, *(tp.tensor(a) for a in (rm, rv)), 1e-5,
                                           tp.tensor(bw), tp.tensor(bb))
    theirs = torch.nn.utils.fuse_linear_bn_weights(torch.tensor(w[:, :, 0, 0]), None,
                                                   *(torch.tensor(a) for a in (rm, rv)), 1e-5, torch.tensor(bw),
                                                   torch.tensor(bb))
    for o, t in zip(ours, theirs):
        _close(o, t)


def test_fuse_linear_bn_eval():
    lin = nn.Linear(3, 4).eval()
    bn = _trained_bn(nn.BatchNorm1d(4), 4)
    fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    x = tp.randn(5, 3)
    np.testing.assert_allclose(to_np(fused(x)), to_np(bn(lin(x))), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(3, 5).eval(), bn)


# ---- skip_init, functional_call, clipping, memory format ---------------------------------------------------------------
def test_skip_init():
    m = nn.utils.skip_init(nn.Linear, 5, 2)
    assert isinstance(m, nn.Linear) and m.weight.device.type == "cpu" and tuple(m.weight.shape) == (2, 5)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(NoDevice, 3)


def test_functional_call_replaces_and_restores():
    m = nn.Linear(2, 2)
    weight = m.weight
    new_w = tp.eye(2)
    new_b = tp.zeros(2)
    x = tp.tensor([[1.0, 2.0]])
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        y = nn.utils.stateless.functional_call(m, {"weight": new_w, "bias": new_b}, (x,))
    np.testing.assert_allclose(to_np(y), [[1.0, 2.0]])
    assert m.weight is weight  # restored afterwards
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nn.utils.stateless.functional_call(m, {"weight": new_w}, x, strict=True)


def test_functional_call_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = nn.utils.stateless.functional_call(m, {"a.weight": tp.eye(2) * 2}, (tp.ones(1, 2),))
    np.testing.assert_allclose(to_np(y), [[4.0, 4.0]])  # b.weight is tied: replaced too


def test_clip_grads_with_norm_matches_torch():
    rng = np.random.default_rng(9)
    grads = [rng.standard_normal(s).astype(np.float32) * 3 for s in ((3, 2), (4,))]
    ours = [tp.zeros(g.shape, requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads):
        o.grad, t.grad = tp.tensor(g), torch.tensor(g)
    total_o = nn.utils.get_total_norm([p.grad for p in ours])
    total_t = torch.nn.utils.get_total_norm([p.grad for p in theirs])
    _close(total_o, total_t)
    nn.utils.clip_grads_with_norm_(ours, 1.0, total_o)
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0, total_t)
    for o, t in zip(ours, theirs):
        _close(o.grad, t.grad)


def test_convert_conv_weight_memory_format():
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Sequential(nn.Conv2d(4, 2, 1)), nn.Conv3d(1, 1, 1))
    nn.utils.convert_conv2d_weight_memory_format(model, tp.channels_last)
    assert model[0].weight.is_contiguous(memory_format=tp.channels_last)
    assert model[2][0].weight.is_contiguous(memory_format=tp.channels_last)
    assert isinstance(model[0].weight, nn.Parameter)
    nn.utils.convert_conv3d_weight_memory_format(model, tp.channels_last_3d)
    assert model[3].weight.is_contiguous(memory_format=tp.channels_last_3d)
