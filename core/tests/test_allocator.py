"""The allocator protocol: exact statistics, events, replacement allocators, history/snapshots, memory_estimate."""

from __future__ import annotations

import gc
import json

import pytest

import torchplug as torch
from torchplug._runtime.allocator import (
    METRICS, POOLS, SMALL_SIZE, STAT_NAMES, DeviceAllocator, MemoryEvent, OutOfMemoryError, TrackedStorage,
)
from torchplug._plugins import MANAGER
from torchplug.hookspecs import hookimpl


@pytest.fixture
def quiet_gc():
    """No cyclic garbage of earlier tests may be freed while counters are compared."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def cur(key: str = "allocated_bytes.all.current", dev: str = "cpu") -> int:
    return torch.get_device_module(dev).memory_stats()[key]


# ---- key layout ----------------------------------------------------------------------------------------
def test_memory_stats_key_layout_is_pytorchs():
    stats = torch.cpu.memory_stats()
    expected = {f"{s}.{p}.{m}" for s in STAT_NAMES for p in POOLS for m in METRICS}
    expected |= {"num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free",
                 "max_split_size"}
    expected |= {f"{n}.{m}" for n in ("oversize_allocations", "oversize_segments") for m in METRICS}
    assert set(stats) == expected
    assert list(stats) == sorted(stats)  # PyTorch returns the keys sorted
    assert all(isinstance(v, int) for v in stats.values())


# ---- exact statistics ------------------------------------------------------------------------------------
def test_raw_allocator_stats_exact():
    a = DeviceAllocator("x")
    small, large = 1000, SMALL_SIZE + 8
    h1 = a.allocate(small)
    h2 = a.allocate(large)
    h3 = a.allocate(small)
    s = a.memory_stats()
    assert s["allocated_bytes.all.current"] == 2 * small + large
    assert s["allocated_bytes.large_pool.current"] == large
    assert s["allocated_bytes.small_pool.current"] == 2 * small
    assert s["allocation.all.current"] == 3 and s["allocation.large_pool.current"] == 1
    a.free(h2)
    a.free(h1)
    s = a.memory_stats()
    assert s["allocated_bytes.all.current"] == small
    assert s["allocated_bytes.all.peak"] == 2 * small + large
    assert s["allocated_bytes.large_pool.peak"] == large and s["allocated_bytes.small_pool.peak"] == 2 * small
    assert s["allocated_bytes.all.allocated"] == 2 * small + large
    assert s["allocated_bytes.all.freed"] == small + large
    assert s["allocation.all.peak"] == 3 and s["allocation.all.freed"] == 2
    assert s["allocated_bytes.small_pool.freed"] == small and s["allocated_bytes.large_pool.freed"] == large
    # a non-caching allocator: reserved == allocated, segments == allocations, requested == allocated
    for metric in METRICS:
        assert s[f"reserved_bytes.all.{metric}"] == s[f"allocated_bytes.all.{metric}"]
        assert s[f"segment.all.{metric}"] == s[f"allocation.all.{metric}"]
        assert s[f"requested_bytes.all.{metric}"] == s[f"allocated_bytes.all.{metric}"]
        assert s[f"inactive_split.all.{metric}"] == 0
    assert s["num_device_alloc"] == 3 and s["num_device_free"] == 2
    a.reset_peak_memory_stats()
    assert a.memory_stats()["allocated_bytes.all.peak"] == small
    a.reset_accumulated_memory_stats()
    s = a.memory_stats()
    assert s["allocated_bytes.all.allocated"] == 0 and s["allocated_bytes.all.freed"] == 0
    a.free(h3)
    s = a.memory_stats()
    assert s["allocated_bytes.all.current"] == 0 and s["allocated_bytes.all.freed"] == small
    del h3
    assert a.memory_stats()["allocated_bytes.all.current"] == 0  # freeing twice is not counted twice


def test_cpu_stats_exact_through_allocs_frees_and_views(quiet_gc):
    base = cur()
    base_n = cur("allocation.all.current")
    torch.cpu.reset_peak_memory_stats()
    torch.cpu.reset_accumulated_memory_stats()
    a = torch.empty(1000, dtype=torch.float32)  # 4000 bytes
    assert cur() - base == 4000
    b = torch.empty(300, 1000, dtype=torch.float64)  # 2.4 MB: large pool
    assert cur() - base == 4000 + 2_400_000
    assert cur("allocated_bytes.large_pool.current") >= 2_400_000
    v = b[10:20].t()  # views allocate nothing
    w = a.view(10, 100)
    assert cur() - base == 4000 + 2_400_000 and cur("allocation.all.current") - base_n == 2
    c = a + 1  # a fresh result
    assert cur() - base == 8000 + 2_400_000
    del b  # the view v keeps the storage alive
    assert cur() - base == 8000 + 2_400_000
    del v
    assert cur() - base == 8000
    del c, w
    assert cur() - base == 4000
    stats = torch.cpu.memory_stats()
    assert stats["allocated_bytes.all.peak"] - base == 8000 + 2_400_000
    assert stats["allocated_bytes.all.allocated"] == 8000 + 2_400_000
    assert stats["allocated_bytes.all.freed"] == 4000 + 2_400_000
    assert stats["allocation.all.allocated"] == 3 and stats["allocation.all.freed"] == 2
    assert stats["allocated_bytes.large_pool.freed"] == 2_400_000
    assert torch.cpu.memory_reserved() == torch.cpu.memory_allocated()
    del a
    assert cur() == base


def test_from_numpy_shares_memory_and_is_not_accounted(quiet_gc):
    np = pytest.importorskip("numpy")
    base = cur()
    t = torch.from_numpy(np.zeros(1000))
    assert cur() == base
    del t
    assert cur() == base


def test_meta_counts_bytes_it_would_allocate(quiet_gc):
    base = cur(dev="meta")
    x = torch.empty(1024, 1024, device="meta")
    assert cur(dev="meta") - base == 4 * 1024 * 1024
    y = x.t()
    z = x @ y
    assert cur(dev="meta") - base == 8 * 1024 * 1024
    del x, y, z
    assert cur(dev="meta") == base


# ---- events ----------------------------------------------------------------------------------------------
class _Recorder:
    """A plugin that subscribes to cpu memory events through its PluginContext."""

    def __init__(self) -> None:
        self.events: list[MemoryEvent] = []

    @hookimpl
    def torchplug_configure(self, ctx):
        ctx.subscribe_memory_events(self.events.append, "cpu")


def test_plugin_subscriber_sees_every_alloc_and_free(quiet_gc):
    torch.ones(1)  # backends loaded
    rec = _Recorder()
    record = MANAGER.load_plugin(rec, "memwatch")
    try:
        assert record.status == "loaded", record.reason
        before = torch.cpu.memory_stats()
        a = torch.ones(10)  # 40 bytes
        b = a * 2
        v = b[1:]
        del a, b, v
        after = torch.cpu.memory_stats()
        allocs = [e for e in rec.events if e.action == "alloc"]
        frees = [e for e in rec.events if e.action == "free"]
        assert len(allocs) == after["allocation.all.allocated"] - before["allocation.all.allocated"]
        assert len(frees) == after["allocation.all.freed"] - before["allocation.all.freed"]
        assert sum(e.nbytes for e in allocs) == after["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"]
        assert sorted(e.addr for e in allocs) == sorted(e.addr for e in frees)  # each alloc freed once
        assert all(e.device == torch.device("cpu") for e in rec.events)
        ops = {e.op for e in allocs}
        assert "aten::mul" in ops
        assert all(e.stream is None or e.stream.device.type == "cpu" for e in rec.events)
    finally:
        MANAGER.unload_plugin("memwatch")
    n = len(rec.events)
    torch.ones(3)
    assert len(rec.events) == n  # unsubscribed with the plugin
    assert not torch.cpu.memory_stats is None and not _cpu_alloc()._callbacks


def _cpu_alloc():
    from torchplug._runtime.contract import allocator_of

    return allocator_of("cpu")


# ---- replacement allocator -------------------------------------------------------------------------------
class _Counting:
    def __init__(self, limit: int | None = None) -> None:
        self.calls: list[tuple] = []
        self.live: dict[int, int] = {}
        self.limit = limit
        self.next = 1

    def allocate(self, nbytes, device_index, stream):
        if self.limit is not None and sum(self.live.values()) + nbytes > self.limit:
            raise OutOfMemoryError(f"budget of {self.limit} bytes exceeded by {nbytes}")
        handle = self.next
        self.next += 1
        self.live[handle] = nbytes
        self.calls.append(("alloc", nbytes, device_index))
        return handle

    def free(self, handle, nbytes, device_index, stream):
        assert self.live.pop(handle) == nbytes
        self.calls.append(("free", nbytes, device_index))


def test_replacement_allocator_receives_the_calls(quiet_gc):
    torch.ones(1)
    repl = _Counting()
    previous = torch.cpu.change_current_allocator(repl)
    try:
        assert torch.cpu.get_current_allocator() is repl
        a = torch.ones(4)
        b = a + a
        del a, b
        assert ("alloc", 16, 0) in repl.calls and ("free", 16, 0) in repl.calls
        assert repl.live == {}
    finally:
        torch.cpu.change_current_allocator(previous)
    assert not _cpu_alloc().stats_for(0).slow  # back on the fast path


def test_replacement_allocator_can_refuse(quiet_gc):
    torch.ones(1)
    torch.cpu.change_current_allocator(_Counting(limit=1000))
    try:
        ooms = torch.cpu.memory_stats()["num_ooms"]
        base = cur()
        keep = torch.ones(100)  # 400 bytes
        with pytest.raises(OutOfMemoryError, match="budget of 1000 bytes"):
            torch.ones(200)  # 800 more
        assert isinstance(OutOfMemoryError("x"), RuntimeError) and torch.cpu.OutOfMemoryError is OutOfMemoryError
        assert torch.cpu.memory_stats()["num_ooms"] == ooms + 1
        assert cur() - base == 400
        del keep
    finally:
        torch.cpu.change_current_allocator(None)


def test_replacement_allocator_is_checked():
    class Half:
        def allocate(self, nbytes, device_index, stream):
            return 0

    with pytest.raises(TypeError, match="replacement allocator for 'cpu'.*ReplacementAllocator.*'free'"):
        torch.cpu.change_current_allocator(Half())


# ---- history and snapshot ----------------------------------------------------------------------------------
SEGMENT_KEYS = {"device", "address", "total_size", "allocated_size", "active_size", "requested_size", "stream",
                "segment_type", "segment_pool_id", "is_expandable", "blocks"}
BLOCK_KEYS = {"address", "size", "requested_size", "state", "frames"}
TRACE_KEYS = {"action", "addr", "size", "stream", "device", "device_free", "op", "frames", "time_us"}


def validate_snapshot(snap: dict) -> None:
    """The documented snapshot format (docs/accelerators.md)."""
    assert set(snap) == {"version", "device_type", "segments", "device_traces"}
    assert snap["version"] == 1
    for seg in snap["segments"]:
        assert set(seg) == SEGMENT_KEYS
        assert seg["segment_type"] in ("small", "large")
        assert seg["total_size"] == sum(b["size"] for b in seg["blocks"])
        for block in seg["blocks"]:
            assert set(block) == BLOCK_KEYS and block["state"] == "active_allocated"
    assert isinstance(snap["device_traces"], list)
    for per_device in snap["device_traces"]:
        for entry in per_device:
            assert set(entry) == TRACE_KEYS
            assert entry["action"] in ("alloc", "free_requested", "free_completed")
    json.dumps(snap)  # plain data


@pytest.mark.parametrize("dev", ["cpu", "meta"])
def test_history_and_snapshot_format(dev, quiet_gc):
    mod = torch.get_device_module(dev)
    torch.ones(1, device=dev)
    mod._record_memory_history("all", clear_history=True)
    try:
        keep = torch.ones(256, device=dev)
        tmp = keep * 3
        addr_tmp = None
        del tmp
        snap = mod.memory_snapshot()
    finally:
        mod._record_memory_history(None)
    validate_snapshot(snap)
    assert snap["device_type"] == dev
    trace = snap["device_traces"][0]
    actions = [e["action"] for e in trace]
    assert actions.count("alloc") == 2 and actions.count("free_completed") == 1
    mul = next(e for e in trace if e["action"] == "alloc" and e["op"] == "aten::mul")
    assert mul["size"] == 1024 and mul["frames"], "python frames recorded with context='all'"
    addr_tmp = mul["addr"]
    assert any(e["action"] == "free_completed" and e["addr"] == addr_tmp for e in trace)
    live = [s for s in snap["segments"] if s["blocks"][0]["address"] == next(
        e["addr"] for e in trace if e["action"] == "alloc" and e["op"] != "aten::mul")]
    assert len(live) == 1 and live[0]["total_size"] == 1024
    assert sum(s["total_size"] for s in snap["segments"]) == mod.memory_allocated()
    del keep


def test_tracked_storage_is_a_storage():
    t = torch.ones(3)
    assert isinstance(t.untyped_storage(), TrackedStorage)
    assert t.untyped_storage().nbytes == 12


# ---- memory_estimate ------------------------------------------------------------------------------------------
def _mlp_params(requires_grad: bool):
    torch.manual_seed(0)
    params = [torch.randn(512, 256), torch.randn(512), torch.randn(128, 512), torch.randn(128), torch.randn(10, 128),
              torch.randn(10)]
    return [p.requires_grad_(requires_grad) for p in params]


def _forward(x, w1, b1, w2, b2, w3, b3):
    h = (x @ w1.t() + b1).relu()
    h = (h @ w2.t() + b2).relu()
    return ((h @ w3.t() + b3) ** 2).mean()


def _train_step(x, *params):
    loss = _forward(x, *params)
    loss.backward()
    return loss


def _cpu_peak(fn, *args) -> int:
    gc.collect()
    torch.cpu.reset_peak_memory_stats()
    fn(*args)
    return torch.cpu.max_memory_allocated()


def test_memory_estimate_of_mlp_forward_matches_cpu_peak():
    x = torch.randn(64, 256)
    params = _mlp_params(False)
    est = torch.utils.memory_estimate(_forward, x, *params)
    gc.collect()
    others = torch.cpu.memory_allocated() - sum(t.nbytes for t in [x, *params])
    measured = _cpu_peak(_forward, x, *params) - others
    assert abs(est - measured) <= 0.1 * measured, (est, measured)
    assert torch.meta.memory_allocated() < est  # the meta copies were released


def test_memory_estimate_of_mlp_training_step_matches_cpu_peak():
    pytest.importorskip("torchplug_autograd")
    x = torch.randn(64, 256)
    params = _mlp_params(True)
    est = torch.utils.memory_estimate(_train_step, x, *params)
    gc.collect()
    others = torch.cpu.memory_allocated() - sum(t.nbytes for t in [x, *params])
    measured = _cpu_peak(_train_step, x, *params) - others
    assert all(p.grad is not None for p in params)
    assert abs(est - measured) <= 0.1 * measured, (est, measured)
