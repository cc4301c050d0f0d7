"""The checks of ``python -m torchplug_cuda.selfcheck``: each takes the :class:`Context` and returns
the figure it measured (a short string), or raises (AssertionError: it failed; :class:`NeedsGPU`;
:class:`Skipped`).  Under emulation a check runs what the NumPy stand-in can show and says so.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["CHECKS", "Context", "NeedsGPU", "Skipped"]

# Time budgets (seconds) for the conformance suite: all of it on a GPU, a spread subset emulated.
CONFORMANCE_BUDGET_GPU = 360.0
CONFORMANCE_BUDGET_EMULATED = 20.0
EMULATED_DIGITS_EPOCHS = 2
CONFORMANCE_STEP_EMULATED = 10  # every 10th case: every op family, a few seconds on NumPy


class NeedsGPU(Exception):
    """The check measures the GPU itself (CuPy kernels, cuBLAS, the memory pool)."""


class Skipped(Exception):
    """The check cannot run here for a reason other than the GPU (an optional dependency)."""


@dataclass
class Context:
    """What the checks share: whether a real GPU runs, torchplug, and torch (with or without CUDA)."""

    gpu: bool
    tp: Any
    torch: Any  # real PyTorch, or None
    torch_cuda: bool

    @classmethod
    def create(cls, gpu: bool) -> Context:
        import torchplug as tp

        try:
            import torch
        except ImportError:
            torch = None
        torch_cuda = bool(torch is not None and gpu and torch.cuda.is_available())
        return cls(gpu, tp, torch, torch_cuda)

    def device_line(self) -> str:
        tp = self.tp
        major, minor = tp.cuda.get_device_capability(0)
        ref = "torch on CUDA" if self.torch_cuda else "torch on the CPU" if self.torch is not None else "NumPy"
        return (f"{tp.cuda.get_device_name(0)} (compute capability {major}.{minor}, {tp.cuda.device_count()} "
                f"device(s)); references: {ref}")

    def need_gpu(self, what: str) -> None:
        if not self.gpu:
            raise NeedsGPU(what)

    def sync(self) -> None:
        self.tp.cuda.synchronize()


def _max_diff(a: Any, b: Any) -> float:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _host(t: Any) -> np.ndarray:
    return t.detach().cpu().float().numpy()


# -- device and conformance ------------------------------------------------------------------------------
def check_device(ctx: Context) -> str:
    tp = ctx.tp
    x = tp.arange(6.0, device="cuda").reshape(2, 3)
    assert x.device == tp.device("cuda:0") and (x * 2).sum().item() == 30.0
    if ctx.gpu:
        import cupy as cp

        assert isinstance(x._data, cp.ndarray), "cuda tensors should hold CuPy arrays"
        return f"{tp.cuda.get_device_name(0)}; CuPy {cp.__version__}, CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}"
    return f"{tp.cuda.get_device_name(0)} (NumPy arrays)"


_OPS_VS_CPU: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("add", lambda m, x: x + 2 * x),
    ("matmul", lambda m, x: x.reshape(4, -1) @ x.reshape(4, -1).t()),
    ("softmax", lambda m, x: m.nn.functional.softmax(x, -1)),
    ("conv2d", lambda m, x: m.nn.functional.conv2d(x, x[:2, :, :3, :3], padding=1)),
    ("layer_norm", lambda m, x: m.nn.functional.layer_norm(x, (8,))),
    ("sort", lambda m, x: m.sort(x, -1)[0]),
    ("sum", lambda m, x: x.sum((0, 2))),
    ("index", lambda m, x: x[:, 1, m.tensor([0, 3], device=x.device)]),
    ("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 2)),
    ("cumsum", lambda m, x: x.cumsum(-1)),
]


def _ops_vs_cpu(ctx: Context) -> str:
    """Without torch: a spread of ops on cuda against the cpu backend's (NumPy) results."""
    tp = ctx.tp
    x0 = np.random.default_rng(0).standard_normal((4, 3, 8, 8)).astype(np.float32)
    worst = 0.0
    for name, fn in _OPS_VS_CPU:
        diff = _max_diff(_host(fn(tp, tp.tensor(x0, device="cuda"))), _host(fn(tp, tp.tensor(x0))))
        assert diff < 1e-4, f"{name}: cuda differs from the cpu backend by {diff:.2e}"
        worst = max(worst, diff)
    return f"{len(_OPS_VS_CPU)} ops match the cpu backend (NumPy) within {worst:.1e} (torch not installed)"


