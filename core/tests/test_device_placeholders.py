"""torchplug.cuda / .mps / .xpu always exist; without a backend they answer like a PyTorch build
without the device and explain, with the install command, everything that needs one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import warnings

import pytest

import torchplug as torch
from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, install_command
from torchplug._runtime.device_module import SURFACE
from torchplug._runtime.allocator import OutOfMemoryError
from torchplug._runtime.device_placeholder import is_placeholder, placeholder_module
from torchplug._runtime.backends import missing_backend_message
from torchplug._runtime.streams import StreamContext


def run_clean(code: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ.update(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The Quickstart environment has no cuda backend; blocking the installed one gives the same registry.
QUICKSTART = {"TORCHPLUG_BLOCK_PLUGINS": "cuda"}


def test_cuda_module_without_backend_answers_like_torch_without_cuda():
    out = run_clean("""
        import json, warnings
        warnings.simplefilter("error")
        import torchplug as torch
        res = {"avail": torch.cuda.is_available(), "count": torch.cuda.device_count(),
               "bf16": torch.cuda.is_bf16_supported(), "init": torch.cuda.is_initialized(),
               "seed": [torch.cuda.manual_seed(0), torch.cuda.manual_seed_all(0), torch.cuda.seed(), torch.cuda.seed_all()],
               "arch": torch.cuda.get_arch_list(), "oom": torch.cuda.OutOfMemoryError.__name__,
               "oom_is_runtime": issubclass(torch.cuda.OutOfMemoryError, RuntimeError)}
        errors = {}
        for name, call in [("current_device", torch.cuda.current_device), ("synchronize", torch.cuda.synchronize),
                           ("get_device_name", torch.cuda.get_device_name), ("Stream", torch.cuda.Stream),
                           ("Event", torch.cuda.Event), ("memory_allocated", torch.cuda.memory_allocated),
                           ("get_device_properties", torch.cuda.get_device_properties),
                           ("get_rng_state", torch.cuda.get_rng_state), ("set_device", lambda: torch.cuda.set_device(0)),
                           ("device", lambda: torch.cuda.device(0))]:
            try:
                call()
                errors[name] = None
            except RuntimeError as exc:
                errors[name] = str(exc)
        torch.cuda.set_device(-1)  # negative: a no-op, as in PyTorch
        with torch.cuda.device(None), torch.cuda.stream(None):
            pass
        try:
            torch.cuda.FloatTensor(2)
            res["typed"] = None
        except TypeError as exc:
            res["typed"] = str(exc)
        res["isinstance"] = isinstance(torch.zeros(2), torch.cuda.FloatTensor)
        res["errors"] = errors
        res["placeholder"] = torch.cuda._torchplug_placeholder
        print(json.dumps(res))
    """, **QUICKSTART)
    assert out["avail"] is False and out["count"] == 0 and out["bf16"] is False and out["init"] is False
    assert out["seed"] == [None, None, None, None] and out["arch"] == []
    assert out["oom"] == "OutOfMemoryError" and out["oom_is_runtime"] and out["placeholder"] is True
    for name, msg in out["errors"].items():
        assert msg is not None, name
        assert f"torchplug.cuda.{name}" in msg and "'cuda' device" in msg, (name, msg)
        # the backend is installed here but blocked: the message says so instead of "install it"
        assert "blocked by TORCHPLUG_BLOCK_PLUGINS" in msg, (name, msg)
    assert out["typed"].startswith("type torch.cuda.FloatTensor not available.")
    assert out["isinstance"] is False


def test_placeholder_agrees_with_torch_built_without_cuda():
    real = pytest.importorskip("torch")
    if real.backends.cuda.is_built():
        pytest.skip("the installed torch has CUDA; the reference is a build without it")
    out = run_clean("""
        import json, torchplug as torch
        print(json.dumps([torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.is_bf16_supported(),
                          torch.cuda.is_initialized(), torch.cuda.manual_seed(1), torch.cuda.get_arch_list(),
                          torch.xpu.is_available(), torch.xpu.device_count(), torch.xpu.is_bf16_supported(),
                          torch.mps.device_count(), torch.backends.cuda.is_built(), torch.backends.mps.is_available()]))
    """, **QUICKSTART)
    expected = [real.cuda.is_available(), real.cuda.device_count(), real.cuda.is_bf16_supported(),
                real.cuda.is_initialized(), real.cuda.manual_seed(1), real.cuda.get_arch_list(),
                real.xpu.is_available(), real.xpu.device_count(), real.xpu.is_bf16_supported(),
                real.mps.device_count(), real.backends.cuda.is_built(), real.backends.mps.is_available()]
    assert out == expected


def test_not_installed_message_names_distribution_and_repository_command(monkeypatch):
    monkeypatch.setattr("torchplug._runtime.backends.missing_device_reason", [])  # nothing blocked or failed
    msg = missing_backend_message("cuda", "torchplug.cuda.current_device()")
    assert msg.startswith("torchplug.cuda.current_device() needs a 'cuda' device, but no backend for the 'cuda' device "
                          "type is installed.")
    assert "'torchplug-cuda' distribution" in msg
    command = install_command("cuda")
    assert command in msg
    # the command installs from this checkout: the path it names is the backend's source tree
    path = re.fullmatch(r"pip install -e (\S+)", command).group(1)
    assert os.path.isfile(os.path.join(path, "pyproject.toml"))
    with open(os.path.join(path, "pyproject.toml")) as f:
        assert 'name = "torchplug-cuda"' in f.read()
    assert "pip install torchplug-cuda" not in msg  # no package index has it
    assert re.search(r"pip install -e '\S+backends/cuda\[cuda12\]'", install_command("cuda", "cuda12"))


def test_xpu_placeholder_names_no_distribution():
    assert torch.xpu.is_available() is False and torch.xpu.device_count() == 0
    assert torch.xpu.is_bf16_supported() is False
    with pytest.raises(RuntimeError, match=r"torchplug\.xpu\.synchronize\(\) needs a 'xpu' device, but no backend for "
                                           r"the 'xpu' device type is installed\. torchplug has no backend"):
        torch.xpu.synchronize()
    with pytest.raises(AttributeError, match="has no attribute 'amp'"):
        torch.xpu.amp  # noqa: B018 - torch.xpu has no amp
    with pytest.raises(AttributeError):
        torch.xpu.FloatTensor  # noqa: B018


@pytest.mark.parametrize("device_type", [t for t, k in WELL_KNOWN_DEVICE_TYPES.items() if k.module])
def test_placeholder_has_the_generic_surface_and_torchs_extras(device_type):
    mod = placeholder_module(device_type)
    assert is_placeholder(mod) and mod.__name__ == f"torchplug.{device_type}"
    for name in (*SURFACE, *WELL_KNOWN_DEVICE_TYPES[device_type].extras):
        assert hasattr(mod, name), name
    assert set(mod.__all__) == {n for n in (*SURFACE, *WELL_KNOWN_DEVICE_TYPES[device_type].extras) if not n.startswith("_")}
    assert mod.is_available() is False and mod.device_count() == 0
    assert mod.StreamContext is StreamContext and mod.OutOfMemoryError is OutOfMemoryError
    with pytest.raises(RuntimeError, match=f"needs a '{device_type}' device"):
        mod.empty_cache()


def test_meta_has_no_placeholder_module():
    assert WELL_KNOWN_DEVICE_TYPES["meta"].module is False  # torch has no torch.meta module


def test_a_backend_registered_later_replaces_the_placeholder():
    """A plugin registering a well-known type (here xpu, which has no torchplug backend) replaces
    the placeholder at torchplug.xpu and in sys.modules; unloading it brings the placeholder back."""
    from types import SimpleNamespace

    from torchplug import plugins
    from torchplug._runtime.backends import Backend
    from torchplug.hookspecs import hookimpl

    import torchplug.xpu as before  # noqa: F401 - cached in sys.modules as the placeholder

    assert is_placeholder(torch.xpu) and is_placeholder(sys.modules["torchplug.xpu"])

    @hookimpl
    def torchplug_register_backends(ctx):
        backend = ctx.register_backend(Backend(
            device_type="xpu", key_name="XPU", from_host=lambda a, d, copy=True: None, to_host=lambda t: None,
            storage_offset=lambda t: 0, is_accelerator=True, accelerator_priority=-5))
        ctx.expose("xpu", backend.device_module)

    record = plugins.load_plugin(SimpleNamespace(torchplug_register_backends=torchplug_register_backends), "toyxpu")
    try:
        assert record.status == "loaded", record.reason
        assert not is_placeholder(torch.xpu) and torch.xpu.is_available() is True and torch.xpu.device_count() == 1
        import torchplug.xpu as after

        assert after is torch.xpu
        assert torch.backends.cpu.get_cpu_capability()  # unrelated module still fine
    finally:
        plugins.unload_plugin("toyxpu")
    assert is_placeholder(torch.xpu) and torch.xpu.is_available() is False


def test_cuda_amp_and_typed_tensors_without_a_cuda_backend():
    out = run_clean("""
        import json, warnings
        import torchplug as torch
        import torchplug.cuda.amp as amp_mod
        from torchplug.cuda.amp import autocast, GradScaler
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with torch.cuda.amp.autocast():
                enabled = torch.is_autocast_enabled("cpu")
                y = (torch.ones(2, 2) @ torch.ones(2, 2)).dtype
            scaler = torch.cuda.amp.GradScaler()
        print(json.dumps({"same": amp_mod is torch.cuda.amp, "enabled": enabled, "dtype": str(y),
                          "scaler": scaler.is_enabled(), "cls": autocast.__name__,
                          "warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}))
    """, **QUICKSTART)
    assert out["same"] and out["cls"] == "autocast"
    assert out["enabled"] is False and out["dtype"] == "torchplug.float32" and out["scaler"] is False
    joined = "\n".join(out["warnings"])
    assert "FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated" in joined
    assert "UserWarning: CUDA is not available. Disabling autocast." in joined
    assert "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated" in joined
    assert "GradScaler is enabled, but CUDA is not available" in joined


def test_cuda_module_of_the_backend_has_the_legacy_names_too(monkeypatch):
    if "cuda" not in torch._runtime.backends.registered_backends():
        pytest.skip("torchplug-cuda is not installed")
    monkeypatch.setenv("TORCHPLUG_CUDA_EMULATE", "1")  # the emulated device: usable without a GPU
    assert not is_placeholder(torch.cuda)
    t = torch.cuda.FloatTensor([1, 2])
    assert t.device.type == "cuda" and t.dtype is torch.float32 and t.tolist() == [1.0, 2.0]
    assert isinstance(t, torch.cuda.FloatTensor) and not isinstance(t, torch.FloatTensor)
    assert t.type() == "torch.cuda.FloatTensor"
    assert torch.cuda.LongTensor(2, 3).shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with torch.cuda.amp.autocast():
            assert torch.is_autocast_enabled("cuda")
        assert not torch.is_autocast_enabled("cuda")
