"""TORCHPLUG_CUDA_EMULATE: the cuda backend's wiring on NumPy (two devices).

These tests run the shared kernels through the loader, device selection, allocator, RNG,
streams and autocast on any machine.  They are not GPU verification: CuPy is not involved.
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import torchplug as torch
from torchplug import accelerator
from torchplug_cuda import _kernels, _state


def test_accelerator_api_answers_cuda(emulated):
    assert accelerator.current_accelerator(check_available=True) == torch.device("cuda")
    assert accelerator.is_available() and accelerator.device_count() == 2
    assert torch.cuda.is_available() and torch.cuda.device_count() == 2 and torch.cuda.is_emulated()
    assert torch.cuda.get_device_name(1) == "CUDA (emulated on NumPy)"
    assert torch.cuda.get_device_capability() == (8, 0)
    props = torch.cuda.get_device_properties("cuda:1")
    assert props.total_memory == 16 << 30 and "emulated" in repr(props)
    assert torch.cuda.is_bf16_supported()
    assert torch.cuda.get_arch_list() == ["sm_80"]


def test_device_selection(emulated):
    assert torch.cuda.current_device() == 0
    torch.cuda.set_device(1)
    assert torch.cuda.current_device() == 1
    assert torch.zeros(2, device="cuda").device == torch.device("cuda:1")  # 'cuda' means the current device
    torch.cuda.set_device(0)
    with torch.cuda.device(1):
        assert torch.ones(1, device="cuda").device.index == 1
        assert accelerator.current_device_index() == 1
    assert torch.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal .*2 CUDA devices"):
        torch.cuda.set_device(2)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(1, device="cuda:5")


def test_current_device_is_per_thread(emulated):
    torch.cuda.set_device(1)
    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.cuda.current_device()))
    t.start()
    t.join()
    assert seen == [0] and torch.cuda.current_device() == 1


def test_ops_run_on_their_device_and_match_cpu(emulated):
    a = torch.arange(12.0).reshape(3, 4)
    for dev in ("cuda:0", "cuda:1"):
        x = a.to(dev)
        y = (x.sin() * 2 + x.t().t()).softmax(-1) @ x.t()
        assert y.device == torch.device(dev)
        ref = (a.sin() * 2 + a).softmax(-1) @ a.t()
        np.testing.assert_allclose(y.cpu().numpy(), ref.numpy(), rtol=1e-6)
        assert y.sum(0).device == torch.device(dev) and y[1:, ::2].device == torch.device(dev)


def test_device_mixing_rules(emulated):
    x = torch.ones(3, device="cuda:0")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, cuda:0 and cuda:1!"):
        x + torch.ones(3, device="cuda:1")
    with pytest.raises(RuntimeError, match="device"):
        x + torch.ones(3)
    assert (x + torch.tensor(2.0)).tolist() == [3.0, 3.0, 3.0]  # 0-dim cpu tensors are scalars
    assert x[torch.tensor([0, 2])].device == x.device  # cpu indices are allowed
    y = torch.empty(3, device="cuda:1")
    y.copy_(x)  # copies cross devices
    assert y.device.index == 1 and y.tolist() == [1.0, 1.0, 1.0]
    assert x.to("cuda:1").device.index == 1 and x.cpu().device == torch.device("cpu")


def test_numpy_conversion_needs_cpu_first(emulated):
    x = torch.ones(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda device type tensor to numpy"):
        x.numpy()
    assert x.cpu().numpy().tolist() == [1.0, 1.0]
    assert x.item() if x.numel() == 1 else x.tolist() == [1.0, 1.0]


def test_kernels_are_the_shared_cpu_code(emulated):
    import torchplug_cpu.kernels.pointwise as cpu_pointwise

    torch.ones(1, device="cuda") + 1
    impls = _kernels.impls_for("emulate")
    cpu_fns = {n: f for t in __import__("torchplug_cpu.kernels", fromlist=["all_tables"]).all_tables()
               for n, f, k, _w in t.kernels if k == "CPU"}
    assert set(impls) == set(cpu_fns)
    shared = [n for n, f in cpu_fns.items() if f.__module__ == cpu_pointwise.__name__]
    assert shared
    for name in shared:
        assert impls[name] is not cpu_fns[name] and impls[name].__code__ == cpu_fns[name].__code__


def test_memory_stats_are_exact_per_device(emulated):
    gc.collect()
    torch.cuda.reset_peak_memory_stats(1)
    before0, before1 = torch.cuda.memory_allocated(0), torch.cuda.memory_allocated(1)
    cpu_before = torch.cpu.memory_allocated()
    x = torch.empty(1000, device="cuda:1")
    assert torch.cuda.memory_allocated(1) == before1 + 4000
    assert torch.cuda.memory_allocated(0) == before0
    y = x * 2  # a fresh 4000-byte result on device 1
    assert torch.cuda.memory_allocated(1) == before1 + 8000
    assert torch.cuda.max_memory_allocated(1) >= before1 + 8000
    del x, y
    gc.collect()
    assert torch.cuda.memory_allocated(1) == before1
    assert torch.cpu.memory_allocated() == cpu_before  # nothing leaked onto the cpu allocator
    stats = torch.cuda.memory_stats(1)
    assert stats["allocated_bytes.all.current"] == before1
    free, total = torch.cuda.mem_get_info(1)
    assert total == 16 << 30 and free == total - before1
    snap = torch.cuda.memory_snapshot()
    assert snap["device_type"] == "cuda" and {"segments", "device_traces"} <= set(snap)
    torch.cuda.empty_cache()


def test_memory_fraction_validation(emulated):
    torch.cuda.set_per_process_memory_fraction(0.5, 1)
    assert torch.cuda.get_per_process_memory_fraction(1) == 0.5
    assert torch.cuda.get_per_process_memory_fraction(0) == 1.0
    with pytest.raises(ValueError, match="Invalid fraction value: 1.5. Allowed range: 0~1"):
        torch.cuda.set_per_process_memory_fraction(1.5)
    torch.cuda.set_per_process_memory_fraction(1.0, 1)


def test_per_device_generators(emulated):
    torch.cuda.manual_seed_all(7)
    a0 = torch.randn(5, device="cuda:0")
    a1 = torch.randn(5, device="cuda:1")
    assert a0.tolist() == a1.cpu().tolist()  # same seed on both devices, same stream
    state = torch.cuda.get_rng_state(1)
    b1 = torch.randn(5, device="cuda:1")
    torch.cuda.set_rng_state(state, 1)
    assert torch.randn(5, device="cuda:1").tolist() == b1.tolist()
    torch.cuda.manual_seed(3)  # the current device (0) only
    c0 = torch.rand(4, device="cuda")
    torch.cuda.manual_seed(3)
    assert torch.rand(4, device="cuda").tolist() == c0.tolist()
    g = torch.Generator().manual_seed(1)
    assert torch.rand(3, device="cuda", generator=g).device.type == "cuda"  # an explicit generator is used


def test_streams_and_events(emulated):
    s = torch.cuda.Stream()
    assert torch.cuda.current_stream().stream_id == 0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
        y = torch.ones(100, device="cuda") * 3
    end.record()
    torch.cuda.current_stream().wait_stream(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0 and s.query() and y.sum().item() == 300
    with pytest.raises(RuntimeError):
        torch.cuda.Event().elapsed_time(torch.cuda.Event())  # events without timing
    torch.cuda.synchronize()
    torch.cuda.synchronize(1)


def test_autograd_matches_cpu(emulated):
    w_cpu = torch.randn(4, 3, requires_grad=True)
    x_cpu = torch.randn(5, 4)
    w = w_cpu.detach().to("cuda:1").requires_grad_(True)
    x = x_cpu.to("cuda:1")
    for ww, xx in ((w_cpu, x_cpu), (w, x)):
        torch.nn.functional.log_softmax(torch.tanh(xx @ ww), -1).sum().backward()
    assert w.grad.device == torch.device("cuda:1")
    np.testing.assert_allclose(w.grad.cpu().numpy(), w_cpu.grad.numpy(), rtol=1e-6)


def test_autocast_policy_applies_on_cuda(emulated):
    a = torch.randn(4, 4, device="cuda")
    with torch.autocast("cuda"):
        assert (a @ a).dtype == torch.float16
        assert a.half().exp().dtype == torch.float32
        assert a.half().sum().dtype == torch.float32
        assert torch.nn.functional.linear(a, a).dtype == torch.float16
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            torch.nn.functional.binary_cross_entropy(a.sigmoid(), a.sigmoid().detach())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        assert (a @ a).dtype == torch.bfloat16


def test_grad_scaler_on_cuda(emulated):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1).to("cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # A scale whose float16 gradients stay finite: this checks the unscale/step path on cuda.
    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    before = model.weight.detach().cpu().clone()
    with torch.autocast("cuda"):
        loss = model(torch.ones(2, 3, device="cuda")).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert not torch.equal(model.weight.detach().cpu(), before)
    assert scaler.get_scale() == 1024.0  # no inf/nan found: the scale is kept (growth_interval not reached)


def test_dlpack_in_emulation_shares_host_memory(emulated):
    arr = np.arange(4, dtype=np.float32)
    t = torch.cuda.from_dlpack(arr)
    assert t.device == torch.device("cuda:0")
    arr[0] = 42
    assert t.tolist()[0] == 42.0


def test_state_binds_one_device_object_per_index(emulated):
    assert _state.device(1) is _state.device(1) and _state.device(1) == torch.device("cuda:1")


def test_tensor_cuda_method_copies_to_the_device(emulated):
    x = torch.arange(4.0)
    y = x.cuda()
    assert y.is_cuda and y.device == torch.device("cuda:0") and y.cuda() is y
    assert x.cuda(1).device == torch.device("cuda:1")
    assert x.cuda("cuda:1").device.index == 1
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="Invalid device, must be cuda device"):
        x.cuda("cpu")


def test_pin_memory_and_pinned_batches(emulated):
    from torchplug.utils.data import DataLoader, TensorDataset

    x = torch.arange(6.0).reshape(2, 3)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned() and pinned[0].is_pinned()
    assert pinned.pin_memory() is pinned and torch.equal(pinned, x)
    assert pinned.to("cuda", non_blocking=True).device == torch.device("cuda:0")
    batch = next(iter(DataLoader(TensorDataset(torch.arange(4.0), torch.arange(4)), batch_size=2, pin_memory=True)))
    assert [t.is_pinned() for t in batch] == [True, True]
    with pytest.raises(RuntimeError, match="only host \\(cpu\\) tensors can be pinned"):
        torch.ones(2, device="cuda").pin_memory()


def test_record_stream_holds_memory_until_the_stream_work_completes(emulated, monkeypatch):
    from torchplug._runtime import stream_uses as _stream_uses
    from torchplug._runtime.streams import Event

    side = torch.cuda.Stream()
    x = torch.ones(1024, device="cuda")
    root = x._storage.data
    x.record_stream(side)
    x.record_stream(side)  # recorded once
    pending = [False]
    monkeypatch.setattr(Event, "query", lambda self: pending[0])
    before = _stream_uses.held_count()
    del x
    gc.collect()
    assert _stream_uses.held_count() == before + 1
    assert any(r is root for _, r in _stream_uses._held)  # the buffer is not back in the pool yet
    pending[0] = True
    assert _stream_uses.release_completed() == 0
    with pytest.raises(RuntimeError, match="record a stream of the tensor's own device"):
        torch.ones(2).record_stream(side)
    with pytest.raises(TypeError, match="must be a torchplug Stream"):
        torch.ones(2, device="cuda").record_stream("side")


def test_fft_runs_on_the_device_with_gradients(emulated):
    # the shared cpu FFT kernels (scipy.fft; cupyx.scipy.fft on a GPU) and their layout, on the second device
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((3, 4, 6)).astype(np.float32)
    results = []
    for dev in ("cpu", "cuda:1"):
        x = torch.tensor(x0, device=dev).transpose(0, 1).requires_grad_(True)
        spectrum = torch.fft.rfftn(x, dim=(0, 2), norm="ortho")
        back = torch.fft.irfftn(spectrum * spectrum.abs(), s=(4, 6), dim=(0, 2))
        back.pow(2).sum().backward()
        assert spectrum.device == back.device == x.grad.device == torch.device(dev)
        results.append((spectrum.stride(), spectrum.detach().cpu().numpy(), back.detach().cpu().numpy(),
                        x.grad.cpu().numpy()))
    assert results[0][0] == results[1][0]
    for ours, ref in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