def check_conformance(ctx: Context) -> str:
    if ctx.torch is None:
        return _ops_vs_cpu(ctx)
    from torchplug.testing import SkipCase, cases, run_case
    from torchplug.testing._runner import REF_DEVICE_VAR

    all_cases = cases()
    step, budget = (1, CONFORMANCE_BUDGET_GPU) if ctx.gpu else (CONFORMANCE_STEP_EMULATED, CONFORMANCE_BUDGET_EMULATED)
    chosen = all_cases[::step]
    saved = os.environ.get(REF_DEVICE_VAR)
    if ctx.torch_cuda:
        os.environ[REF_DEVICE_VAR] = "cuda"
    passed = skipped = 0
    failed: list[str] = []
    start = time.perf_counter()
    ran = 0
    try:
        for case in chosen:
            if time.perf_counter() - start > budget:
                break
            ran += 1
            try:
                run_case(case, "cuda")
                passed += 1
            except SkipCase:
                skipped += 1
            except Exception as exc:  # noqa: BLE001 - counted and named
                failed.append(f"{case.id} ({type(exc).__name__})")
    finally:
        if saved is None:
            os.environ.pop(REF_DEVICE_VAR, None)
        else:
            os.environ[REF_DEVICE_VAR] = saved
    ref = "torch on CUDA" if ctx.torch_cuda else "torch on the CPU"
    scope = f"{ran} of {len(all_cases)} cases" + (f" (every {step}th)" if step > 1 else "")
    if ran < len(chosen):
        scope += f", stopped at the {budget:.0f} s budget"
    if failed:
        raise AssertionError(f"{len(failed)} failed, {passed} passed, {skipped} skipped of {scope} vs {ref}; "
                             f"first: {', '.join(failed[:5])}")
    return f"{passed} passed, {skipped} skipped of {scope} vs {ref}"


# -- autograd and training ---------------------------------------------------------------------------------
def check_autograd(ctx: Context) -> str:
    tp = ctx.tp
    rng = np.random.default_rng(1)
    w0, x0 = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
    k0 = rng.standard_normal((2, 1, 3, 3)).astype(np.float32)
    grads = []
    for dev in ("cuda", "cpu"):
        w = tp.tensor(w0, device=dev, requires_grad=True)
        k = tp.tensor(k0, device=dev, requires_grad=True)
        x = tp.tensor(x0, device=dev)
        y = tp.nn.functional.gelu(x @ w).log_softmax(-1).sum()
        z = tp.nn.functional.conv2d(x.reshape(2, 1, 8, 8), k).tanh().pow(2).mean()
        (y + z).backward()
        assert w.grad.device.type == dev
        grads.append((_host(w.grad), _host(k.grad)))
    diff = max(_max_diff(a, b) for a, b in zip(*grads))
    assert diff < 1e-4, f"cuda gradients differ from cpu ones by {diff:.2e}"
    return f"matmul/gelu/log_softmax/conv2d gradients: max |cuda - cpu| {diff:.1e}"


def check_digits(ctx: Context) -> str:
    tp = ctx.tp
    try:
        from torchplug.examples import digits
    except ImportError as exc:
        raise Skipped(f"the digits example needs scikit-learn and tqdm ({exc})") from None
    # On the GPU the example's full run must reach 97%; emulated, two epochs (seconds on NumPy) show
    # that training on the cuda device runs and learns (about 95%).
    epochs, floor = (digits.EPOCHS, 0.97) if ctx.gpu else (EMULATED_DIGITS_EPOCHS, 0.93)
    _model, summary = digits.train(epochs=epochs, device=tp.device("cuda"), progress=False)
    acc = summary["accuracy"]
    assert summary["device"].startswith("cuda") and acc >= floor, f"accuracy {acc:.2%} < {floor:.0%}"
    scope = "" if ctx.gpu else f" (emulated quick run; the {0.97:.0%} bar is the GPU's {digits.EPOCHS}-epoch run)"
    return f"accuracy {acc:.2%} after {epochs} epoch(s), {summary['seconds']:.1f} s{scope}"


# -- memory ----------------------------------------------------------------------------------------------
def _allocator() -> Any:
    from torchplug._runtime.backends import backend_for

    return backend_for("cuda").allocator


