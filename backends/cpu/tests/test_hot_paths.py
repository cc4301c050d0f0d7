"""Fast paths the training loop takes (BLAS axpy for ``add_`` with ``alpha``, max pooling's NaN scan)
give exactly what the generic paths and PyTorch give."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug


def _rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("alpha", [-0.01, 3, 0.5])
def test_add_alpha_inplace_matches_reference(dtype, alpha):
    a, b = _rand(5, 7, dtype=dtype), _rand(5, 7, dtype=dtype, seed=1)
    t = torchplug.tensor(a)
    before = t._version
    ptr = t.data_ptr()
    out = t.add_(torchplug.tensor(b), alpha=alpha)
    assert out is t and t.data_ptr() == ptr and t._version == before + 1
    np.testing.assert_allclose(t.numpy(), a + np.asarray(alpha, dtype) * b, rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_add_alpha_inplace_strided_and_broadcast_operands_take_the_generic_path():
    a, b = _rand(4, 6), _rand(6, 4, seed=1)
    t = torchplug.tensor(a)
    t.add_(torchplug.tensor(b).t(), alpha=2.0)  # non-contiguous other
    np.testing.assert_allclose(t.numpy(), a + 2.0 * b.T, rtol=1e-6)
    row = _rand(6, seed=2)
    t.add_(torchplug.tensor(row), alpha=-1.5)  # broadcast other
    np.testing.assert_allclose(t.numpy(), a + 2.0 * b.T - 1.5 * row, rtol=1e-5)
    view = torchplug.tensor(a).t()  # non-contiguous self
    view.add_(torchplug.tensor(b), alpha=0.25)
    np.testing.assert_allclose(view.numpy(), a.T + 0.25 * b, rtol=1e-6)


def test_add_alpha_inplace_errors_like_torch():
    t = torchplug.ones(3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        t.add_(torchplug.ones(2, 3), alpha=2.0)
    i = torchplug.ones(3, dtype=torchplug.int64)
    with pytest.raises(RuntimeError):
        i.add_(torchplug.ones(3, dtype=torchplug.int64), alpha=0.5)  # float alpha for an integral tensor


@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool_picks_the_last_nan_of_a_window_like_torch(ceil_mode):
    torch = pytest.importorskip("torch")
    x = _rand(2, 3, 7, 9)
    x[0, 0, :, 0] = np.nan
    x[1, 2, 3, 3:5] = np.nan
    ours, our_idx = torchplug.nn.functional.max_pool2d(torchplug.tensor(x), 2, ceil_mode=ceil_mode,
                                                       return_indices=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(x), 2, ceil_mode=ceil_mode, return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    np.testing.assert_array_equal(our_idx.numpy(), ref_idx.numpy())


def test_set_num_threads_reaches_the_blas_pools_and_checks_its_argument():
    from threadpoolctl import threadpool_info

    before = torchplug.get_num_threads()
    try:
        torchplug.set_num_threads(1)
        assert torchplug.get_num_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
        a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
        np.testing.assert_allclose((torchplug.tensor(a) @ torchplug.tensor(a)).numpy(), a @ a, rtol=1e-4, atol=1e-4)
    finally:
        torchplug.set_num_threads(before)
    assert torchplug.get_num_threads() == before
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        torchplug.set_num_threads(0)
    with pytest.raises(RuntimeError, match="set_num_threads expects an int, but got float"):
        torchplug.set_num_threads(1.5)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("kernel", [2, 3, (1, 3), (3, 1), (2, 4)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_tiled_max_pool_matches_torch_including_ties(ties, kernel, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (3, 4, 9, 8)).astype(np.float32) if ties else rng.standard_normal((3, 4, 9, 8)).astype(np.float32)
    ours, our_idx = torchplug.nn.functional.max_pool2d(torchplug.tensor(x).to(getattr(torchplug, dtype)), kernel,
                                                       return_indices=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(x).to(getattr(torch, dtype)), kernel, return_indices=True)
    assert ours.dtype == getattr(torchplug, dtype) and tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.float().numpy(), ref.float().numpy())
    np.testing.assert_array_equal(our_idx.numpy(), ref_idx.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [-100, 3])
def test_cross_entropy_fast_backward_matches_torch(reduction, ignore_index):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    z, y = rng.standard_normal((16, 5)).astype(np.float32), rng.integers(0, 5, 16)
    ours = torchplug.tensor(z, requires_grad=True)
    ref = torch.tensor(z, requires_grad=True)
    a = torchplug.nn.functional.cross_entropy(ours, torchplug.tensor(y), reduction=reduction, ignore_index=ignore_index)
    b = torch.nn.functional.cross_entropy(ref, torch.tensor(y), reduction=reduction, ignore_index=ignore_index)
    (a * 3).backward()
    (b * 3).backward()
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-5)
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_axpy_runs_on_numpys_blas_or_only_a_single_threaded_scipy_blas(monkeypatch):
    from threadpoolctl import threadpool_limits

    from torchplug_cpu import _blas_policy
    from torchplug_cpu.kernels import pointwise

    before = torchplug.get_num_threads()
    monkeypatch.setattr(pointwise, "_CK", None)  # as without the C kernels' axpy (test_axpy_in_c_... below)
    try:
        torchplug.set_num_threads(2)
        t = torchplug.ones(8)
        t.add_(torchplug.ones(8), alpha=0.5)
        if _blas_policy.axpy_kernels():  # NumPy's OpenBLAS reachable: used whatever the thread count
            assert len(pointwise._AXPY) == 2 and t[0].item() == 1.5
        # without it, SciPy's BLAS serves only while single-threaded
        monkeypatch.setattr(_blas_policy, "axpy_kernels", lambda: {})
        pointwise.reset_axpy()
        t.add_(torchplug.ones(8), alpha=0.5)  # decides: a multi-threaded SciPy BLAS is not used
        assert pointwise._AXPY == {} and t[0].item() == 2.0
        torchplug.set_num_threads(1)
        assert pointwise._AXPY is None  # re-decided at the next call
        t.add_(torchplug.ones(8), alpha=0.5)
        assert len(pointwise._AXPY) == 2 and t[0].item() == 2.5
    finally:
        threadpool_limits(limits=before, user_api="blas")
        pointwise.reset_axpy()


@pytest.mark.parametrize("n", [7, 256 * 784 + 5])  # one range; above the pool's threshold (two ranges)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpy_in_c_matches_torch_at_one_and_two_threads(n, dtype):
    torch = pytest.importorskip("torch")
    from torchplug_cpu.kernels import pointwise

    if pointwise._CK is None:
        pytest.skip("torchplug_cpu._ckernels was not built (or TORCHPLUG_PURE_PYTHON is set)")
    before = torchplug.get_num_threads()
    x, y = _rand(n, dtype=dtype), _rand(n, dtype=dtype, seed=1)
    try:
        for count in (1, 2):
            torchplug.set_num_threads(count)
            for alpha in (-0.1, 3):
                ours = torchplug.from_numpy(y.copy())
                assert ours.add_(torchplug.from_numpy(x), alpha=alpha) is ours
                want = torch.from_numpy(y.copy()).add_(torch.from_numpy(x), alpha=alpha).numpy()
                np.testing.assert_allclose(ours.numpy(), want, rtol=1e-6 if dtype is np.float32 else 1e-14, atol=1e-7)
        same = torchplug.from_numpy(y.copy())
        same.add_(same, alpha=0.5)  # out is the input: in place, element by element
        np.testing.assert_allclose(same.numpy(), y * dtype(1.5), rtol=1e-6)
        shared = torchplug.from_numpy(np.arange(12, dtype=dtype))
        shared[1:].add_(shared[:-1].clone(), alpha=2.0)  # a clone: disjoint
        np.testing.assert_array_equal(shared.numpy()[1:], np.arange(1, 12, dtype=dtype) + 2 * np.arange(11, dtype=dtype))
        partly = torchplug.from_numpy(np.arange(12, dtype=dtype))
        with pytest.raises(RuntimeError, match="refer to a single memory location"):  # as PyTorch: refused first
            partly[1:].add_(partly[:-1], alpha=2.0)
    finally:
        torchplug.set_num_threads(before)


def _conv_weight_grad(x, w, g, stride=1, padding=1):
    A = torchplug.ops.aten
    return A.convolution_backward(g, x, w, None, [stride] * 2, [padding] * 2, [1, 1], False, [0, 0], 1,
                                  [False, True, False])[1]


@pytest.mark.parametrize("modify", [False, True])
def test_conv_weight_gradient_reuses_forward_columns_only_for_the_same_unchanged_input(modify):
    from torchplug_cpu.kernels import nn_conv

    x, w = torchplug.tensor(_rand(3, 2, 6, 6)), torchplug.tensor(_rand(4, 2, 3, 3, seed=1)).requires_grad_()
    with torchplug.no_grad():
        y = torchplug.ops.aten.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    assert nn_conv._MEMO.cols is not None  # kept for the weight gradient
    g = torchplug.ones_like(y)
    if modify:
        x.mul_(2)  # an in-place write between forward and backward: the columns are stale
    expected = nn_conv.conv_backward_weight(g.numpy(), x.numpy(), tuple(w.shape), (1, 1), (1, 1), (1, 1), 1)
    got = _conv_weight_grad(x, w.detach(), g)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)
    assert nn_conv._MEMO.cols is None  # used (or dropped) once


def test_conv_columns_are_not_kept_for_inference_or_other_inputs():
    from torchplug_cpu.kernels import nn_conv

    x, w = torchplug.tensor(_rand(2, 1, 5, 5)), torchplug.tensor(_rand(3, 1, 3, 3, seed=1))
    torchplug.ops.aten.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    assert nn_conv._MEMO.cols is None  # the weight does not require grad
    wr = w.clone().requires_grad_()
    with torchplug.no_grad():
        torchplug.ops.aten.convolution(x, wr, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    other = torchplug.tensor(_rand(2, 1, 5, 5, seed=3))
    g = torchplug.ones(2, 3, 3, 3)
    expected = nn_conv.conv_backward_weight(g.numpy(), other.numpy(), (3, 1, 3, 3), (1, 1), (0, 0), (1, 1), 1)
    got = torchplug.ops.aten.convolution_backward(g, other, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                  [False, True, False])[1]
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5)


def test_small_products_run_on_one_blas_thread_large_batched_ones_on_the_users_count():
    # (large 2-d float products go to the C pool instead: test_gemm.py)
    from torchplug_cpu import _blas_policy as P

    if P._setter is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS the policy can steer")
    before = torchplug.get_num_threads()
    calls = []
    real = P._setter
    try:
        torchplug.set_num_threads(2)
        P._setter = lambda n: (calls.append(n), real(n))
        small = torchplug.randn(8, 8)
        large = torchplug.randn(2, 512, 512)
        small @ small
        small @ small  # already at one thread: no second switch
        assert calls == [1]
        assert torchplug.get_num_threads() == 2  # the user's count, whatever the library sits at
        out = large @ large
        assert calls == [1, 2]
        np.testing.assert_allclose(out.numpy(), large.numpy() @ large.numpy(), rtol=1e-3, atol=1e-3)
    finally:
        P._setter = real
        torchplug.set_num_threads(before)


@pytest.mark.parametrize("shape", [(5,), (64, 8, 6, 6), (3, 0), ()])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_keeps_values_nans_and_negative_zero(shape, dtype):
    x = _rand(*shape, dtype=dtype)
    if x.size:
        x.reshape(-1)[0] = np.nan
    if x.size > 1:
        x.reshape(-1)[1] = -0.0
    for t in (torchplug.tensor(x), torchplug.tensor(x.T.copy()).permute(tuple(reversed(range(x.ndim))))):  # C and F order
        out = torchplug.relu(t)
        want = np.where(t.numpy() < 0, dtype(0), t.numpy())  # x < 0 ? 0 : x
        np.testing.assert_array_equal(out.numpy(), want)
        np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(want))  # -0.0 stays -0.0
        assert out.dtype == t.dtype and tuple(out.shape) == tuple(t.shape)
        before = t.numpy().copy()
        out.add_(1)  # the result owns its memory
        np.testing.assert_array_equal(t.numpy(), before)


def test_mid_size_products_take_the_thread_count_measured_faster(monkeypatch):
    from torchplug_cpu import _blas_policy as P

    if P._setter is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS the policy can steer")
    before = torchplug.get_num_threads()
    try:
        torchplug.set_num_threads(2)
        counts = []
        monkeypatch.setattr(P, "_setter", lambda n: counts.append(n))
        clock = [0.0]

        def fake_perf():  # a product on the user's 2 threads "takes" 10 s, on one thread 1 s
            clock[0] += 5.0 if P._current == 2 else 0.5
            return clock[0]

        monkeypatch.setattr(P, "_perf", fake_perf)
        # a batched product (2-d float ones take the C pool: test_gemm.py)
        a = np.random.default_rng(0).standard_normal((2, 48, 256)).astype(np.float32)
        b = np.random.default_rng(1).standard_normal((256, 128)).astype(np.float32)  # 3.1M multiply-adds
        picks = []
        for _ in range(2 * P.PROBE_EVERY):
            np.testing.assert_allclose(P.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
            picks.append(P._current)
        assert picks[:3] == [2, 1, 1]  # each count measured (not the product right after a switch), then the faster
        assert picks.count(2) == 4  # ... and the slower one re-measured (two products) every PROBE_EVERY products
        monkeypatch.setattr(P, "_perf", lambda: clock.__setitem__(0, clock[0] + (0.5 if P._current == 2 else 5.0))
                            or clock[0])  # the host got quiet: two threads win
        picks = []
        for _ in range(P.PROBE_EVERY + 5):
            P.matmul(a, b)
            picks.append(P._current)
        assert picks[-3:] == [2, 2, 2]  # the probe saw two threads win: they stay
        torchplug.use_deterministic_algorithms(True)
        try:
            P._current = 1
            P.matmul(a, b)
            assert P._current == 2  # deterministic mode: always the user's count
        finally:
            torchplug.use_deterministic_algorithms(False)
    finally:
        torchplug.set_num_threads(before)
