"""On an NVIDIA GPU with CuPy (and torch with CUDA for the comparisons).  Every test skips without one.

Run there: ``pytest backends/cuda/tests/test_gpu.py -v`` and the conformance suite with
``--torchplug-device=cuda``; record the output in the issue note.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import torchplug as tp
from torchplug_cuda import fused


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA: comparisons against torch's CUDA results need a CUDA build of torch")
    return torch


def test_device_basics(gpu):
    import cupy as cp

    assert tp.cuda.is_available() and not tp.cuda.is_emulated()
    assert tp.cuda.device_count() == cp.cuda.runtime.getDeviceCount()
    major, minor = tp.cuda.get_device_capability()
    assert f"{major}{minor}" == cp.cuda.Device(0).compute_capability
    assert tp.cuda.get_device_properties(0).total_memory == cp.cuda.runtime.memGetInfo()[1]
    x = tp.arange(6.0, device="cuda").reshape(2, 3)
    assert isinstance(x._data, cp.ndarray) and x.device == tp.device("cuda:0")
    assert (x * 2).sum().item() == 30.0 and x.cpu().tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("op", ["add", "matmul", "softmax", "conv2d", "layer_norm", "cross_entropy", "index", "sort",
                                "rfft2", "fftn_roundtrip"])
def test_ops_match_torch_cuda(gpu, op):
    torch = _torch_cuda()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 8, 8)).astype(np.float32)
    b = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    fns = {
        "add": lambda m, x, w: x + 2 * x,
        "matmul": lambda m, x, w: x.reshape(4, -1) @ x.reshape(4, -1).t(),
        "softmax": lambda m, x, w: m.nn.functional.softmax(x, -1),
        "conv2d": lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
        "layer_norm": lambda m, x, w: m.nn.functional.layer_norm(x, (8,)),
        "cross_entropy": lambda m, x, w: m.nn.functional.cross_entropy(x.reshape(-1, 8), m.arange(96, device=x.device) % 8),
        "index": lambda m, x, w: x[:, 1, m.tensor([0, 3], device=x.device)],
        "sort": lambda m, x, w: m.sort(x, -1)[0],
        # cuFFT through cupyx.scipy.fft (the shared cpu kernel's scipy.fft)
        "rfft2": lambda m, x, w: m.view_as_real(m.fft.rfft2(x, norm="ortho")),
        "fftn_roundtrip": lambda m, x, w: m.fft.irfftn(m.fft.rfftn(x, dim=(0, 2, 3)), s=(4, 8, 8), dim=(0, 2, 3)),
    }
    ours = fns[op](tp, tp.tensor(a, device="cuda"), tp.tensor(b, device="cuda"))
    ref = fns[op](torch, torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda"))
    assert ours.device.type == "cuda"
    np.testing.assert_allclose(ours.cpu().numpy(), ref.cpu().numpy(), rtol=1e-4, atol=1e-4)


def test_autograd_matches_torch_cuda(gpu):
    torch = _torch_cuda()
    rng = np.random.default_rng(1)
    w0, x0 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
    grads = []
    for m in (tp, torch):
        w = m.tensor(w0, device="cuda", requires_grad=True)
        x = m.tensor(x0, device="cuda")
        m.nn.functional.gelu(x @ w).log_softmax(-1).sum().backward()
        grads.append(w.grad.cpu().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_autocast_dtypes_match_torch(gpu):
    torch = _torch_cuda()
    out = []
    for m in (tp, torch):
        a = m.ones(4, 4, device="cuda")
        with m.autocast("cuda"):
            out.append([str((a @ a).dtype), str(a.half().exp().dtype), str(a.half().sum().dtype),
                        str(m.nn.functional.linear(a, a).dtype), str(m.softmax(a.half(), -1).dtype)])
    assert [s.split(".")[-1] for s in out[0]] == [s.split(".")[-1] for s in out[1]]


def test_memory_stats_agree_with_cupy_pool(gpu):
    from torchplug._runtime.backends import backend_for

    alloc = backend_for("cuda").allocator
    x = tp.empty(1 << 20, device="cuda")  # 4 MiB
    pool = alloc.pool
    assert pool is not None
    assert tp.cuda.memory_allocated() == pool.used_bytes()
    assert tp.cuda.memory_reserved() == pool.total_bytes()
    assert tp.cuda.max_memory_allocated() >= pool.used_bytes()
    del x
    gc.collect()
    assert tp.cuda.memory_allocated() == pool.used_bytes()
    tp.cuda.empty_cache()
    assert tp.cuda.memory_reserved() == pool.total_bytes() == pool.used_bytes()
    snap = tp.cuda.memory_snapshot()
    assert snap["device_type"] == "cuda"


def test_oom_is_catchable_with_figures(gpu):
    from torchplug._runtime.backends import backend_for

    before = tp.cuda.memory_stats()["num_ooms"]
    tp.cuda.set_per_process_memory_fraction(0.01)
    try:
        with pytest.raises(tp.cuda.OutOfMemoryError, match=r"CUDA out of memory. Tried to allocate .* MiB. GPU 0 has "
                                                             r"a total capacity of .* is free"):
            tp.empty(1 << 33, dtype=tp.uint8, device="cuda")
    finally:
        tp.cuda.set_per_process_memory_fraction(1.0)
    stats = tp.cuda.memory_stats()
    assert stats["num_ooms"] == before + 1 and stats["num_alloc_retries"] >= 1
    assert backend_for("cuda").allocator.pool is not None


def test_streams_events_on_cupy(gpu):
    import cupy as cp

    s = tp.cuda.Stream()
    assert isinstance(s.native, cp.cuda.Stream)
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    x = tp.ones(1 << 22, device="cuda")
    start.record()
    with tp.cuda.stream(s):
        y = x * 2
        assert tp.cuda.current_stream() == s
    end.record(s)
    tp.cuda.current_stream().wait_stream(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0 and y.sum().item() == 2 * (1 << 22)
    tp.cuda.synchronize()


def test_dlpack_zero_copy_with_cupy_and_torch(gpu):
    import cupy as cp

    a = cp.arange(4, dtype=cp.float32)
    t = tp.cuda.from_dlpack(a)
    a[0] = 7
    assert t.tolist()[0] == 7.0
    b = cp.from_dlpack(t)
    assert b.data.ptr == a.data.ptr
    assert t.__cuda_array_interface__["data"][0] == a.data.ptr
    torch = _torch_cuda()
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == a.data.ptr
    back = tp.cuda.from_dlpack(tt)
    assert back._data.data.ptr == a.data.ptr


def test_rng_per_device(gpu):
    tp.cuda.manual_seed_all(0)
    a = tp.randn(5, device="cuda")
    tp.cuda.manual_seed(0)
    assert tp.randn(5, device="cuda").tolist() == a.tolist()


def test_digits_trains_on_cuda(gpu):
    from torchplug.examples import digits

    _model, summary = digits.train(epochs=2, device=tp.device("cuda"), progress=False)
    assert summary["device"] == "cuda" and summary["accuracy"] > 0.9


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_kernels_match_references(gpu, dtype):
    import cupy as cp

    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 130)).astype(dtype)
    tol = dict(rtol=1e-3, atol=1e-3) if dtype == "float16" else dict(rtol=1e-5, atol=1e-6)
    xd = cp.asarray(x)
    for log in (False, True):
        np.testing.assert_allclose(fused.softmax_cupy(xd, log).get(), fused.softmax_reference(x, log), **tol)
    for approx in ("none", "tanh"):
        np.testing.assert_allclose(fused.gelu_cupy(xd, approx).get(), fused.gelu_reference(x, approx), **tol)
    w, b = rng.standard_normal(130).astype(dtype), rng.standard_normal(130).astype(dtype)
    y, mean, rstd = fused.layer_norm_cupy(xd, cp.asarray(w), cp.asarray(b))
    ry, rmean, rrstd = fused.layer_norm_reference(x, w, b)
    np.testing.assert_allclose(y.get(), ry, **tol)
    np.testing.assert_allclose(mean.get(), rmean, rtol=1e-4, atol=1e-5)
    t = rng.integers(0, 130, 33)
    t[3] = -100
    loss, _ = fused.log_softmax_nll_cupy(xd, cp.asarray(t))
    rloss, _ = fused.log_softmax_nll_reference(x, t)
    assert abs(float(loss) - float(rloss)) < 1e-3
    if dtype == "float32":
        p, g = rng.standard_normal(100).astype(dtype), rng.standard_normal(100).astype(dtype)
        pd, md, vd = cp.asarray(p), cp.zeros(100, dtype), cp.zeros(100, dtype)
        m, v = np.zeros(100, dtype), np.zeros(100, dtype)
        fused.adam_step_cupy(pd, cp.asarray(g), md, vd, 1, 1e-3, 0.9, 0.999, 1e-8, 0.01)
        fused.adam_step_reference(p, g, m, v, 1, 1e-3, 0.9, 0.999, 1e-8, 0.01)
        np.testing.assert_allclose(pd.get(), p, rtol=1e-5, atol=1e-6)
        buf_d, buf = cp.zeros(100, dtype), np.zeros(100, dtype)
        fused.sgd_momentum_cupy(pd, cp.asarray(g), buf_d, 0.1, 0.9, first=True)
        fused.sgd_momentum_reference(p, g, buf, 0.1, 0.9, first=True)
        np.testing.assert_allclose(pd.get(), p, rtol=1e-5, atol=1e-6)


def test_non_blocking_copies_from_pinned_memory(gpu):
    from torchplug_cuda import _async_copy

    x = tp.arange(1 << 20, dtype=tp.float32)
    pinned = x.pin_memory()
    stream = tp.cuda.Stream()
    with tp.cuda.stream(stream):
        y = pinned.to("cuda", non_blocking=True)  # asynchronous: the copy holds the pinned buffer
        assert _async_copy.in_flight() >= 1 or stream.query()
        back = tp.empty(x.shape, dtype=x.dtype).pin_memory()
        back.copy_(y * 2, non_blocking=True)
    stream.synchronize()
    assert tp.equal(y.cpu(), x) and tp.equal(back, x * 2)
    assert _async_copy.in_flight() == 0
    pageable = x.to("cuda", non_blocking=True)  # pageable memory: a synchronous copy, same values
    assert tp.equal(pageable.cpu(), x)


def test_bfloat16_on_cupy(gpu):
    import cupy as cp
    import ml_dtypes

    if not tp.cuda.is_bf16_supported():
        pytest.skip("bfloat16 needs compute capability 8.0 and CuPy 14 with ml_dtypes")
    a = tp.linspace(-2, 2, 12, device="cuda", dtype=tp.bfloat16).reshape(3, 4)
    assert isinstance(a._data, cp.ndarray) and a._data.dtype == np.dtype(ml_dtypes.bfloat16)
    ref = tp.linspace(-2, 2, 12, dtype=tp.bfloat16).reshape(3, 4)
    assert tp.equal((a * 2 + 1).cpu(), ref * 2 + 1)
    np.testing.assert_allclose((a @ a.t()).float().cpu().numpy(), (ref.float() @ ref.float().t()).numpy(), atol=0.1)
    spec = tp.fft.rfft(a.float()).abs()  # FFT of bfloat16 is refused by torch too; float32 works
    assert spec.dtype == tp.float32
    with tp.autocast("cuda", dtype=tp.bfloat16):
        assert (tp.ones(4, 4, device="cuda") @ tp.ones(4, 4, device="cuda")).dtype == tp.bfloat16


def test_random_numbers_are_drawn_on_the_device(gpu):
    import cupy as cp

    tp.cuda.manual_seed(5)
    state = tp.cuda.get_rng_state()
    z = tp.randn(1 << 20, device="cuda")
    assert isinstance(z._data, cp.ndarray)
    assert abs(z.mean().item()) < 0.01 and abs(z.std().item() - 1) < 0.01
    tp.cuda.set_rng_state(state)
    assert tp.equal(tp.randn(1 << 20, device="cuda"), z)
    r = tp.randint(0, 7, (4096,), device="cuda")
    assert r.min().item() == 0 and r.max().item() == 6