def check_allocator(ctx: Context) -> str:
    tp = ctx.tp
    gc.collect()
    before = tp.cuda.memory_allocated()
    x = tp.empty(1 << 20, device="cuda")  # 4 MiB
    if ctx.gpu:
        pool = _allocator().pool
        assert pool is not None, "CuPy's memory pool is not installed"
        assert tp.cuda.memory_allocated() == pool.used_bytes(), (tp.cuda.memory_allocated(), pool.used_bytes())
        assert tp.cuda.memory_reserved() == pool.total_bytes()
    else:
        assert tp.cuda.memory_allocated() == before + (4 << 20)
    assert tp.cuda.max_memory_allocated() >= before + (4 << 20)
    held = tp.cuda.memory_allocated()
    del x
    gc.collect()
    assert tp.cuda.memory_allocated() == held - (4 << 20)
    stats = tp.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == tp.cuda.memory_allocated()
    where = "CuPy's pool" if ctx.gpu else "exact accounting (emulated)"
    return f"4 MiB tensor: allocated {held - before} bytes, freed back; {where}"


class _EmulatedPool:
    """A host stand-in for CuPy's pool with a limit: used + cached bytes may not pass it."""

    def __init__(self, limit: int, cached: int) -> None:
        self.limit, self.used, self.cached, self.freed = limit, 0, cached, 0

    def malloc(self, n: int) -> int:
        if self.used + self.cached + n > self.limit:
            raise MemoryError(f"out of memory allocating {n} bytes")
        self.used += n
        return self.used

    def free_all_blocks(self) -> None:
        self.freed += self.cached
        self.cached = 0

    def used_bytes(self) -> int:
        return self.used

    def total_bytes(self) -> int:
        return self.used + self.cached


