"""Autocast on the emulated mps device (float16 lists), when the mps backend is installed."""

from __future__ import annotations

import pytest

import torchplug
from torchplug._runtime.backends import registered_backends
from torchplug._plugins import ensure_loaded

ensure_loaded()
if "mps" not in registered_backends() or "mps" not in torchplug.amp.policies():
    pytest.skip("the mps backend (with its autocast policy) is not installed", allow_module_level=True)


@pytest.fixture(autouse=True)
def _emulate(monkeypatch):
    monkeypatch.setenv("TORCHPLUG_MPS_EMULATE", "1")


def test_mps_policy_is_pytorchs_mps_lists():
    torch = pytest.importorskip("torch")
    pol = torchplug.amp.policy("mps")
    assert pol.default_dtype is torchplug.float16
    listed = {n.removeprefix("aten::") for n in pol.lower_precision_fp + pol.fp32 + pol.fp32_set_opt_dtype + pol.promote}
    names = torch._C._dispatch_get_all_op_names()
    registered = {n.removeprefix("aten::") for n in names if torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastMPS")}
    assert listed == registered


def test_mps_output_dtypes():
    a, b = torchplug.randn(3, 4, device="mps"), torchplug.randn(4, 5, device="mps")
    h = a.half()
    assert torchplug.amp.is_autocast_available("mps")
    assert torchplug.get_autocast_dtype("mps") is torchplug.float16
    with torchplug.autocast("mps"):
        assert (a @ b).dtype is torchplug.float16
        assert torchplug.mm(a, b).dtype is torchplug.float16
        assert torchplug.addmm(torchplug.zeros(3, 5, device="mps"), a, b).dtype is torchplug.float16
        assert torchplug.mv(a, a[0]).dtype is torchplug.float16
        assert torchplug.exp(h).dtype is torchplug.float32  # fp32 list
        assert torchplug.sum(h).dtype is torchplug.float32  # fp32_set_opt_dtype
        assert torchplug.sum(h, dtype=torchplug.float16).dtype is torchplug.float16
        assert torchplug.cumsum(h, 0).dtype is torchplug.float32
        assert torchplug.addcmul(h, h, h).dtype is torchplug.float16  # promote
        assert torchplug.addcmul(h, h, a).dtype is torchplug.float32
        assert torchplug.cat([h, a]).dtype is torchplug.float32  # not on the mps lists: ordinary promotion
        assert (h + a).dtype is torchplug.float32
        assert (torchplug.randn(2, 3) @ torchplug.randn(3, 2)).dtype is torchplug.float32  # cpu tensors untouched
        with torchplug.autocast("mps", dtype=torchplug.bfloat16):
            assert (a @ b).dtype is torchplug.bfloat16
        with torchplug.autocast("mps", enabled=False):
            assert (a @ b).dtype is torchplug.float32
    assert (a @ b).dtype is torchplug.float32
    report = torchplug.amp.explain("mps", "mm")
    assert report.policy == "lower_precision_fp" and "plugin 'mps'" in report.owner and "AutocastMPS" in report.kernel


def test_mps_unsupported_dtype_warns():
    with pytest.warns(UserWarning, match="In MPS autocast, but the target dtype is not supported. Disabling autocast."):
        ac = torchplug.autocast("mps", dtype=torchplug.float32)
    with ac:
        assert not torchplug.is_autocast_enabled("mps")


def test_grad_scaler_on_mps_skips_inf_step():
    p = torchplug.tensor([1.0, 2.0], device="mps")

    class Opt:
        param_groups = [{"params": [p]}]
        steps = 0

        def step(self):
            self.steps += 1

    opt = Opt()
    scaler = torchplug.amp.GradScaler("mps", init_scale=4.0)
    scaler.scale(torchplug.tensor(1.0, device="mps"))
    p.grad = torchplug.tensor([float("inf"), 1.0], device="mps")
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 0 and scaler.get_scale() == 2.0
    p.grad = torchplug.tensor([2.0, 4.0], device="mps")
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and p.grad.tolist() == [1.0, 2.0]
