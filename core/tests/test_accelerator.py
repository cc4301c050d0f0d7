"""torchplug.accelerator, the backend contract, device modules, generic Stream/Event, get_device_module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import torchplug as torch
from torchplug import accelerator
from torchplug._runtime.backends import Backend, registered_backends
from torchplug._runtime.registration import register_backend, unregister_backend
from torchplug._runtime.device_module import SURFACE


def run_clean(code: str, **env: str) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TORCHPLUG_")}
    environ.update(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- no accelerator (cpu + meta only) -------------------------------------------------------------------
def test_accelerator_api_without_accelerator():
    out = run_clean("""
        import json, torchplug as torch
        from torchplug import accelerator as acc
        res = {"current": acc.current_accelerator(), "checked": acc.current_accelerator(check_available=True),
               "avail": acc.is_available(), "count": acc.device_count(), "list": acc.accelerators(),
               "module": torch.get_device_module().__name__}
        errors = {}
        for name, call in [("current_device_index", acc.current_device_index), ("synchronize", acc.synchronize),
                           ("current_stream", acc.current_stream), ("memory_allocated", acc.memory.memory_allocated),
                           ("Stream", torch.Stream), ("Event", torch.Event), ("device_int", lambda: torch.device(0))]:
            try:
                call()
                errors[name] = None
            except RuntimeError as exc:
                errors[name] = str(exc)
        res["errors"] = errors
        s = torch.Stream("cpu")
        res["cpu_stream"] = [s.device.type, s.query()]
        print(json.dumps(res))
    """, TORCHPLUG_BLOCK_PLUGINS="mps,cuda")
    assert out["current"] is None and out["checked"] is None
    assert out["avail"] is False and out["count"] == 0 and out["list"] == []
    assert out["module"] == "torchplug.cpu"
    for name, msg in out["errors"].items():
        assert msg is not None, name
        assert "accelerator" in msg, (name, msg)
    assert "cpu and meta are not accelerators" in out["errors"]["current_device_index"]
    assert out["cpu_stream"] == ["cpu", True]


def test_current_accelerator_asks_only_availability():
    """The choice asks is_available() (as torch.cuda.is_available() does), most preferred first,
    and nothing else of a runtime: no device is selected, counted or initialised."""
    calls = []

    class Spy:
        def __init__(self, name, available):
            self.name, self.available = name, available

        def __getattr__(self, attr):
            def method(*args):
                calls.append((self.name, attr))
                return {"is_available": self.available, "device_count": 1, "current_device": 0}.get(attr)
            if attr in ("is_available", "device_count", "current_device", "set_device", "synchronize", "init"):
                return method
            raise AttributeError(attr)

    top = _toy("spytop", priority=1001, runtime=Spy("spytop", False))
    nxt = _toy("spynext", priority=1000, runtime=Spy("spynext", True))
    low = _toy("spylow", priority=999, runtime=Spy("spylow", True))
    try:
        assert accelerator.current_accelerator() == torch.device("spynext")
        assert calls == [("spytop", "is_available"), ("spynext", "is_available")]
        calls.clear()
        assert accelerator.current_accelerator(check_available=True) == torch.device("spynext")
        assert {attr for _, attr in calls} == {"is_available"}
    finally:
        for b in (top, nxt, low):
            unregister_backend(b.device_type)


# ---- priority -----------------------------------------------------------------------------------------------
def _toy(name: str, priority: int = 0, accel: bool = True, **components) -> Backend:
    return register_backend(Backend(
        device_type=name, key_name=name.capitalize(), from_host=lambda a, d, copy=True: None,
        to_host=lambda t: None, storage_offset=lambda t: 0, is_accelerator=accel, accelerator_priority=priority,
        **components,
    ))


@pytest.fixture
def two_accelerators(monkeypatch):
    monkeypatch.delenv(accelerator.ENV_VAR, raising=False)
    low, high = _toy("acclow", 1), _toy("acchigh", 50)  # around mps's 10 when it is installed
    yield
    accelerator.set_accelerator_priority(None)
    unregister_backend("acclow")
    unregister_backend("acchigh")


def test_priority_backend_then_env_then_user(two_accelerators, monkeypatch):
    order = accelerator.accelerators()
    assert order.index("acchigh") < order.index("acclow")
    assert order[0] == "acchigh"
    assert accelerator.current_accelerator() == torch.device(order[0])
    monkeypatch.setenv(accelerator.ENV_VAR, "nosuchdev, acclow")
    assert accelerator.accelerators()[0] == "acclow"
    assert accelerator.current_accelerator() == torch.device("acclow")
    accelerator.set_accelerator_priority(["acchigh"])  # the user's call beats the environment
    assert accelerator.current_accelerator() == torch.device("acchigh")
    assert accelerator.get_accelerator_priority() == ["acchigh"]
    accelerator.set_accelerator_priority(None)
    assert accelerator.current_accelerator() == torch.device("acclow")
    monkeypatch.setenv(accelerator.ENV_VAR, "cpu")  # not an accelerator: ignored
    assert accelerator.current_accelerator() == torch.device(accelerator.accelerators()[0])
    assert "cpu" not in accelerator.accelerators() and "meta" not in accelerator.accelerators()


# ---- the contract -------------------------------------------------------------------------------------------
def test_contract_is_checked_at_registration_and_names_the_missing_member():
    class BadAllocator:
        device_type = "broken"

        def memory_stats(self, index=None):
            return {}

    with pytest.raises(TypeError) as info:
        _toy("broken", allocator=BadAllocator())
    msg = str(info.value)
    assert "Backend 'broken'" in msg and "allocator" in msg and "Allocator protocol" in msg
    assert "'free'" in msg and "'snapshot'" in msg and "'memory_stats'" not in msg
    assert "broken" not in registered_backends()  # nothing half-registered

    class NoSync:
        def is_available(self):
            return True

        def device_count(self):
            return 1

        def current_device(self):
            return 0

        def set_device(self, i):
            pass

    with pytest.raises(TypeError, match=r"Backend 'broken2'.*runtime.*DeviceRuntime protocol: missing 'synchronize'"):
        _toy("broken2", runtime=NoSync())


def test_defaults_fill_missing_components():
    b = _toy("plain", accel=False)
    try:
        assert b.allocator.device_type == "plain" and b.runtime.is_available() and b.streams and b.rng
        mod = b.device_module
        assert mod.__name__ == "torchplug.plain"
        assert mod.device_count() == 1 and mod.memory_allocated() == 0
    finally:
        unregister_backend("plain")


# ---- device modules -----------------------------------------------------------------------------------------
def _public(mod) -> set[str]:
    return {n for n in SURFACE if hasattr(mod, n)}


def test_device_module_surface_identical_across_backends():
    mods = {t: b.device_module for t, b in registered_backends().items()}
    assert {"cpu", "meta"} <= set(mods)
    assert torch.cpu is mods["cpu"] and torch.meta is mods["meta"]
    for t, mod in mods.items():
        assert _public(mod) == set(SURFACE), t
        assert sorted(mod.__all__) == sorted(n for n in SURFACE if not n.startswith("_")), t
    names = {t: sorted(n for n in dir(m) if not n.startswith("__")) for t, m in mods.items()}
    first = next(iter(names.values()))
    assert all(v == first for v in names.values()), names


def test_cpu_module_behaves_like_torch_cpu():
    assert torch.cpu.is_available() and torch.cpu.device_count() == 1
    assert torch.cpu.current_device() == "cpu"
    torch.cpu.synchronize()
    torch.cpu.set_device(0)
    with torch.cpu.device(0):
        pass
    torch.cpu.manual_seed(123)
    a = torch.rand(3)
    state = torch.cpu.get_rng_state()
    b = torch.rand(3)
    torch.cpu.set_rng_state(state)
    assert torch.equal(torch.rand(3), b) and not torch.equal(a, b)
    s = torch.cpu.current_stream()
    assert isinstance(s, torch.Stream) and s.stream_id == 0 and s.query()
    mine = torch.cpu.Stream()
    with torch.cpu.stream(mine) as entered:
        assert entered is mine and torch.cpu.current_stream() is mine
    assert torch.cpu.current_stream() is s
    assert torch.cpu.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    with pytest.raises(RuntimeError, match="has 1 device"):
        torch.cpu.set_device(1)


def test_meta_module_says_what_it_cannot_do():
    with pytest.raises(NotImplementedError, match="meta device has no data"):
        torch.meta.get_rng_state()
    torch.meta.manual_seed(1)  # accepted
    assert torch.meta.device_count() == 1 and torch.meta.memory_allocated() >= 0


def test_device_module_rejects_other_device_types():
    with pytest.raises(ValueError, match="Expected a cpu device"):
        torch.cpu.memory_allocated("meta")


# ---- generic streams and events -------------------------------------------------------------------------
def test_generic_stream_and_event_on_a_synchronous_device():
    s = torch.Stream("cpu", priority=-1)
    assert s.device_type == "cpu" and s.priority == -1 and s.query()
    s.synchronize()
    e1 = torch.Event("cpu", enable_timing=True)
    assert e1.query()
    e1.record(s)
    e2 = s.record_event(torch.Event("cpu", enable_timing=True))
    e2.synchronize()
    assert e1.elapsed_time(e2) >= 0.0
    s.wait_event(e1)
    s.wait_stream(torch.cpu.current_stream())
    e1.wait(s)
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        torch.Event("cpu").elapsed_time(e2)
    with pytest.raises(RuntimeError, match="must be recorded"):
        torch.Event("cpu", enable_timing=True).elapsed_time(e2)
    with s:
        assert torch.cpu.current_stream() is s
    assert torch.cpu.current_stream() is not s
    assert s == s and s != torch.Stream("cpu") and isinstance(hash(s), int)
    assert "device_type=cpu" in repr(s)


def test_event_record_rejects_other_device_stream():
    e = torch.Event("meta")
    with pytest.raises(RuntimeError, match="does not match recording stream"):
        e.record(torch.Stream("cpu"))


def test_get_device_module():
    assert torch.get_device_module("cpu") is torch.cpu
    assert torch.get_device_module(torch.device("meta")) is torch.meta
    assert torch.get_device_module("cpu:0") is torch.cpu
    with pytest.raises(RuntimeError, match="Unknown device type 'nosuch'"):
        torch.get_device_module("nosuch")
    acc = accelerator.current_accelerator()
    expected = torch.cpu if acc is None else getattr(torch, acc.type)  # what the backend exposed (torchplug.cuda)
    assert torch.get_device_module() is expected
    assert torch.get_device_module("xpu") is torch.xpu  # well known: a placeholder, as torch.xpu on any build
    assert torch.get_device_module("xpu").is_available() is False


def test_accelerator_all_names_exist():
    for name in accelerator.__all__:
        assert hasattr(accelerator, name), name
    import torchplug.accelerator.memory as mem

    assert mem is accelerator.memory and callable(mem.memory_stats)


def test_doctor_shows_accelerators_and_allocators():
    from torchplug.__main__ import doctor_report

    text = doctor_report()
    assert "Accelerators (most preferred first):" in text and "Current accelerator:" in text
    assert "Allocators (device 0):" in text and "cpu      allocated" in text


def test_host_numpy_is_untouched():
    assert np.asarray(torch.ones(2)).tolist() == [1.0, 1.0]
