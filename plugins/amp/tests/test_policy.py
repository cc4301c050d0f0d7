"""Autocast policies as data: contributions, overrides, explain, ops defined later, plugin unload."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

import torchplug
from torchplug.hookspecs import hookimpl
from torchplug.library import Library

amp = torchplug.amp


def _mm_dtype():
    a, b = torchplug.randn(2, 3), torchplug.randn(3, 2)
    with torchplug.autocast("cpu"):
        return torchplug.mm(a, b).dtype


def test_cpu_policy_is_pytorchs_cpu_lists():
    torch = pytest.importorskip("torch")
    pol = amp.policy("cpu")
    assert pol.default_dtype is torchplug.bfloat16
    assert pol.supported_dtypes == (torchplug.bfloat16, torchplug.float16)
    listed = {n.removeprefix("aten::") for n in pol.lower_precision_fp + pol.fp32 + pol.promote}
    names = torch._C._dispatch_get_all_op_names()
    registered = {n.removeprefix("aten::") for n in names if torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCPU")}
    registered = {n.removesuffix(".default") for n in registered}
    assert listed == registered
    assert "aten::mm" in pol.lower_precision_fp and "aten::cat" in pol.promote and "aten::prod" in pol.fp32
    assert pol.fp32_set_opt_dtype == () and pol.banned == {}


def test_explain_names_list_and_plugin():
    report = amp.explain("cpu", "mm")
    assert report.policy == "lower_precision_fp"
    assert "plugin 'cpu'" in report.owner
    assert report.kernel and "AutocastCPU" in report.kernel and "plugin 'amp'" in report.kernel
    text = str(report)
    assert "lower_precision_fp" in text and "plugin 'cpu'" in text
    assert amp.explain("cpu", torchplug.ops.aten.mm.default).policy == "lower_precision_fp"
    assert amp.explain("cpu", torchplug.ops.aten.cat).policy == "promote"
    plain = amp.explain("cpu", "add.Tensor")
    assert plain.policy is None and "on no autocast list" in str(plain)
    folded = amp.explain("cpu", "prod.dim_int")
    assert folded.op == "aten::prod" and folded.policy == "fp32" and folded.listed_as == "aten::prod.dim_int"
    unknown = amp.explain("cpu", "orgqr")
    assert unknown.policy == "fp32" and not unknown.defined and "no plugin defines" in str(unknown)
    assert "aten::orgqr" in amp.unknown_ops("cpu")
    listed = amp.explain("cpu", "fft_rfft2")  # defined by the core (torchplug.fft's composites)
    assert listed.policy == "fp32" and listed.defined and "aten::fft_rfft2" not in amp.unknown_ops("cpu")
    assert "aten::mm" not in amp.unknown_ops("cpu")
    inplace = amp.explain("cpu", "addmm_")
    assert inplace.policy is None
    assert "no autocast policy" in str(amp.explain("meta", "mm"))


def test_set_op_policy_and_reset():
    assert _mm_dtype() is torchplug.bfloat16
    amp.set_op_policy("cpu", "mm", "fp32")
    try:
        assert _mm_dtype() is torchplug.float32
        report = amp.explain("cpu", "mm")
        assert report.policy == "fp32" and report.owner == "user"
        amp.set_op_policy("cpu", "mm", None)
        assert amp.explain("cpu", "mm").policy is None
        assert "removed from its list by user" in str(amp.explain("cpu", "mm"))
        assert _mm_dtype() is torchplug.float32  # off every list: runs in its inputs' dtype
    finally:
        amp.reset_op_policy("cpu", "mm")
    assert _mm_dtype() is torchplug.bfloat16
    assert "aten::mm" in amp.policy("cpu").lower_precision_fp
    with pytest.raises(ValueError, match="Unknown cast policy"):
        amp.set_op_policy("cpu", "mm", "fp8")


def test_banned_and_fp32_set_opt_dtype():
    x = torchplug.randn(3, 4).to(torchplug.bfloat16)
    amp.set_op_policy("cpu", "sum", "fp32_set_opt_dtype")
    amp.set_op_policy("cpu", "mv", "banned", message="mv is unsafe to autocast")
    try:
        with torchplug.autocast("cpu"):
            assert torchplug.sum(x).dtype is torchplug.float32
            assert torchplug.sum(x, dtype=torchplug.bfloat16).dtype is torchplug.bfloat16
            assert torchplug.sum(torchplug.ones(3, dtype=torchplug.int64)).dtype is torchplug.int64
            with pytest.raises(RuntimeError, match="mv is unsafe to autocast"):
                torchplug.mv(x, torchplug.randn(4))
        assert torchplug.sum(x).dtype is torchplug.bfloat16
        assert amp.explain("cpu", "mv").policy == "banned"
    finally:
        amp.reset_op_policy("cpu", "sum")
        amp.reset_op_policy("cpu", "mv")
    with torchplug.autocast("cpu"):
        assert torchplug.sum(x).dtype is torchplug.bfloat16


def test_register_policy_context_and_custom_op_defined_later():
    seen = []
    with amp.register_policy({"lower_precision_fp": ["amptest::scale2"], "fp32": ["mm"]}, "cpu", owner="test") as handle:
        assert handle.owner == "test"
        assert _mm_dtype() is torchplug.float32
        assert "amptest::scale2" in amp.unknown_ops("cpu")
        assert amp.explain("cpu", "amptest::scale2").owner == "test"
        with Library("amptest", "DEF") as lib:
            lib.define("scale2(Tensor x) -> Tensor")

            def scale2(x):
                seen.append(x.dtype)
                return x * 2

            lib.impl("scale2", scale2, "CompositeExplicitAutograd")
            assert "amptest::scale2" not in amp.unknown_ops("cpu")
            x = torchplug.randn(3)
            with torchplug.autocast("cpu"):
                assert torchplug.ops.amptest.scale2(x).dtype is torchplug.bfloat16
            assert torchplug.ops.amptest.scale2(x).dtype is torchplug.float32
            assert seen == [torchplug.bfloat16, torchplug.float32]
            assert amp.explain("cpu", "amptest::scale2").kernel
    assert _mm_dtype() is torchplug.bfloat16
    assert "amptest::scale2" not in amp.policy("cpu").lower_precision_fp


def test_plugin_contributes_and_unloads_policy():
    from torchplug._plugins import MANAGER

    plugin = SimpleNamespace()

    @hookimpl
    def torchplug_register_autocast_policy(ctx):
        ctx.register_autocast_policy("cpu", {"fp32": ("mm",), "banned": {"dot": "no dot under autocast"}})

    plugin.torchplug_register_autocast_policy = torchplug_register_autocast_policy
    record = MANAGER.load_plugin(plugin, "amp_test_policy")
    try:
        assert record.status == "loaded", record.reason
        assert _mm_dtype() is torchplug.float32
        report = amp.explain("cpu", "mm")
        assert report.policy == "fp32" and "amp_test_policy" in report.owner
        with torchplug.autocast("cpu"), pytest.raises(RuntimeError, match="no dot under autocast"):
            torchplug.dot(torchplug.randn(3), torchplug.randn(3))
    finally:
        MANAGER.unload_plugin("amp_test_policy")
    assert _mm_dtype() is torchplug.bfloat16
    assert amp.explain("cpu", "dot").policy is None


def test_invalid_policy_is_reported_not_fatal():
    from torchplug._plugins import MANAGER

    plugin = SimpleNamespace()

    @hookimpl
    def torchplug_register_autocast_policy(ctx):
        ctx.register_autocast_policy("cpu", {"lowr_precision": ["mm"]})

    plugin.torchplug_register_autocast_policy = torchplug_register_autocast_policy
    record = MANAGER.load_plugin(plugin, "amp_test_bad_policy")
    try:
        assert record.status == "loaded"
        assert any("lowr_precision" in line for line in amp.summary())
        assert _mm_dtype() is torchplug.bfloat16
    finally:
        MANAGER.unload_plugin("amp_test_bad_policy")
    assert not any("lowr_precision" in line for line in amp.summary())


def test_policy_data_validation():
    with pytest.raises(TypeError, match="Unknown autocast policy field"):
        amp.AutocastPolicy.from_data({"fp23": []}, "cpu")
    with pytest.raises(TypeError, match="must be a list of op names"):
        amp.AutocastPolicy.from_data({"fp32": "mm"}, "cpu")
    with pytest.raises(ValueError, match="needs a device_type"):
        amp.AutocastPolicy.from_data({})
    pol = amp.AutocastPolicy.from_data(amp.AutocastPolicy(default_dtype="float16", promote=["cat"]), "mps")
    assert pol.default_dtype is torchplug.float16 and pol.promote == ("aten::cat",)


def test_doctor_shows_autocast_dtypes():
    from torchplug.__main__ import doctor_report

    text = doctor_report()
    section = text[text.index("Autocast:"):]
    assert "cpu" in section and "dtype=bfloat16" in section and "kernels at AutocastCPU" in section


def _run(code, **env):
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=120)


def test_without_backends_and_without_amp():
    done = _run(
        "import torchplug\n"
        "print(torchplug.amp.is_autocast_available('cpu'))\n"
        "try:\n    torchplug.autocast('cpu')\nexcept RuntimeError as e:\n    print(e)\n",
        TORCHPLUG_BLOCK_PLUGINS="cpu,meta",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False", "User specified an unsupported autocast device_type 'cpu'"]
    done = _run(
        "import torchplug\ntry:\n    torchplug.autocast\nexcept AttributeError as e:\n    print(e)\n"
        "from torchplug.__main__ import doctor_report\nprint(doctor_report().splitlines()[-1])",
        TORCHPLUG_BLOCK_PLUGINS="amp",
    )
    assert done.returncode == 0, done.stderr
    assert "provided by the 'amp' plugin" in done.stdout
    assert "(the amp plugin is blocked by TORCHPLUG_BLOCK_PLUGINS)" in done.stdout


def test_submodule_imports_give_the_loaded_modules():
    done = _run(
        "import torchplug.amp.grad_scaler as g\n"
        "from torchplug.amp.autocast_mode import autocast, is_autocast_available\n"
        "import torchplug, torchplug_amp\n"
        "print(g is torchplug_amp.grad_scaler, autocast is torchplug.autocast, is_autocast_available('cpu'))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_second_device_with_an_fp16_policy():
    # Any backend gets autocast from data alone: give meta a GPU-like float16 policy.
    policy = {
        "default_dtype": "float16",
        "supported_dtypes": ("bfloat16", "float16"),
        "lower_precision_fp": ("mm", "matmul"),
        "fp32": ("exp",),
        "fp32_set_opt_dtype": ("sum",),
        "promote": ("cat",),
    }
    a, b = torchplug.randn(3, 4, device="meta"), torchplug.randn(4, 5, device="meta")
    c, d = torchplug.randn(3, 4), torchplug.randn(4, 5)
    assert not amp.is_autocast_available("meta")
    with amp.register_policy(policy, "meta", owner="test"):
        assert amp.is_autocast_available("meta")
        assert torchplug.get_autocast_dtype("meta") is torchplug.float16
        with torchplug.autocast("meta"):
            assert (a @ b).dtype is torchplug.float16
            assert (c @ d).dtype is torchplug.float32  # cpu tensors: AutocastCPU is still excluded
            h = a.to(torchplug.float16)
            assert torchplug.exp(h).dtype is torchplug.float32
            assert torchplug.sum(h).dtype is torchplug.float32
            assert torchplug.sum(h, dtype=torchplug.float16).dtype is torchplug.float16
            assert torchplug.cat([h, h]).dtype is torchplug.float16
            assert torchplug.cat([h, a]).dtype is torchplug.float32
            with torchplug.autocast("cpu"):
                assert (c @ d).dtype is torchplug.bfloat16
                assert (a @ b).dtype is torchplug.float16
        assert "kernels at AutocastMeta" in "\n".join(amp.summary())
    assert not amp.is_autocast_available("meta")


def test_promote_with_python_numbers_and_optional_tensors():
    x = torchplug.randn(3).to(torchplug.bfloat16)
    amp.set_op_policy("cpu", "atan2", "promote")
    amp.set_op_policy("cpu", "addcmul", "promote")
    amp.set_op_policy("cpu", "clamp.Tensor", "fp32")
    try:
        with torchplug.autocast("cpu"):
            # (the aten op: torch.atan2 itself takes no Python number)
            assert torchplug.ops.aten.atan2(x, 2.0).dtype is torchplug.bfloat16
            assert torchplug.atan2(x, torchplug.randn(3)).dtype is torchplug.float32
            assert torchplug.addcmul(x, x, x).dtype is torchplug.bfloat16
            assert torchplug.addcmul(x, x, torchplug.randn(3)).dtype is torchplug.float32
            assert torchplug.clamp(x, min=torchplug.zeros(3)).dtype is torchplug.float32
    finally:
        for op in ("atan2", "addcmul", "clamp.Tensor"):
            amp.reset_op_policy("cpu", op)
