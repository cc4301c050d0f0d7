"""torchplug-mps: unavailable without Metal; with TORCHPLUG_MPS_EMULATE=1 an accelerator on NumPy under MPS's limits."""

from __future__ import annotations

import gc

import pytest

pytest.importorskip("torchplug_mps")

import torchplug as torch  # noqa: E402
from torchplug import accelerator  # noqa: E402
from torchplug_mps import AUTOCAST_POLICY_MODULE  # noqa: E402
from torchplug_mps._runtime import EMULATE_VAR, FLOAT64_ERROR  # noqa: E402


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setenv(EMULATE_VAR, "1")
    monkeypatch.delenv(accelerator.ENV_VAR, raising=False)
    accelerator.set_accelerator_priority(None)
    torch.ones(1)  # plugins loaded


@pytest.fixture
def metal_less(monkeypatch):
    monkeypatch.delenv(EMULATE_VAR, raising=False)
    torch.ones(1)


@pytest.fixture
def quiet_gc():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


# ---- without Metal -----------------------------------------------------------------------------------------
def test_registered_but_unavailable(metal_less):
    assert torch.device("mps").type == "mps"
    assert "mps" in accelerator.accelerators()
    assert torch.mps.is_available() is False and torch.mps.device_count() == 0
    assert accelerator.current_accelerator(check_available=True) in (None, *[
        torch.device(t) for t in accelerator.accelerators() if t != "mps"])
    torch.mps.manual_seed(0)  # silently ignored, like torch.cuda.manual_seed without CUDA


@pytest.mark.parametrize("use", [
    lambda: torch.zeros(2, device="mps"),
    lambda: torch.ones(2).to("mps"),
    lambda: torch.tensor([1.0], device="mps"),
    lambda: torch.mps.memory_allocated(),
    lambda: torch.mps.synchronize(),
    lambda: torch.mps.current_stream(),
    lambda: torch.mps.Event(),
    lambda: torch.mps.get_rng_state(),
])
def test_any_use_says_why(metal_less, use):
    with pytest.raises(RuntimeError, match=f"'mps' device is not available: .*{EMULATE_VAR}=1"):
        use()


# ---- emulated: accelerator API ---------------------------------------------------------------------------------
def test_accelerator_api_answers_mps(emulated):
    if accelerator.accelerators()[0] != "mps":
        accelerator.set_accelerator_priority(["mps"])
    try:
        assert accelerator.current_accelerator() == torch.device("mps")
        assert accelerator.current_accelerator(check_available=True) == torch.device("mps")
        assert accelerator.is_available() and accelerator.device_count() == 1
        assert accelerator.current_device_index() == 0
        accelerator.set_device_index(0)
        accelerator.set_device_index("mps:0")
        with accelerator.device_index(0):
            assert accelerator.current_device_index() == 0
        with accelerator.device_index(None):
            pass
        with pytest.raises(ValueError, match="not a device of the current accelerator"):
            accelerator.set_device_index("cpu")
        with pytest.raises(RuntimeError, match="has 1 device"):
            accelerator.set_device_index(1)
        accelerator.synchronize()
        s = accelerator.current_stream()
        assert isinstance(s, torch.Stream) and s.device == torch.device("mps:0") and s.stream_id == 0
        mine = torch.Stream()  # default device: the current accelerator
        assert mine.device == torch.device("mps:0")
        accelerator.set_stream(mine)
        assert accelerator.current_stream() is mine
        accelerator.set_stream(s)
        with pytest.raises(ValueError, match="not a stream of the current accelerator"):
            accelerator.set_stream(torch.Stream("cpu"))
        assert torch.get_device_module() is torch.mps
        assert torch.device(0) == torch.device("mps:0")
        with pytest.warns(FutureWarning):
            assert accelerator.current_device_idx() == 0
    finally:
        accelerator.set_accelerator_priority(None)


def test_streams_and_events(emulated):
    s = torch.mps.Stream()
    start, end = torch.Event("mps", enable_timing=True), torch.mps.Event(enable_timing=True)
    start.record(s)
    x = torch.ones(100, device="mps") * 2
    end.record(s)
    end.synchronize()
    assert start.query() and end.query() and s.query()
    assert start.elapsed_time(end) >= 0.0
    with torch.mps.stream(s):
        assert torch.mps.current_stream() is s
    assert torch.mps.current_stream().stream_id == 0
    assert x.sum().item() == 200.0


# ---- emulated: tensors, copies and MPS's limits -------------------------------------------------------------------
def test_to_mps_and_back(emulated):
    c = torch.arange(6.0).reshape(2, 3)
    m = c.to("mps")
    assert m.device == torch.device("mps:0") and m.is_mps and not m.is_cpu
    assert str(m.device) == "mps:0" and m.get_device() == 0
    assert repr(m) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='mps:0')"
    r = (m * 2 + 1).sum(dim=1)
    assert r.device.type == "mps"
    back = r.cpu()
    assert back.device == torch.device("cpu") and back.tolist() == [9.0, 27.0]
    assert torch.equal(m.t().contiguous().cpu(), c.t().contiguous())
    v = m[0]
    assert v.device.type == "mps" and v.untyped_storage() is m.untyped_storage()
    assert m.to("cpu", torch.float64).dtype == torch.float64  # the cast happens on the cpu side
    i = torch.randint(0, 10, (4,), device="mps")
    assert i.dtype == torch.int64 and i.device.type == "mps"
    with pytest.raises(TypeError, match="numpy"):
        m.numpy()