def check_oom(ctx: Context) -> str:
    tp = ctx.tp
    from ._allocator import PoolFigures, malloc_with_retry, oom_message

    if ctx.gpu:
        before = tp.cuda.memory_stats()
        tp.cuda.set_per_process_memory_fraction(0.01)
        try:
            try:
                tp.empty(1 << 33, dtype=tp.uint8, device="cuda")
            except tp.cuda.OutOfMemoryError as exc:
                message = str(exc)
            else:
                raise AssertionError("allocating 8 GiB under a 1% memory fraction did not raise OutOfMemoryError")
        finally:
            tp.cuda.set_per_process_memory_fraction(1.0)
        after = tp.cuda.memory_stats()
        assert after["num_ooms"] == before["num_ooms"] + 1 and after["num_alloc_retries"] > before["num_alloc_retries"]
        x = tp.empty(1 << 20, device="cuda")  # the device still allocates afterwards
        del x
        assert message.startswith("CUDA out of memory. Tried to allocate"), message
        return message[:160]
    from ._runtime import EMULATED_TOTAL_MEMORY

    limit = int(0.01 * EMULATED_TOTAL_MEMORY)
    pool, figures = _EmulatedPool(limit, cached=limit // 2), PoolFigures()

    def describe(n: int) -> str:
        return oom_message(n, 0, EMULATED_TOTAL_MEMORY, EMULATED_TOTAL_MEMORY - pool.total_bytes(),
                           pool.used_bytes(), pool.total_bytes(), limit)

    malloc_with_retry(pool, limit - limit // 4, figures, lambda e: isinstance(e, MemoryError), describe)
    assert figures.retries == 1 and pool.freed == limit // 2, "the cache was not freed before the retry"
    try:
        malloc_with_retry(pool, limit, figures, lambda e: isinstance(e, MemoryError), describe)
    except tp.cuda.OutOfMemoryError as exc:
        message = str(exc)
    else:
        raise AssertionError("an allocation past the limit did not raise torchplug.cuda.OutOfMemoryError")
    assert figures.ooms == 1 and message.startswith("CUDA out of memory. Tried to allocate"), message
    return f"emulated pool at 1%: cache freed and retried, then OutOfMemoryError: {message[:110]}"


def check_memory_fraction(ctx: Context) -> str:
    tp = ctx.tp
    tp.cuda.set_per_process_memory_fraction(0.5)
    try:
        assert tp.cuda.get_per_process_memory_fraction() == 0.5
        if ctx.gpu:
            limit = _allocator().pool.get_limit()
            total = tp.cuda.get_device_properties(0).total_memory
            assert abs(limit - total // 2) <= 1 << 20, f"pool limit {limit} is not half of {total}"
        try:
            tp.cuda.set_per_process_memory_fraction(1.5)
        except ValueError as exc:
            assert "Invalid fraction value: 1.5" in str(exc)
        else:
            raise AssertionError("a fraction of 1.5 was accepted")
    finally:
        tp.cuda.set_per_process_memory_fraction(1.0)
    assert tp.cuda.get_per_process_memory_fraction() == 1.0
    return "0.5 set and read back" + (" (CuPy pool limit = half the memory)" if ctx.gpu else "") + "; 1.5 refused"


def check_empty_cache(ctx: Context) -> str:
    tp = ctx.tp
    xs = [tp.empty(1 << 18, device="cuda") for _ in range(8)]
    del xs
    gc.collect()
    reserved = tp.cuda.memory_reserved()
    tp.cuda.empty_cache()
    after = tp.cuda.memory_reserved()
    if ctx.gpu:
        pool = _allocator().pool
        assert after == pool.total_bytes() == pool.used_bytes(), (after, pool.total_bytes(), pool.used_bytes())
    assert after <= reserved and after >= tp.cuda.memory_allocated()
    return f"reserved {reserved >> 10} KiB -> {after >> 10} KiB"


# -- autocast --------------------------------------------------------------------------------------------
# (name, policy entry, whether the input is already in the low dtype, the call)
_AUTOCAST_PROBES: list[tuple[str, str, bool, Callable[[Any, Any], Any]]] = [
    ("mm", "mm", False, lambda m, a: a @ a),
    ("linear", "linear", False, lambda m, a: m.nn.functional.linear(a, a)),
    ("conv2d", "conv2d", False,
     lambda m, a: m.nn.functional.conv2d(a.reshape(1, 1, 4, 4), a.reshape(1, 1, 4, 4)[:, :, :3, :3])),
    ("bmm", "bmm", False, lambda m, a: m.bmm(a[None], a[None])),
    ("exp", "exp", True, lambda m, a: m.exp(a)),
    ("log_softmax", "log_softmax.int", True, lambda m, a: m.log_softmax(a, -1)),
    ("layer_norm", "layer_norm", True, lambda m, a: m.nn.functional.layer_norm(a, (4,))),
    ("mse_loss", "mse_loss", True, lambda m, a: m.nn.functional.mse_loss(a, a)),
    ("sum", "sum", True, lambda m, a: a.sum()),
    ("add", "add.Tensor", True, lambda m, a: a + a),
]


def _autocast_dtypes(m: Any, dtype_name: str) -> dict[str, str]:
    low = getattr(m, dtype_name)
    a = m.ones(4, 4, device="cuda")
    out = {}
    with m.autocast("cuda", dtype=low):
        for name, _entry, low_input, fn in _AUTOCAST_PROBES:
            out[name] = str(fn(m, a.to(low) if low_input else a).dtype).split(".")[-1]
    return out


def _autocast(ctx: Context, dtype_name: str) -> str:
    from .autocast_policy import FP32, FP32_SET_OPT_DTYPE, LOWER_PRECISION_FP

    ours = _autocast_dtypes(ctx.tp, dtype_name)
    if ctx.torch_cuda:
        theirs, ref = _autocast_dtypes(ctx.torch, dtype_name), "torch on CUDA"
    else:
        theirs, ref = {}, "the AutocastCUDA lists"
        for name, entry, low_input, _fn in _AUTOCAST_PROBES:
            if entry in LOWER_PRECISION_FP:
                theirs[name] = dtype_name
            elif entry in FP32 or entry in FP32_SET_OPT_DTYPE:
                theirs[name] = "float32"
            else:  # outside the lists: the inputs' dtype
                theirs[name] = dtype_name if low_input else "float32"
    wrong = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not wrong, f"autocast dtypes (ours, reference) differ from {ref}: {wrong}"
    lowered = sorted(k for k, v in ours.items() if v == dtype_name)
    return f"{len(ours)} ops match {ref}; in {dtype_name}: {', '.join(lowered)}; the rest float32"


def check_autocast_fp16(ctx: Context) -> str:
    return _autocast(ctx, "float16")


def check_autocast_bf16(ctx: Context) -> str:
    return _autocast(ctx, "bfloat16")


# -- streams, interop, copies ----------------------------------------------------------------------------
def check_streams_events(ctx: Context) -> str:
    tp = ctx.tp
    n = 1 << 20
    side = tp.cuda.Stream()
    start, end = tp.cuda.Event(enable_timing=True), tp.cuda.Event(enable_timing=True)
    x = tp.ones(n, device="cuda")
    start.record()
    side.wait_stream(tp.cuda.current_stream())  # x is ready before the side stream reads it
    with tp.cuda.stream(side):
        assert tp.cuda.current_stream() == side
        y = x * 2
        x.record_stream(side)  # x's memory is not reused before the side stream's work is done
    end.record(side)
    tp.cuda.current_stream().wait_stream(side)  # y is complete before the default stream uses it
    z = y + 1
    end.synchronize()
    assert end.query() and z.sum().item() == 3 * n
    ms = start.elapsed_time(end)
    assert ms >= 0
    if ctx.gpu:
        import cupy as cp

        assert isinstance(side.native, cp.cuda.Stream)
    return f"side stream x*2 then default y+1 ordered (sum {3 * n}); elapsed {ms:.3f} ms"


def check_dlpack(ctx: Context) -> str:
    tp = ctx.tp
    if not ctx.gpu:
        arr = np.arange(4, dtype=np.float32)
        t = tp.cuda.from_dlpack(arr)
        arr[0] = 42
        assert t.device == tp.device("cuda:0") and t.tolist()[0] == 42.0
        return "emulated: a NumPy array imported without a copy (CuPy and torch CUDA need a GPU)"
    import cupy as cp

    a = cp.arange(4, dtype=cp.float32)
    t = tp.cuda.from_dlpack(a)
    a[0] = 7
    assert t.tolist()[0] == 7.0 and cp.from_dlpack(t).data.ptr == a.data.ptr
    assert t.__cuda_array_interface__["data"][0] == a.data.ptr
    shared = ["CuPy"]
    bf = tp.ones(3, device="cuda", dtype=tp.bfloat16)
    if tp.cuda.is_bf16_supported():
        assert cp.from_dlpack(bf).data.ptr == bf.__cuda_array_interface__["data"][0]
        shared.append("CuPy bfloat16")
    if ctx.torch_cuda:
        tt = ctx.torch.from_dlpack(t)
        assert tt.data_ptr() == a.data.ptr and tp.cuda.from_dlpack(tt)._data.data.ptr == a.data.ptr
        shared.append("torch")
    return f"zero-copy both ways with {', '.join(shared)}"


def check_pinned_copies(ctx: Context) -> str:
    tp = ctx.tp
    from . import _async_copy

    x = tp.arange(1 << 20, dtype=tp.float32)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned()
    stream = tp.cuda.Stream()
    with tp.cuda.stream(stream):
        y = pinned.to("cuda", non_blocking=True)
        back = tp.empty(x.shape, dtype=x.dtype).pin_memory()
        back.copy_(y * 2, non_blocking=True)
    stream.synchronize()
    assert tp.equal(y.cpu(), x) and tp.equal(back, x * 2)
    assert _async_copy.in_flight() == 0
    return "4 MiB host->device->host through pinned buffers on a side stream" + ("" if ctx.gpu else " (emulated)")


# -- kernels -----------------------------------------------------------------------------------------------
def check_fused_kernels(ctx: Context) -> str:
    from . import fused

    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 130)).astype(np.float32)
    w, b = rng.standard_normal(130).astype(np.float32), rng.standard_normal(130).astype(np.float32)
    t = rng.integers(0, 130, 33)
    if not ctx.gpu:
        # The kernels compile only on a GPU; here their NumPy references meet torchplug's own ops.
        tp = ctx.tp
        xd = tp.tensor(x, device="cuda")
        worst = max(
            _max_diff(fused.softmax_reference(x), _host(tp.softmax(xd, -1))),
            _max_diff(fused.softmax_reference(x, True), _host(tp.log_softmax(xd, -1))),
            _max_diff(fused.gelu_reference(x, "tanh"), _host(tp.nn.functional.gelu(xd, approximate="tanh"))),
            _max_diff(fused.layer_norm_reference(x, w, b)[0],
                      _host(tp.nn.functional.layer_norm(xd, (130,), tp.tensor(w, device="cuda"),
                                                       tp.tensor(b, device="cuda")))),
            abs(float(fused.log_softmax_nll_reference(x, t)[0])
                - tp.nn.functional.cross_entropy(xd, tp.tensor(t, device="cuda")).item()),
        )
        assert worst < 1e-4, f"a fused kernel's reference differs from torchplug's op by {worst:.2e}"
        raise NeedsGPU(f"the references match torchplug's ops within {worst:.1e}; compiling the kernels needs a GPU")
    import cupy as cp

    xd = cp.asarray(x)
    worst = 0.0
    for log in (False, True):
        worst = max(worst, _max_diff(fused.softmax_cupy(xd, log).get(), fused.softmax_reference(x, log)))
    for approx in ("none", "tanh"):
        worst = max(worst, _max_diff(fused.gelu_cupy(xd, approx).get(), fused.gelu_reference(x, approx)))
    y, _mean, _rstd = fused.layer_norm_cupy(xd, cp.asarray(w), cp.asarray(b))
    worst = max(worst, _max_diff(y.get(), fused.layer_norm_reference(x, w, b)[0]))
    t[3] = -100
    loss, _ = fused.log_softmax_nll_cupy(xd, cp.asarray(t))
    worst = max(worst, abs(float(loss) - float(fused.log_softmax_nll_reference(x, t)[0])))
    p, g = rng.standard_normal(100).astype(np.float32), rng.standard_normal(100).astype(np.float32)
    pd, md, vd = cp.asarray(p), cp.zeros(100, np.float32), cp.zeros(100, np.float32)
    m, v = np.zeros(100, np.float32), np.zeros(100, np.float32)
    fused.adam_step_cupy(pd, cp.asarray(g), md, vd, 1, 1e-3, 0.9, 0.999, 1e-8, 0.01)
    fused.adam_step_reference(p, g, m, v, 1, 1e-3, 0.9, 0.999, 1e-8, 0.01)
    worst = max(worst, _max_diff(pd.get(), p))
    buf_d, buf = cp.zeros(100, np.float32), np.zeros(100, np.float32)
    fused.sgd_momentum_cupy(pd, cp.asarray(g), buf_d, 0.1, 0.9, first=True)
    fused.sgd_momentum_reference(p, g, buf, 0.1, 0.9, first=True)
    worst = max(worst, _max_diff(pd.get(), p))
    assert worst < 1e-4, f"a fused kernel differs from its reference by {worst:.2e}"
    return f"softmax, log_softmax, gelu, layer_norm, log_softmax+nll, adam, sgd compiled; max error {worst:.1e}"


def check_bfloat16(ctx: Context) -> str:
    tp = ctx.tp
    from . import _bfloat16

    assert tp.cuda.is_bf16_supported(), "torchplug.cuda.is_bf16_supported() is False"
    rng = np.random.default_rng(2)
    a0, b0 = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 16)).astype(np.float32)
    a, b = tp.tensor(a0, device="cuda").bfloat16(), tp.tensor(b0, device="cuda").bfloat16()
    ra, rb = tp.tensor(a0).bfloat16(), tp.tensor(b0).bfloat16()
    for name, ours, ref, tol in (
        ("add", a + a, ra + ra, 0.0),
        ("mul", a * 3, ra * 3, 0.0),
        ("matmul", a @ b, ra.float() @ rb.float(), 0.1),
        ("sum", a.sum(0), ra.float().sum(0), 0.1),
        ("exp", a.exp(), ra.float().exp(), 0.05),
    ):
        assert ours.dtype == tp.bfloat16 and ours.device.type == "cuda", (name, ours.dtype)
        diff = _max_diff(_host(ours), _host(ref)) / max(1.0, float(np.max(np.abs(_host(ref)))))
        assert diff <= tol, f"bfloat16 {name} differs from the reference by {diff:.3f} (relative)"
    w = tp.randn(32, 16, device="cuda", requires_grad=True)
    with tp.autocast("cuda", dtype=tp.bfloat16):
        y = tp.tensor(a0, device="cuda") @ w
    assert y.dtype == tp.bfloat16
    y.float().sum().backward()
    assert w.grad.dtype == tp.float32
    detour = sorted(_bfloat16.LEARNED)
    note = f"; computed via float32 (CuPy has no bf16 kernel): {', '.join(detour)}" if detour else ""
    return "add, mul, matmul, sum, exp and bf16 autocast with backward" + ("" if ctx.gpu else " (NumPy+ml_dtypes)") + note


