"""The pool-backed kernels added to ``_ckernels``: dim reductions (``reduce_dim``), row-parallel softmax,
relu's sign-preserving select, NumPy's transcendental loops cut into chunks (``_parallel.chunked``), and
the 2-d matmul path through ``ndarray.dot``.

Each is compared with NumPy and, where installed, with PyTorch (tolerances, never bits of PyTorch's:
those depend on its CPU dispatch level), at one and two threads, with odd shapes, empty tensors and
the C entry points' own argument checks.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import torchplug
from torchplug_cpu import _native, _parallel

K = _native.ckernels
needs_c = pytest.mark.skipif(K is None, reason="torchplug_cpu._ckernels was not built (or TORCHPLUG_PURE_PYTHON "
                                               "is set)")
BIG = _parallel.MIN_ITEMS * 2 + 37  # above the pool's threshold, and no range divides it evenly
TOL = {np.float32: dict(rtol=2e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


@pytest.fixture
def threads():
    """Set the thread count for one test, restoring the previous count afterwards."""
    before = torchplug.get_num_threads()
    yield torchplug.set_num_threads
    torchplug.set_num_threads(before)


def _data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- relu ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 17, BIG])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_sign_of_zero_matches_torch(n, dtype, threads):
    torch = pytest.importorskip("torch")
    x = _data(n, dtype)
    x[::3] = -0.0
    x[1 % n] = np.nan
    for count in (1, 2):
        threads(count)
        got = torchplug.relu(torchplug.from_numpy(x)).numpy()
        want = torch.relu(torch.from_numpy(x)).numpy()
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # relu(-0.0) is -0.0, as in torch
        inplace = torchplug.from_numpy(x.copy()).relu_().numpy()
        np.testing.assert_array_equal(np.signbit(inplace), np.signbit(want))


def test_relu_numpy_fallback_keeps_negative_zero(monkeypatch):
    from torchplug_cpu.kernels import pointwise

    monkeypatch.setattr(pointwise, "_CK", None)  # as without the C extension
    x = np.array([-0.0, 0.0, -2.0, 3.0, np.nan, -np.inf], np.float32)
    out = torchplug.relu(torchplug.from_numpy(x)).numpy()
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 3.0, np.nan, 0.0])
    assert np.signbit(out).tolist() == [True, False, False, False, False, False]


# ---- reduce_dim ---------------------------------------------------------------------------------------
SHAPES = [  # (shape, dims): rows (inner 1), short inner runs, several dims in one run
    ((1031, 263), (1,)), ((263, 1031), (-1,)), ((33, 4099, 3), (1,)), ((7, 2053, 17), (1,)), ((3, 5, 4111, 7), (1, 2)),
    ((4099, 64), (0,)),
]


@needs_c
@pytest.mark.parametrize("shape,dims", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dim_reductions_match_numpy_at_one_and_two_threads(shape, dims, dtype, threads):
    x = _data(shape, dtype)
    t = torchplug.from_numpy(x)
    axes = tuple(d % x.ndim for d in dims)
    results = {}
    for count in (1, 2):
        threads(count)
        results[count] = (t.sum(dims).numpy(), t.mean(dims).numpy(), t.amax(dims).numpy(), t.amin(dims).numpy(),
                          t.sum(dims, keepdim=True).numpy())
        s, m, hi, lo, sk = results[count]
        np.testing.assert_allclose(s, x.sum(axis=axes, dtype=np.float64), **TOL[dtype])
        np.testing.assert_allclose(m, x.mean(axis=axes, dtype=np.float64), **TOL[dtype])
        np.testing.assert_array_equal(hi, x.max(axis=axes))
        np.testing.assert_array_equal(lo, x.min(axis=axes))
        assert sk.shape == np.sum(x, axis=axes, keepdims=True).shape
        assert s.dtype == x.dtype
    for one, two in zip(results[1], results[2]):  # the summation order does not depend on the thread count
        np.testing.assert_array_equal(one, two)


@needs_c
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dim_reductions_match_torch(dtype):
    torch = pytest.importorskip("torch")
    x = _data((37, 4099, 5), dtype)
    x[3, 17, 2] = np.nan  # NaN propagates through amax/amin (PyTorch's rule)
    x[5, :, 1] = np.inf
    t, ref = torchplug.from_numpy(x), torch.from_numpy(x)
    for dim in (1, -1, (0, 1)):
        for name in ("sum", "mean", "amax", "amin"):
            got = getattr(t, name)(dim).numpy()
            want = getattr(ref, name)(dim).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-4 if dtype is np.float32 else 1e-10, atol=1e-4,
                                       equal_nan=True, err_msg=f"{name} over {dim}")


@needs_c
def test_reduce_dim_kernel_edges():
    x = _data((4, 9, 3), np.float32)
    out = np.empty((4, 3), np.float32)
    K.reduce_dim(0, x, out, False, 4, 9, 3)
    np.testing.assert_allclose(out, x.sum(1), rtol=1e-6, atol=1e-6)
    empty = np.empty(0, np.float32)
    K.reduce_dim(0, empty, empty, False, 0, 9, 3)  # no outputs: nothing to do
    zeros = np.full(6, 7.0, np.float32)
    K.reduce_dim(0, empty, zeros, False, 2, 0, 3)  # a sum over an empty dim is 0
    assert (zeros == 0).all()
    with pytest.raises(ValueError, match="empty dim"):
        K.reduce_dim(1, empty, zeros, False, 2, 0, 3)
    with pytest.raises(ValueError, match="unknown op"):
        K.reduce_dim(3, x, out, False, 4, 9, 3)
    with pytest.raises(ValueError, match="expected 108 items"):
        K.reduce_dim(0, x.ravel()[:107], out, False, 4, 9, 3)
    with pytest.raises(ValueError, match="expected 12 items"):
        K.reduce_dim(0, x, np.empty(11, np.float32), False, 4, 9, 3)
    with pytest.raises(ValueError, match="negative size"):
        K.reduce_dim(0, x, out, False, -4, 9, 3)
    with pytest.raises(OverflowError):
        K.reduce_dim(0, x, out, False, 1 << 40, 1 << 40, 3)
    with pytest.raises(ValueError, match="shares memory"):
        buf = np.zeros(40, np.float32)
        K.reduce_dim(0, buf[:36], buf[32:36], False, 4, 9, 1)


def test_empty_and_non_contiguous_reductions_keep_numpy(threads):
    threads(2)
    x = _data((300, 2000), np.float32)
    t = torchplug.from_numpy(x).t()  # a transposed view: NumPy reduces it
    np.testing.assert_allclose(t.sum(1).numpy(), x.T.sum(1), rtol=1e-5, atol=1e-4)
    e = torchplug.zeros(0, 5)
    assert e.sum(0).tolist() == [0.0] * 5
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        e.amax(0)


# ---- softmax on the pool ------------------------------------------------------------------------------
@needs_c
@pytest.mark.parametrize("shape", [(3, BIG // 3), (BIG // 7, 7), (1, BIG)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_do_not_depend_on_threads(shape, dtype, threads):
    x = torchplug.from_numpy(_data(shape, dtype) * 4)
    got = {}
    for count in (1, 2):
        threads(count)
        y = torchplug.softmax(x, -1)
        ly = torchplug.log_softmax(x, -1)
        g = torchplug.from_numpy(_data(shape, dtype, seed=1))
        got[count] = [a.numpy() for a in (y, ly, torchplug.ops.aten._softmax_backward_data(g, y, -1, y.dtype),
                                          torchplug.ops.aten._log_softmax_backward_data(g, ly, -1, ly.dtype))]
    for one, two in zip(got[1], got[2]):
        np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(got[2][0].sum(-1), 1.0, rtol=1e-4)


@needs_c
def test_softmax_matches_torch_on_large_rows(threads):
    torch = pytest.importorskip("torch")
    x = _data((5, 70001), np.float32) * 3
    threads(2)
    np.testing.assert_allclose(torchplug.softmax(torchplug.from_numpy(x), -1).numpy(),
                               torch.softmax(torch.from_numpy(x), -1).numpy(), rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(torchplug.log_softmax(torchplug.from_numpy(x), -1).numpy(),
                               torch.log_softmax(torch.from_numpy(x), -1).numpy(), rtol=1e-5, atol=1e-5)


# ---- transcendental ops in chunks ---------------------------------------------------------------------
UNARY = ["exp", "log", "tanh", "sigmoid", "sin", "expm1", "log1p", "rsqrt"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transcendental_ops_match_numpy_at_one_and_two_threads(name, dtype, threads):
    x = np.abs(_data(BIG, dtype)) + dtype(0.01)
    x[:: 997] = -x[:: 997]  # some domain errors (NaN, quietly, as in PyTorch)
    t = torchplug.from_numpy(x)
    got = {}
    for count in (1, 2):
        threads(count)
        got[count] = getattr(torchplug, name)(t).numpy()
        assert got[count].dtype == dtype and got[count].shape == x.shape
    np.testing.assert_allclose(got[2], got[1], rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)
    with np.errstate(all="ignore"):
        refs = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "rsqrt": lambda v: 1 / np.sqrt(v)}
        ref = refs[name] if name in refs else getattr(np, name)
        np.testing.assert_allclose(got[2], ref(x), rtol=4 * np.finfo(dtype).eps, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "log"])
def test_transcendental_ops_match_torch(name, threads):
    torch = pytest.importorskip("torch")
    x = np.abs(_data(BIG, np.float32)) + np.float32(0.01)
    threads(2)
    np.testing.assert_allclose(getattr(torchplug, name)(torchplug.from_numpy(x)).numpy(),
                               getattr(torch, name)(torch.from_numpy(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_chunked_honours_the_thread_count_and_layout(threads):
    x = np.linspace(0, 1, BIG, dtype=np.float32)
    out = np.empty_like(x)
    threads(1)
    assert not _parallel.chunked(np.exp, x, out)  # one ufunc on one thread: the caller's NumPy call runs
    assert _parallel.chunked(lambda v: 1 / (1 + np.exp(-v)), x, out)  # a composite runs in cache-sized blocks
    np.testing.assert_array_equal(out, 1 / (1 + np.exp(-x)))
    threads(2)
    assert _parallel.chunked(np.exp, x, out)
    np.testing.assert_array_equal(out, np.exp(x))
    assert not _parallel.chunked(np.exp, x[::2], np.empty(x[::2].shape, np.float32))  # not contiguous
    assert not _parallel.chunked(np.exp, x[:100], out[:100])  # small


# ---- matmul ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,k,m", [(8, 8, 8), (1, 5, 3), (7, 0, 4), (0, 3, 2), (33, 17, 65)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_matmul_layouts_match_torch(n, k, m, dtype):
    torch = pytest.importorskip("torch")
    a, b = _data((n, k), dtype), _data((k, m), dtype, seed=1)
    wide = _data((n, 2 * k), dtype, seed=2)
    cases = [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (wide[:, ::2], b)]
    for x, y in cases:
        got = (torchplug.from_numpy(x) @ torchplug.from_numpy(y)).numpy()
        want = (torch.from_numpy(x) @ torch.from_numpy(y)).numpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype is np.float32 else 1e-12, atol=1e-5)
    got_t = torchplug.from_numpy(a).t() @ torchplug.from_numpy(a)
    np.testing.assert_allclose(got_t.numpy(), a.T @ a, rtol=1e-5, atol=1e-5)


def test_linear_forward_and_backward_do_not_copy_transposed_operands():
    # nn.Linear runs addmm(bias, x, weight.t()) forward and mm(grad.t(), x), mm(grad, weight) backward:
    # BLAS takes the transposed operands with its transpose flag, so the only large allocations are
    # the results.  A copy of the 2048x2048 weight (16 MiB) would show in the traced peak.
    torchplug.manual_seed(0)
    lin = torchplug.nn.Linear(2048, 2048, bias=True)
    x = torchplug.randn(4, 2048, requires_grad=True)
    weight_bytes = 2048 * 2048 * 4
    tracemalloc.start()
    try:
        y = lin(x)
        y.backward(torchplug.ones_like(y))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lin.weight.grad is not None and x.grad is not None
    assert peak < 1.5 * weight_bytes, f"peak {peak} bytes: a transposed operand was copied"
    np.testing.assert_allclose(x.grad.numpy(), lin.weight.detach().numpy().sum(0, keepdims=True).repeat(4, 0),
                               rtol=1e-4, atol=1e-3)