def test_float64_is_refused_with_torchs_error(emulated):
    for use in (lambda: torch.zeros(2, dtype=torch.float64).to("mps"),
                lambda: torch.zeros(2, dtype=torch.float64, device="mps"),
                lambda: torch.tensor([1.0], dtype=torch.float64, device="mps"),
                lambda: torch.ones(2, device="mps").double(),
                lambda: torch.ones(2, device="mps").sum(dtype=torch.float64)):
        with pytest.raises(TypeError) as info:
            use()
        assert str(info.value) == FLOAT64_ERROR
    assert FLOAT64_ERROR == ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support "
                             "float64. Please use float32 instead.")
    ok = torch.zeros(2, dtype=torch.float64).to("mps", torch.float32)
    assert ok.dtype == torch.float32 and ok.device.type == "mps"


def test_cross_device_rules(emulated):
    m = torch.ones(3, device="mps")
    with pytest.raises(RuntimeError, match="(same device|expected device)"):
        m + torch.ones(3)
    with pytest.raises(RuntimeError, match="(same device|expected device)"):
        torch.ones(2, 3) @ torch.ones(3, 2, device="mps")
    assert (m + torch.tensor(2.0)).tolist() == [3.0, 3.0, 3.0]  # 0-dim cpu tensors act as scalars
    m.copy_(torch.full((3,), 5.0))  # explicit copies cross devices
    assert m.cpu().tolist() == [5.0, 5.0, 5.0]
    dst = torch.empty(3)
    dst.copy_(m)
    assert dst.tolist() == [5.0, 5.0, 5.0]


def test_rng_is_per_device(emulated):
    torch.mps.manual_seed(7)
    a = torch.rand(4, device="mps")
    state = torch.mps.get_rng_state()
    b = torch.rand(4, device="mps")
    torch.mps.set_rng_state(state)
    assert torch.equal(torch.rand(4, device="mps").cpu(), b.cpu())
    torch.mps.manual_seed(7)
    torch.rand(4)  # the cpu generator is a different stream
    assert torch.equal(torch.rand(4, device="mps").cpu(), a.cpu())
    torch.manual_seed(7)  # torch.manual_seed seeds every device's generator, as in PyTorch
    assert torch.equal(torch.rand(4, device="mps").cpu(), a.cpu())


def test_kernels_are_the_cpu_kernels_behind_a_guard(emulated):
    from torchplug._plugins.introspect import kernel_table  # noqa: F401
    from torchplug.library import get_kernel

    mps_add = get_kernel(torch.ops.aten.add.Tensor, "MPS")
    cpu_add = get_kernel(torch.ops.aten.add.Tensor, "CPU")
    assert mps_add.__wrapped__ is cpu_add


# ---- emulated: memory ------------------------------------------------------------------------------------------
def test_memory_statistics_exact(emulated, quiet_gc):
    base = torch.mps.memory_allocated()
    cpu_base = torch.cpu.memory_stats()
    torch.mps.reset_peak_memory_stats()
    a = torch.empty(256, device="mps")  # 1 KiB
    b = a * 2
    v = b[10:]
    assert torch.mps.memory_allocated() - base == 2048
    assert accelerator.memory.memory_allocated() - base == 2048 if accelerator.accelerators()[0] == "mps" else True
    del b
    assert torch.mps.memory_allocated() - base == 2048  # the view holds the buffer
    del v
    assert torch.mps.memory_allocated() - base == 1024
    c = torch.ones(300, 1000, device="mps")  # large pool
    assert torch.mps.memory_stats()["allocated_bytes.large_pool.current"] >= 1_200_000
    del c
    stats = torch.mps.memory_stats()
    assert stats["allocated_bytes.all.peak"] - base == 1024 + 1_200_000
    assert torch.mps.max_memory_reserved() == stats["reserved_bytes.all.peak"]
    del a
    assert torch.mps.memory_allocated() == base
    cpu_now = torch.cpu.memory_stats()
    # the emulated buffers never showed on the cpu allocator
    assert cpu_now["allocated_bytes.all.current"] == cpu_base["allocated_bytes.all.current"]
    assert cpu_now["allocated_bytes.all.peak"] == cpu_base["allocated_bytes.all.peak"]


def test_memory_events_and_snapshot_on_mps(emulated, quiet_gc):
    from torchplug._runtime.allocator import subscribe

    seen = []
    with subscribe(seen.append, "mps"):
        x = torch.ones(8, device="mps")
        del x
    assert [e.action for e in seen] == ["alloc", "free"] and {e.nbytes for e in seen} == {32}
    assert seen[0].device == torch.device("mps:0")
    snap = torch.mps.memory_snapshot()
    assert snap["device_type"] == "mps" and isinstance(snap["segments"], list)


def test_device_module_surface_matches_cpu(emulated):
    from torchplug_mps.device_module import MPS_EXTRAS

    # the generic surface plus torch.mps's own memory functions (and the recorded memory fraction)
    assert sorted(n for n in dir(torch.mps) if not n.startswith("__")) == \
        sorted({*(n for n in dir(torch.cpu) if not n.startswith("__")), *MPS_EXTRAS, "_per_process_memory_fraction"})
    assert torch.mps.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert torch.mps.get_device_name() == "MPS (emulated on NumPy)"


def test_autocast_policy_hook_is_named():
    assert AUTOCAST_POLICY_MODULE == "torchplug_mps.autocast_policy"