def check_random(ctx: Context) -> str:
    tp = ctx.tp
    tp.cuda.manual_seed(0)
    state = tp.cuda.get_rng_state()
    z = tp.randn(1 << 20, device="cuda")
    tp.cuda.set_rng_state(state)
    assert tp.equal(tp.randn(1 << 20, device="cuda"), z), "set_rng_state did not replay the draws"
    mean, std = z.mean().item(), z.std().item()
    assert abs(mean) < 0.01 and abs(std - 1) < 0.01, (mean, std)
    u = tp.rand(1 << 20, device="cuda")
    assert 0 <= u.min().item() and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.01
    if ctx.gpu:
        import cupy as cp

        assert isinstance(z._data, cp.ndarray)
    where = "on the device (CuPy Philox)" if ctx.gpu else "by the device kernels on NumPy (emulated)"
    return f"1M normals drawn {where}: mean {mean:+.4f}, std {std:.4f}; state round-trips"


# -- benchmarks (GPU only) -----------------------------------------------------------------------------
def _time(fn: Callable[[], object], sync: Callable[[], None], reps: int) -> float:
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - start) / reps


def _versus(ctx: Context, measure: Callable[[Any, Callable[[], None]], float], unit: str) -> str:
    ours = measure(ctx.tp, ctx.sync)
    if not ctx.torch_cuda:
        return f"{ours:.2f} {unit} (no torch with CUDA: no ratio)"
    torch = ctx.torch
    theirs = measure(torch, torch.cuda.synchronize)
    return f"{ours:.2f} {unit}; torch {theirs:.2f}; ratio {ours / theirs:.3f}"


