"""Autocast on cpu: output dtypes of listed ops against real torch, nesting, threads, warnings, cache."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import torchplug
from torchplug_amp import state as amp_state

DTYPE_NAMES = ("float32", "bfloat16", "float16", "float64", "int64")


def _pair(shape, dtype, seed=0):
    torch = pytest.importorskip("torch")
    arr = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    if dtype == "int64":
        arr = (arr * 4).round()
    return (torchplug.tensor(arr).to(getattr(torchplug, dtype)), torch.tensor(arr).to(getattr(torch, dtype)))


def _name(dt):
    return str(dt).rsplit(".", 1)[-1]


# (label, fn(module, *tensors), input shapes)
CASES = [
    ("mm", lambda m, a, b: m.mm(a, b), [(3, 4), (4, 5)]),
    ("method mm", lambda m, a, b: a.mm(b), [(3, 4), (4, 5)]),
    ("matmul @", lambda m, a, b: a @ b, [(3, 4), (4, 5)]),
    ("matmul 3d", lambda m, a, b: m.matmul(a, b), [(2, 3, 4), (4, 5)]),
    ("bmm", lambda m, a, b: m.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    ("addmm", lambda m, c, a, b: m.addmm(c, a, b), [(3, 5), (3, 4), (4, 5)]),
    ("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), [(2, 3, 5), (2, 3, 4), (2, 4, 5)]),
    ("prod", lambda m, a: m.prod(a), [(3, 4)]),
    ("prod dim", lambda m, a: m.prod(a, 1), [(3, 4)]),
    ("cat", lambda m, a, b: m.cat([a, b]), [(3, 4), (2, 4)]),
    ("stack", lambda m, a, b: m.stack([a, b]), [(3, 4), (3, 4)]),
    ("trace", lambda m, a: m.trace(a), [(4, 4)]),
    # ops other plugins add (skipped until defined)
    ("linear", lambda m, x, w, b: m.ops.aten.linear(x, w, b), [(2, 4), (3, 4), (3,)]),
    ("conv2d", lambda m, x, w: m.ops.aten.conv2d(x, w), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    ("mse_loss", lambda m, a, b: m.ops.aten.mse_loss(a, b), [(3, 4), (3, 4)]),
    ("cdist", lambda m, a, b: m.cdist(a, b), [(3, 4), (2, 4)]),
    # not on the CPU lists: inputs' dtypes, ordinary promotion
    ("add", lambda m, a, b: a + b, [(3, 4), (3, 4)]),
    ("sum", lambda m, a: m.sum(a), [(3, 4)]),
    ("exp", lambda m, a: m.exp(a), [(3, 4)]),
    ("mv", lambda m, a, b: m.mv(a, b), [(3, 4), (4,)]),
    ("dot", lambda m, a, b: m.dot(a, b), [(4,), (4,)]),
]


def _run(fn, shapes, dtypes, autocast_dtype):
    torch = pytest.importorskip("torch")
    pairs = [_pair(s, d, seed=i) for i, (s, d) in enumerate(zip(shapes, dtypes))]
    try:
        with torch.autocast("cpu", dtype=getattr(torch, autocast_dtype)):
            expected = fn(torch, *[p[1] for p in pairs])
    except RuntimeError as exc:
        with torchplug.autocast("cpu", dtype=getattr(torchplug, autocast_dtype)):
            with pytest.raises(RuntimeError) as info:
                fn(torchplug, *[p[0] for p in pairs])
        assert str(info.value).splitlines()[0] == str(exc).splitlines()[0]
        return
    with torchplug.autocast("cpu", dtype=getattr(torchplug, autocast_dtype)):
        actual = fn(torchplug, *[p[0] for p in pairs])
    assert _name(actual.dtype) == _name(expected.dtype)
    assert tuple(actual.shape) == tuple(expected.shape)
    tol = 3e-2 if _name(actual.dtype) in ("bfloat16", "float16") else 1e-4
    np.testing.assert_allclose(
        actual.to(torchplug.float64).numpy(), expected.double().numpy(), rtol=tol, atol=tol
    )


@pytest.mark.parametrize("autocast_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("label,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_output_dtype_matches_torch(label, fn, shapes, autocast_dtype):
    if label in ("linear", "conv2d", "mse_loss", "cdist") and f"aten::{label}" not in torchplug.list_ops("aten"):
        pytest.skip(f"no plugin defines aten::{label} yet")
    # all inputs fp32, all in the autocast dtype, and one mixed combination per op
    combos = [["float32"] * len(shapes), [autocast_dtype] * len(shapes)]
    if len(shapes) > 1:
        combos.append([autocast_dtype] + ["float32"] * (len(shapes) - 1))
        combos.append(["float64"] * len(shapes))
        other = "float16" if autocast_dtype == "bfloat16" else "bfloat16"
        combos.append([other] * len(shapes))
    for dtypes in combos:
        _run(fn, shapes, dtypes, autocast_dtype)


def test_cat_of_integers_and_mixed_float64_match_torch():
    _run(lambda m, a, b: m.cat([a, b]), [(2, 2), (2, 2)], ["int64", "int64"], "bfloat16")
    _run(lambda m, a, b: m.cat([a, b]), [(2, 2), (2, 2)], ["int64", "float32"], "bfloat16")
    _run(lambda m, a, b: m.cat([a, b]), [(2, 2), (2, 2)], ["bfloat16", "float64"], "bfloat16")


def test_out_and_inplace_are_not_cast():
    a, b = torchplug.randn(3, 4), torchplug.randn(4, 5)
    out = torchplug.empty(3, 5)
    with torchplug.autocast("cpu"):
        assert torchplug.mm(a, b, out=out).dtype is torchplug.float32
        c = torchplug.zeros(3, 5)
        assert c.addmm_(a, b).dtype is torchplug.float32
        assert torchplug.addmm(c, a, b).dtype is torchplug.bfloat16


def test_explicit_dtype_is_left_alone():
    x = torchplug.randn(3, 4).to(torchplug.bfloat16)
    with torchplug.autocast("cpu"):
        assert torchplug.prod(x).dtype is torchplug.float32
        assert torchplug.prod(x, dtype=torchplug.bfloat16).dtype is torchplug.bfloat16
        assert torchplug.prod(x, dtype=torchplug.float64).dtype is torchplug.float64


def test_nesting_and_disabling():
    a, b = torchplug.randn(2, 3), torchplug.randn(3, 2)
    assert not torchplug.is_autocast_enabled("cpu")
    with torchplug.autocast("cpu"):
        assert torchplug.is_autocast_enabled("cpu")
        assert (a @ b).dtype is torchplug.bfloat16
        with torchplug.autocast("cpu", enabled=False):
            assert not torchplug.is_autocast_enabled("cpu")
            assert (a @ b).dtype is torchplug.float32
            with torchplug.autocast("cpu", dtype=torchplug.float16):
                assert torchplug.get_autocast_dtype("cpu") is torchplug.float16
                assert (a @ b).dtype is torchplug.float16
            assert torchplug.get_autocast_dtype("cpu") is torchplug.bfloat16
            assert (a @ b).dtype is torchplug.float32
        assert torchplug.is_autocast_enabled("cpu")
        assert (a @ b).dtype is torchplug.bfloat16
    assert not torchplug.is_autocast_enabled("cpu")
    assert (a @ b).dtype is torchplug.float32


def test_exit_restores_state_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with torchplug.autocast("cpu"):
            1 / 0
    assert not torchplug.is_autocast_enabled("cpu")
    assert amp_state.STATE.nesting == 0


def test_decorator_and_recursion():
    ac = torchplug.autocast("cpu")
    a = torchplug.randn(2, 2)

    @ac
    def f(depth):
        out = (a @ a).dtype
        return [out] + (f(depth - 1) if depth else [])

    assert f(2) == [torchplug.bfloat16] * 3
    assert not torchplug.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match="requires a callable"):
        ac(3)


def test_state_is_thread_local():
    a = torchplug.randn(2, 2)
    seen = {}

    def other():
        seen["enabled"] = torchplug.is_autocast_enabled("cpu")
        seen["dtype"] = (a @ a).dtype
        seen["autocast_dtype"] = torchplug.get_autocast_dtype("cpu")

    with torchplug.autocast("cpu", dtype=torchplug.float16):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert (a @ a).dtype is torchplug.float16
    assert seen == {"enabled": False, "dtype": torchplug.float32, "autocast_dtype": torchplug.bfloat16}


def test_unsupported_dtype_warns_and_disables_like_torch():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.autocast("cpu", dtype=torch.float32)
    expected = str(caught[0].message).replace("torch.", "torchplug.")
    with pytest.warns(UserWarning) as record:
        ac = torchplug.autocast("cpu", dtype=torchplug.float32)
    assert str(record[0].message) == expected
    with ac:
        assert not torchplug.is_autocast_enabled("cpu")
        assert (torchplug.randn(2, 2) @ torchplug.randn(2, 2)).dtype is torchplug.float32


def test_unsupported_device_type():
    with pytest.raises(RuntimeError, match="User specified an unsupported autocast device_type 'nope'"):
        torchplug.autocast("nope")
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'meta'"):
        torchplug.autocast("meta")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        torchplug.autocast(torchplug.device("cpu"))
    assert torchplug.amp.is_autocast_available("cpu")
    assert not torchplug.amp.is_autocast_available("meta")
    assert not torchplug.amp.is_autocast_available("nope")


def test_module_level_functions():
    assert torchplug.get_autocast_dtype("cpu") is torchplug.bfloat16
    torchplug.set_autocast_dtype("cpu", torchplug.float16)
    try:
        with torchplug.autocast("cpu"):
            assert (torchplug.randn(2, 2) @ torchplug.randn(2, 2)).dtype is torchplug.float16
    finally:
        torchplug.set_autocast_dtype("cpu", torchplug.bfloat16)
    torchplug.set_autocast_enabled("cpu", True)
    try:
        assert torchplug.is_autocast_enabled("cpu")
        assert (torchplug.randn(2, 2) @ torchplug.randn(2, 2)).dtype is torchplug.bfloat16
    finally:
        torchplug.set_autocast_enabled("cpu", False)
    assert not torchplug.is_autocast_enabled()  # no device type: cuda, as in PyTorch
    assert torchplug.amp.autocast is torchplug.autocast
    assert torchplug.amp.autocast_mode.is_autocast_available("cpu")
    assert torchplug.autocast_increment_nesting() == 1
    assert torchplug.autocast_decrement_nesting() == 0


def _weight():
    w = torchplug.randn(4, 4)
    try:
        w.requires_grad_(True)
    except RuntimeError:  # no autograd plugin: the cache only looks at the flag
        w._requires_grad = True
    return w


def test_weight_cast_cache():
    x, w = torchplug.randn(2, 4), _weight()
    cache = amp_state.STATE.cache
    with torchplug.autocast("cpu"):
        x @ w
        assert len(cache) == 1
        (cached,) = [v[1] for v in cache.values()]
        x @ w
        assert len(cache) == 1 and [v[1] for v in cache.values()][0] is cached
        with torchplug.autocast("cpu"):
            x @ w
        assert len(cache) == 1  # only the outermost exit clears it
        x @ torchplug.randn(4, 4)  # not a leaf weight: never cached
        assert len(cache) == 1
    assert len(cache) == 0
    with torchplug.autocast("cpu", cache_enabled=False):
        x @ w
        assert len(cache) == 0
        assert not torchplug.is_autocast_cache_enabled()
    assert torchplug.is_autocast_cache_enabled()


def test_custom_fwd_and_bwd():
    from types import SimpleNamespace

    seen = {}

    @torchplug.amp.custom_fwd(device_type="cpu", cast_inputs=torchplug.float32)
    def forward(ctx, x):
        seen["fwd"] = (x.dtype, torchplug.is_autocast_enabled("cpu"))
        return x

    @torchplug.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        seen["bwd"] = (torchplug.is_autocast_enabled("cpu"), torchplug.get_autocast_dtype("cpu"))
        return g

    @torchplug.amp.custom_fwd(device_type="cpu")
    def forward_plain(ctx, x):
        return torchplug.is_autocast_enabled("cpu")

    ctx = SimpleNamespace()
    x = torchplug.randn(2).to(torchplug.bfloat16)
    with torchplug.autocast("cpu"):
        forward(ctx, x)
        assert seen["fwd"] == (torchplug.float32, False)
        assert forward_plain(SimpleNamespace(), x) is True
    forward(ctx, x)
    assert seen["fwd"] == (torchplug.bfloat16, False)
    ctx2 = SimpleNamespace()
    with torchplug.autocast("cpu", dtype=torchplug.float16):
        forward_plain(ctx2, x)
    backward(ctx2, x)
    assert seen["bwd"] == (True, torchplug.float16)
    assert not torchplug.is_autocast_enabled("cpu")


def test_backward_through_autocast_matches_torch():
    torch = pytest.importorskip("torch")
    try:
        torchplug.randn(1).requires_grad_()
    except RuntimeError:
        pytest.skip("the autograd plugin is not loaded")
    x_np = np.random.default_rng(1).uniform(-1, 1, (2, 4)).astype(np.float32)
    w_np = np.random.default_rng(2).uniform(-1, 1, (4, 3)).astype(np.float32)
    grads = {}
    for mod in (torch, torchplug):
        x, w = mod.tensor(x_np), mod.tensor(w_np).requires_grad_()
        with mod.autocast("cpu"):
            y = x @ w
            loss = (y.float() * 2).sum()
        assert _name(y.dtype) == "bfloat16"
        loss.backward()
        grads[mod.__name__] = (_name(w.grad.dtype), w.grad.to(mod.float64).numpy())
    assert grads["torchplug"][0] == grads["torch"][0] == "float32"
    np.testing.assert_allclose(grads["torchplug"][1], grads["torch"][1], rtol=1e-2, atol=1e-2)
