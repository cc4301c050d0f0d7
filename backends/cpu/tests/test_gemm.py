"""Large float products on the C pool (``torchplug_cpu._gemm``, ``_ckernels.gemm``) and the thread policy
that sends them there (``_blas_policy``).

Results are compared with NumPy and, where installed, PyTorch (tolerances: never bits of PyTorch's), for
both libraries the pool can call: NumPy's own OpenBLAS always, MKL where the ``mkl`` wheel is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import torchplug
from torchplug_cpu import _blas_policy as P
from torchplug_cpu import _gemm, _native

K = _native.ckernels
needs_c = pytest.mark.skipif(K is None or not hasattr(K, "gemm"), reason="torchplug_cpu._ckernels was not built "
                                                                        "(or TORCHPLUG_PURE_PYTHON is set)")
HAS_MKL = bool(_gemm._mkl_path())
LIBRARIES = ["openblas", pytest.param("mkl", marks=pytest.mark.skipif(not HAS_MKL, reason="the mkl wheel is not "
                                                                                          "installed"))]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-11, atol=1e-11)}
# (m, k, n): squares, an MLP layer and its backward products, odd sizes that leave partial register tiles
SHAPES = [(256, 256, 256), (64, 784, 256), (256, 64, 784), (64, 256, 784), (129, 333, 47), (5, 700, 1000),
          (1000, 300, 9)]


def _data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.fixture
def library():
    """Bind the parametrized library for one test; bind the default one again afterwards."""
    bound = []

    def use(name):
        got = _gemm.bind(name)
        if got != name:
            pytest.skip(f"{name} could not be bound here (got {got!r})")
        bound.append(name)

    yield use
    _gemm.bind()


@pytest.fixture
def threads():
    before = torchplug.get_num_threads()
    yield torchplug.set_num_threads
    torchplug.set_num_threads(before)


def _operands(m, k, n, dtype, ta, tb, seed=0):
    """(a, b) of shapes (m, k) and (k, n); a transposed one is the transpose of a C-contiguous array."""
    a = _data((k, m), dtype, seed).T if ta else _data((m, k), dtype, seed)
    b = _data((n, k), dtype, seed + 1).T if tb else _data((k, n), dtype, seed + 1)
    return a, b


@needs_c
@pytest.mark.parametrize("name", LIBRARIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pooled_products_match_numpy_for_every_layout_and_part_count(name, dtype, library):
    library(name)
    for m, k, n in SHAPES:
        for ta in (False, True):
            for tb in (False, True):
                a, b = _operands(m, k, n, dtype, ta, tb)
                want = a.astype(np.float64) @ b.astype(np.float64)
                for parts in (1, 2, 3):
                    got = _gemm.gemm(a, b, parts)
                    assert got.shape == (m, n) and got.dtype == dtype and got.flags.c_contiguous
                    np.testing.assert_allclose(got, want, **TOL[dtype], err_msg=f"{name} {m, k, n} {ta, tb} {parts}")


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_openblas_blocks_give_the_bits_of_one_thread_and_of_ndarray_dot(dtype, library, threads):
    # each block is the same dot products by the same kernels: the thread count never changes a bit
    library("openblas")
    threads(1)  # ndarray.dot on one OpenBLAS thread
    for m, k, n in SHAPES:
        for ta in (False, True):
            for tb in (False, True):
                a, b = _operands(m, k, n, dtype, ta, tb, seed=3)
                one = _gemm.gemm(a, b, 1)
                np.testing.assert_array_equal(_gemm.gemm(a, b, 2), one)
                np.testing.assert_array_equal(a.dot(b), one)


@needs_c
@pytest.mark.parametrize("name", LIBRARIES)
def test_large_products_and_linear_layers_match_torch_at_one_and_two_threads(name, library, threads):
    torch = pytest.importorskip("torch")
    library(name)
    x, w, g = _data((64, 784), np.float32), _data((256, 784), np.float32, 1), _data((64, 256), np.float32, 2)
    for count in (1, 2):
        threads(count)
        xt = torchplug.from_numpy(x).requires_grad_()
        wt = torchplug.from_numpy(w).requires_grad_()
        y = torchplug.nn.functional.linear(xt, wt)
        y.backward(torchplug.from_numpy(g))
        xr, wr = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
        yr = torch.nn.functional.linear(xr, wr)
        yr.backward(torch.from_numpy(g))
        for got, want in ((y, yr), (xt.grad, xr.grad), (wt.grad, wr.grad)):
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-4)
        a, b = _data((300, 500), np.float64, 4), _data((500, 200), np.float64, 5)
        got = torchplug.from_numpy(a) @ torchplug.from_numpy(b)
        np.testing.assert_allclose(got.numpy(), (torch.from_numpy(a) @ torch.from_numpy(b)).numpy(), rtol=1e-11,
                                   atol=1e-11)


@needs_c
def test_products_that_do_not_fit_the_pool_keep_numpys_path(library):
    library("openblas")
    strided = _data((256, 1024), np.float32)[:, ::2]  # neither C- nor F-contiguous
    b = _data((512, 256), np.float32, 1)
    assert _gemm.gemm(strided, b, 2) is None
    got = torchplug.from_numpy(strided) @ torchplug.from_numpy(b)
    np.testing.assert_allclose(got.numpy(), strided @ b, rtol=1e-4, atol=1e-3)
    swapped = _data((256, 256), np.float32).astype(">f4")  # not the native byte order
    assert _gemm.gemm(swapped, swapped, 2) is None
    mixed = (_data((256, 256), np.float32), _data((256, 256), np.float64))
    assert _gemm.gemm(*mixed, 2) is None


@needs_c
def test_gemm_entry_point_checks_its_buffers(library):
    library("openblas")
    a, b = _data((4, 3), np.float32), _data((3, 5), np.float32)
    c = np.zeros((4, 5), np.float32)
    K.gemm(a, b, c, False, False, False, 4, 5, 3, 2)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    bad = [
        (a, b, np.zeros((4, 4), np.float32), False, False, False, 4, 5, 3, 2),  # result too small
        (a, b, c, False, False, False, 4, 5, 4, 2),  # a holds 12 items, not 16
        (a, b, c, False, False, False, -4, 5, 3, 2),  # negative size
        (a, b, c, False, False, False, 2 ** 31, 5, 3, 2),  # past 32-bit sizes, and past the buffers
        (a, b, c, False, False, False, 2 ** 62, 2 ** 62, 3, 2),  # sizes whose product overflows
        (a, b, c, True, False, False, 4, 5, 3, 2),  # float32 buffers read as float64
        (a, b, memoryview(bytearray(81))[1:], False, False, False, 4, 5, 3, 2),  # a misaligned result
    ]
    for args in bad:
        with pytest.raises((ValueError, OverflowError)):
            K.gemm(*args)
    shared = np.zeros(40, np.float32)
    with pytest.raises(ValueError, match="shares memory"):
        K.gemm(shared[:12], b, shared[8:28], False, False, False, 4, 5, 3, 2)
    empty_k = np.full((4, 5), 7.0, np.float32)
    K.gemm(np.zeros(0, np.float32), np.zeros(0, np.float32), empty_k, False, False, False, 4, 5, 0, 2)
    assert not empty_k.any()  # an empty inner dim gives zeros, as PyTorch's mm does


@needs_c
def test_a_missing_mkl_falls_back_to_numpys_openblas(monkeypatch, library):
    monkeypatch.setattr(_gemm, "_mkl_path", lambda: "")
    assert _gemm.bind() == "openblas" and _gemm.library() == "openblas"
    monkeypatch.setattr(_gemm, "_mkl_path", lambda: "/nonexistent/libmkl_rt.so.2")
    assert _gemm.bind("mkl") == "openblas"
    a = _data((128, 128), np.float32)
    np.testing.assert_allclose((torchplug.from_numpy(a) @ torchplug.from_numpy(a)).numpy(), a @ a, rtol=1e-4, atol=1e-4)


def _run(code: str, **env) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@needs_c
def test_the_environment_can_keep_mkl_out():
    code = "from torchplug_cpu import _gemm; print(_gemm.library())"
    assert _run(code, TORCHPLUG_CPU_GEMM="openblas") == "openblas"
    assert _run(code, TORCHPLUG_CPU_GEMM="") == ("mkl" if HAS_MKL else "openblas")


@needs_c
@pytest.mark.skipif(not HAS_MKL, reason="the mkl wheel is not installed")
def test_mkl_already_running_its_own_threads_is_not_used():
    # another user of MKL in the process chose its OpenMP layer first: MKL's pool would run beside ours
    code = ("import ctypes; from torchplug_cpu import _gemm; lib = ctypes.CDLL(_gemm._mkl_path()); "
            "lib.MKL_Set_Threading_Layer(0); lib.MKL_Get_Max_Threads(); print(_gemm.library())")
    assert _run(code) == "openblas"


# ---- the policy -------------------------------------------------------------------------------------------------
@needs_c
def test_small_products_stay_on_one_openblas_thread_large_ones_go_to_the_pool(monkeypatch, threads):
    if P._setter is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS the policy can steer")
    threads(2)
    calls, parts = [], []
    real_setter, real_pool = P._setter, P._gemm_pool
    monkeypatch.setattr(P, "_setter", lambda n: (calls.append(n), real_setter(n)))
    monkeypatch.setattr(P, "_gemm_pool", lambda a, b, p: (parts.append(p), real_pool(a, b, p))[1])
    monkeypatch.setattr(P, "are_deterministic_algorithms_enabled", lambda: True)  # no measuring: the user's count
    small, large = torchplug.randn(8, 8), torchplug.randn(512, 512)
    small @ small
    small @ small  # already at one thread: no second switch
    assert calls == [1] and parts == []
    assert torchplug.get_num_threads() == 2  # the user's count, whatever the library sits at
    out = large @ large
    assert parts == [2] and calls == [1]  # the pool's two threads; OpenBLAS's own pool stays at one
    np.testing.assert_allclose(out.numpy(), large.numpy() @ large.numpy(), rtol=1e-3, atol=1e-3)
    batched = torchplug.randn(4, 256, 256)
    got = batched @ large[:256, :256]  # a batched product is NumPy's matmul on OpenBLAS's own threads
    assert calls == [1, 2] and parts == [2]
    np.testing.assert_allclose(got.numpy(), batched.numpy() @ large.numpy()[:256, :256], rtol=1e-3, atol=1e-3)
    threads(1)
    large @ large
    assert parts == [2, 1]


@needs_c
def test_pooled_products_take_the_part_count_measured_faster(monkeypatch, threads):
    threads(2)
    used = []
    monkeypatch.setattr(P, "_gemm_pool", lambda a, b, p: (used.append(p), a.dot(b))[1])
    clock = [0.0]
    cost = {2: 5.0, 1: 0.5}  # half the seconds a product "takes" on each part count

    def fake_perf():
        clock[0] += cost[used[-1]] if used else 0.0
        return clock[0]

    monkeypatch.setattr(P, "_perf", fake_perf)
    a, b = _data((96, 256), np.float32), _data((256, 128), np.float32, 1)  # 3.1M multiply-adds
    monkeypatch.setattr(P, "_last_parts", 0)  # the pool's workers asleep
    for _ in range(8 * P.PROBE_EVERY):
        np.testing.assert_allclose(P.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    # two products on the user's count (the first only wakes the workers), one on one thread, then the faster
    assert used[:5] == [2, 2, 1, 1, 1]
    probes = [i for i in range(1, len(used)) if used[i] == 2 and used[i - 1] == 1]
    assert all(used[i + 1] == 2 for i in probes)  # again two products: the second is measured
    # the slower count re-measured after PROBE_EVERY products, then twice and four times as long
    assert probes[0] == 2 + P.PROBE_EVERY
    assert [probes[i + 1] - probes[i] for i in range(len(probes) - 1)] == [2 * P.PROBE_EVERY + 1, 4 * P.PROBE_EVERY + 1]
    cost.update({1: 2.0, 2: 0.5})  # the host got quiet: two threads win
    del used[:]
    for _ in range(8 * P.PROBE_EVERY + 2 * P.PROBE_EVERY):
        P.matmul(a, b)
    switch = used.index(2) + 1  # the measured probe saw two threads win: they stay
    assert used[-3:] == [2, 2, 2]
    # after a change the probes come every PROBE_EVERY products again
    assert used[switch + 1:switch + P.PROBE_EVERY] == [2] * (P.PROBE_EVERY - 1) and used[switch + P.PROBE_EVERY] == 1
    del used[:]
    cost.update({2: 400.0})  # one product stalled (a preemption): the choice stays
    P.matmul(a, b)
    cost.update({2: 0.5})
    for _ in range(3):
        P.matmul(a, b)
    assert used == [2, 2, 2, 2]
    torchplug.use_deterministic_algorithms(True)
    try:
        del used[:]
        P.matmul(a, b)
        assert used == [2]  # deterministic mode: always the user's count
    finally:
        torchplug.use_deterministic_algorithms(False)
