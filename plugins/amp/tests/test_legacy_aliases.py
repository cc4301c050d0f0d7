"""torchplug.cpu.amp / torchplug.cuda.amp: PyTorch's deprecated per-device aliases of amp."""

from __future__ import annotations

import warnings

import pytest

import torchplug
from torchplug._runtime.backends import registered_backends


@pytest.fixture
def real():
    return pytest.importorskip("torch")


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category, str(w.message)) for w in caught]


def test_cpu_amp_autocast_is_amp_autocast_on_cpu(real):
    def ours():
        with torchplug.cpu.amp.autocast():
            return torchplug.is_autocast_enabled("cpu"), torchplug.get_autocast_dtype("cpu"), \
                (torchplug.ones(2, 2) @ torchplug.ones(2, 2)).dtype

    def theirs():
        with real.cpu.amp.autocast():
            return real.is_autocast_enabled("cpu"), real.get_autocast_dtype("cpu"), (real.ones(2, 2) @ real.ones(2, 2)).dtype

    (o_on, o_dtype, o_mm), o_warn = _caught(ours)
    (t_on, t_dtype, t_mm), t_warn = _caught(theirs)
    assert o_on is t_on is True and str(o_dtype).split(".")[1] == str(t_dtype).split(".")[1] == "bfloat16"
    assert str(o_mm).split(".")[1] == str(t_mm).split(".")[1]
    assert not torchplug.is_autocast_enabled("cpu")
    assert o_warn == t_warn == [(FutureWarning, "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                                                "`torch.amp.autocast('cpu', args...)` instead.")]
    assert issubclass(torchplug.cpu.amp.autocast, torchplug.amp.autocast)
    assert torchplug.cpu.amp.__all__ == ["autocast", "GradScaler"]


def test_cpu_amp_gradscaler_warns_and_scales(real):
    scaler, o_warn = _caught(lambda: torchplug.cpu.amp.GradScaler(init_scale=4.0))
    _, t_warn = _caught(lambda: real.cpu.amp.GradScaler(init_scale=4.0))
    assert o_warn == t_warn
    assert scaler.is_enabled() and scaler.scale(torchplug.ones(1)).item() == 4.0


def test_cuda_amp_names_and_custom_decorators():
    amp = torchplug.cuda.amp
    assert sorted(amp.__all__) == ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
    import torchplug.cuda.amp as imported
    from torchplug.cuda.amp import custom_fwd

    assert imported is amp and custom_fwd is amp.custom_fwd

    def forward(ctx, x):
        return x

    wrapped, caught = _caught(lambda: amp.custom_fwd(forward))
    assert callable(wrapped)
    assert caught == [(FutureWarning, "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                                      "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.")]
    _, caught = _caught(lambda: amp.custom_bwd(forward))
    assert caught[0][0] is FutureWarning and "torch.cuda.amp.custom_bwd" in caught[0][1]


def test_cuda_amp_on_an_unusable_device_disables_itself(monkeypatch):
    monkeypatch.delenv("TORCHPLUG_CUDA_EMULATE", raising=False)
    if "cuda" in registered_backends() and torchplug.cuda.is_available():
        pytest.skip("this machine has a GPU")

    def use():
        with torchplug.cuda.amp.autocast() as region:
            return region, torchplug.is_autocast_enabled("cpu")

    (region, cpu_on), caught = _caught(use)
    assert cpu_on is False and region._enabled is False
    assert (UserWarning, "CUDA is not available. Disabling autocast.") in caught
    scaler, caught = _caught(lambda: torchplug.cuda.amp.GradScaler())
    assert scaler.is_enabled() is False
    assert any("GradScaler is enabled, but CUDA is not available" in m for _, m in caught)


def test_cuda_amp_on_the_emulated_device(monkeypatch):
    if "cuda" not in registered_backends():
        pytest.skip("torchplug-cuda is not installed")
    monkeypatch.setenv("TORCHPLUG_CUDA_EMULATE", "1")

    def use():
        with torchplug.cuda.amp.autocast():
            a = torchplug.ones(2, 2, device="cuda")
            return torchplug.is_autocast_enabled("cuda"), (a @ a).dtype

    (on, dtype), caught = _caught(use)
    assert on is True and dtype is torchplug.float16  # PyTorch's default for torch.cuda.amp.autocast
    assert [c for c, _ in caught] == [FutureWarning]
    scaler, _ = _caught(lambda: torchplug.cuda.amp.GradScaler())
    assert scaler.is_enabled()


def test_only_cuda_and_cpu_have_amp():
    with pytest.raises(AttributeError):
        torchplug.amp.device_amp_module("mps")