def check_bench_add(ctx: Context) -> str:
    ctx.need_gpu("elementwise add of 64M float32 in GB/s")
    n = 64 * 1024 * 1024

    def measure(m: Any, sync: Callable[[], None]) -> float:
        a, b = m.ones(n, device="cuda"), m.ones(n, device="cuda")
        return 3 * 4 * n / _time(lambda: a + b, sync, 20) / 1e9

    return _versus(ctx, measure, "GB/s")


def _bench_matmul(ctx: Context, dtype: str) -> str:
    ctx.need_gpu(f"matmul 8192x8192 {dtype} in TFLOP/s")
    k = 8192

    def measure(m: Any, sync: Callable[[], None]) -> float:
        a = m.randn(k, k, device="cuda").to(getattr(m, dtype))
        return 2 * k ** 3 / _time(lambda: a @ a, sync, 5) / 1e12

    return _versus(ctx, measure, "TFLOP/s")


def check_bench_matmul_fp16(ctx: Context) -> str:
    return _bench_matmul(ctx, "float16")


def check_bench_matmul_bf16(ctx: Context) -> str:
    return _bench_matmul(ctx, "bfloat16")


def check_bench_mlp(ctx: Context) -> str:
    ctx.need_gpu("MLP 1024-4096-1024 training step (batch 256, Adam) in steps/s")

    def measure(m: Any, sync: Callable[[], None]) -> float:
        model = m.nn.Sequential(m.nn.Linear(1024, 4096), m.nn.ReLU(), m.nn.Linear(4096, 1024)).to("cuda")
        opt = m.optim.Adam(model.parameters(), lr=1e-3)
        x, y = m.randn(256, 1024, device="cuda"), m.randn(256, 1024, device="cuda")

        def step() -> None:
            opt.zero_grad()
            m.nn.functional.mse_loss(model(x), y).backward()
            opt.step()

        return 1 / _time(step, sync, 20)

    return _versus(ctx, measure, "steps/s")


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("device", check_device),
    ("conformance", check_conformance),
    ("autograd", check_autograd),
    ("digits", check_digits),
    ("allocator", check_allocator),
    ("oom", check_oom),
    ("memory_fraction", check_memory_fraction),
    ("empty_cache", check_empty_cache),
    ("autocast_fp16", check_autocast_fp16),
    ("autocast_bf16", check_autocast_bf16),
    ("streams_events", check_streams_events),
    ("dlpack", check_dlpack),
    ("pinned_copies", check_pinned_copies),
    ("fused_kernels", check_fused_kernels),
    ("bfloat16", check_bfloat16),
    ("random", check_random),
    ("bench_add_64M", check_bench_add),
    ("bench_matmul_fp16", check_bench_matmul_fp16),
    ("bench_matmul_bf16", check_bench_matmul_bf16),
    ("bench_mlp_step", check_bench_mlp),
]
