"""torchplug.nn.attention against torch.nn.attention: sdpa_kernel's backend selection as
F.scaled_dot_product_attention honours it on cpu, the flags it sets, and the causal biases."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import torchplug
import torchplug.nn.functional as F
from torchplug.nn import attention
from torchplug.nn.attention import SDPBackend, sdpa_kernel
from torchplug.nn.attention.bias import CausalVariant, causal_lower_right, causal_upper_left


def _torch():
    return pytest.importorskip("torch")


def _inputs(lib, rng, q_shape, k_shape=None, v_shape=None):
    k_shape = k_shape or q_shape
    v_shape = v_shape or k_shape
    return [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in (q_shape, k_shape, v_shape)]


CASES = {
    "4d": dict(shapes=((1, 2, 3, 4),)),
    "3d": dict(shapes=((2, 3, 4),)),
    "5d": dict(shapes=((1, 1, 2, 3, 4),)),
    "dropout": dict(shapes=((1, 2, 3, 4),), kw=dict(dropout_p=0.5)),
    "causal": dict(shapes=((1, 2, 3, 4),), kw=dict(is_causal=True)),
    "longer kv": dict(shapes=((1, 2, 3, 4), (1, 2, 5, 4))),
    "value head size": dict(shapes=((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 6))),
    "strided": dict(shapes=((1, 2, 4, 3),), transpose=True),
}
BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION, "math": [SDPBackend.MATH], "none": [], "error": SDPBackend.ERROR,
    "flash+efficient": [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION],
}


def _outcome(lib, nn_attention, backends, case, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = _inputs(lib, rng, *case["shapes"])
    if case.get("transpose"):
        q, k, v = (t.transpose(-1, -2) for t in (q, k, v))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with nn_attention.sdpa_kernel(backends):
                out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **case.get("kw", {}))
        except RuntimeError as exc:
            return ("error", str(exc), [str(w.message) for w in caught])
    if case.get("kw", {}).get("dropout_p"):
        return ("ran", list(out.shape), None)
    return ("ran", list(out.shape), out.detach().numpy())


@pytest.mark.parametrize("backend_name", sorted(BACKENDS))
@pytest.mark.parametrize("case_name", sorted(CASES))
def test_backend_selection_matches_torch(backend_name, case_name):
    torch = _torch()
    import torch.nn.attention as torch_attention

    torch_backends = getattr(torch_attention.SDPBackend, BACKENDS[backend_name].name) \
        if isinstance(BACKENDS[backend_name], SDPBackend) else \
        [getattr(torch_attention.SDPBackend, b.name) for b in BACKENDS[backend_name]]
    ours = _outcome(torchplug, attention, BACKENDS[backend_name], CASES[case_name])
    theirs = _outcome(torch, torch_attention, torch_backends, CASES[case_name])
    assert ours[:2] == theirs[:2]
    if ours[0] == "error":
        assert [m for m in ours[2] if "kernel" in m or "fused" in m or "Flash" in m] == \
            [m.split(" (Triggered internally")[0] for m in theirs[2]]
    elif ours[2] is not None:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)


def test_sdpa_kernel_sets_and_restores_the_flags_like_torch():
    torch = _torch()
    import torch.nn.attention as torch_attention

    names = ("flash_sdp_enabled", "mem_efficient_sdp_enabled", "math_sdp_enabled", "cudnn_sdp_enabled")
    seen = []
    for lib, mod in ((torchplug, attention), (torch, torch_attention)):
        flags = []
        with mod.sdpa_kernel([mod.SDPBackend.MATH, mod.SDPBackend.EFFICIENT_ATTENTION]) as ctx:
            assert ctx == {}
            flags.append([getattr(lib.backends.cuda, n)() for n in names])
        flags.append([getattr(lib.backends.cuda, n)() for n in names])
        seen.append(flags)
    assert seen[0] == seen[1] == [[False, True, True, False], [True, True, True, True]]


def test_enable_math_sdp_false_is_the_same_switch():
    q = torchplug.randn(1, 2, 3, 4)
    torchplug.backends.cuda.enable_math_sdp(False)
    torchplug.backends.cuda.enable_flash_sdp(False)
    try:
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found"):
            F.scaled_dot_product_attention(q, q, q)
        with sdpa_kernel(SDPBackend.MATH):
            assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 4)
        assert not torchplug.backends.cuda.math_sdp_enabled()  # restored to what it was before the block
    finally:
        torchplug.backends.cuda.enable_math_sdp(True)
        torchplug.backends.cuda.enable_flash_sdp(True)


def test_sdpa_kernel_rejects_other_types_like_torch():
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a list of SDPBackend "
                                             "instances, got str"):
        with sdpa_kernel("math"):
            pass


def test_sdpa_backend_enum_matches_torch():
    torch = _torch()
    import torch.nn.attention as torch_attention

    assert [(b.name, int(b)) for b in SDPBackend] == \
        [(name, int(b)) for name, b in torch_attention.SDPBackend.__members__.items()]
    assert repr(SDPBackend.MATH) == repr(torch_attention.SDPBackend.MATH)


def test_set_priority_orders_the_current_backends():
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION], set_priority=True):
        assert attention._cur_sdpa_kernel_backends(with_priority=True) == [SDPBackend.MATH,
                                                                           SDPBackend.FLASH_ATTENTION]
    assert attention._cur_sdpa_kernel_backends(with_priority=True)[0] == SDPBackend.FLASH_ATTENTION


@pytest.mark.parametrize("size", [(3, 3), (3, 5), (4, 6)])
@pytest.mark.parametrize("which", ["causal_upper_left", "causal_lower_right"])
def test_causal_biases_match_torch(which, size):
    torch = _torch()
    import torch.nn.attention.bias as torch_bias

    rng = np.random.default_rng(1)
    q, k, v = ((1, 2, size[0], 4), (1, 2, size[1], 4), (1, 2, size[1], 4))
    ours = F.scaled_dot_product_attention(*_inputs(torchplug, rng, q, k, v),
                                          attn_mask=getattr(__import__("torchplug.nn.attention.bias",
                                                                       fromlist=[which]), which)(*size))
    rng = np.random.default_rng(1)
    theirs = torch.nn.functional.scaled_dot_product_attention(*_inputs(torch, rng, q, k, v),
                                                              attn_mask=getattr(torch_bias, which)(*size))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    assert getattr(torchplug.nn.attention.bias, which)(*size)._materialize().tolist() == \
        getattr(torch_bias, which)(*size)._materialize().tolist()


def test_causal_bias_errors_like_torch():
    q = torchplug.randn(1, 1, 2, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=causal_upper_left(2, 2), is_causal=True)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        causal_lower_right(4, 2)
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(1, 2, 3)
    assert causal_lower_right(2, 3).variant is CausalVariant.LOWER_RIGHT


def test_causal_bias_is_a_tensor_subclass_like_torch():
    torch = _torch()
    import torch.nn.attention.bias as torch_bias

    for lib, mod in ((torchplug, torchplug.nn.attention.bias), (torch, torch_bias)):
        upper, lower = mod.causal_upper_left(2, 5), mod.causal_lower_right(2, 5)
        assert type(upper) is type(lower) is mod.CausalBias
        assert issubclass(mod.CausalBias, lib.Tensor) and isinstance(upper, lib.Tensor)
        assert repr(lower) == repr(lower._materialize())


def test_legacy_constructor_of_a_subclass_makes_an_instance_and_runs_init():
    torch = _torch()
    for lib in (torchplug, torch):
        class Tagged(lib.Tensor):
            def __init__(self, *args):
                self.tag = len(args)

        t = Tagged(2, 3)
        assert type(t) is Tagged and tuple(t.shape) == (2, 3) and t.dtype == lib.float32 and t.tag == 2
        d = Tagged([1.0, 2.0])
        assert type(d) is Tagged and d.tolist() == [1.0, 2.0] and d.tag == 1
        assert type(lib.Tensor(2)) is lib.Tensor


# Heads split off one projection: q, k, v are (batch, seq, heads, dim) tensors transposed to (batch, heads, seq, dim).
LAYOUTS = {
    "flash, heads transposed": dict(q=(2, 5, 4, 8), kv=(2, 7, 4, 8), kw={}),
    "flash, causal": dict(q=(2, 5, 4, 8), kv=(2, 5, 4, 8), kw=dict(is_causal=True)),
    "flash, mask": dict(q=(2, 5, 4, 8), kv=(2, 7, 4, 8), kw=dict(mask=True)),
    "math: dropout": dict(q=(2, 5, 4, 8), kv=(2, 7, 4, 8), kw=dict(dropout_p=0.3)),
    "math: value head size": dict(q=(2, 5, 4, 8), kv=(2, 7, 4, 8), v_dim=6, kw={}),
    "math: sdpa_kernel": dict(q=(2, 5, 4, 8), kv=(2, 7, 4, 8), kw={}, backend=SDPBackend.MATH),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_output_layout_follows_the_cpu_kernel_torch_picks(name):
    torch = _torch()
    case = LAYOUTS[name]
    strides = []
    for lib, sdpa, kernel in ((torchplug, F.scaled_dot_product_attention, sdpa_kernel),
                              (torch, torch.nn.functional.scaled_dot_product_attention,
                               torch.nn.attention.sdpa_kernel)):
        lib.manual_seed(0)
        q = lib.rand(*case["q"]).transpose(1, 2)
        k = lib.rand(*case["kv"]).transpose(1, 2)
        v = lib.rand(*case["kv"][:3], case.get("v_dim", case["kv"][3])).transpose(1, 2)
        kw = dict(case["kw"])
        if kw.pop("mask", False):
            kw["attn_mask"] = lib.ones(q.shape[2], k.shape[2], dtype=lib.bool).tril()
        backend = case.get("backend")
        if backend is not None:
            backend = getattr(torch.nn.attention.SDPBackend, backend.name) if lib is torch else backend
        with kernel(backend) if backend is not None else contextlib.nullcontext():
            out = sdpa(q, k, v, **kw)
        strides.append(out.stride())
        if out.stride() == (out.shape[1] * out.shape[2] * out.shape[3], out.shape[3], out.shape[1] * out.shape[3], 1):
            out.transpose(1, 2).view(out.shape[0], -1, out.shape[1] * out.shape[3])  # the tutorial's reshape
    assert strides[0] == strides[1], strides
