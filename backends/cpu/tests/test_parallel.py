"""Large loops on the C thread pool (``torchplug_cpu._parallel``) and ``out=`` written in place.

Elementwise results must be bit-identical for every thread count (and to NumPy's loops, since
the ops are exactly rounded); sums are compared with tolerances (the summation order is the
pool's, documented in ``_ckernels.c``).  ``out=`` must write into the destination's own memory
with PyTorch's resize, cast and overlap rules.
"""

from __future__ import annotations

import math
import multiprocessing
import warnings

import numpy as np
import pytest

import torchplug
from torchplug_cpu import _native, _parallel

needs_c = pytest.mark.skipif(_native.ckernels is None, reason="torchplug_cpu._ckernels was not built")
BIG = _parallel.MIN_ITEMS * 3 + 17  # several ranges, and a length no range divides evenly


@pytest.fixture
def threads():
    """Set the pool's thread count for one test, restoring the previous count afterwards."""
    before = torchplug.get_num_threads()
    yield torchplug.set_num_threads
    torchplug.set_num_threads(before)


def _rand(n, dtype, seed=0, positive=False):
    x = np.random.default_rng(seed).standard_normal(n).astype(dtype)
    if positive:
        x = np.abs(x) + dtype(0.5)
    x[::1001] = -0.0  # signed zeros and specials take the same loops
    x[5] = np.inf
    x[7] = np.nan
    return torchplug.from_numpy(x)


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.true_divide),
}
UNARY = {
    "neg": (torchplug.neg, np.negative),
    "abs": (torchplug.abs, np.absolute),
    "sqrt": (torchplug.sqrt, np.sqrt),
    "square": (torchplug.square, np.square),
}


def _bits(t):
    a = t.numpy()
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_give_the_same_bits_on_any_thread_count(threads, dtype, name):
    op, ufunc = BINARY[name]
    a, b = _rand(BIG, dtype, 1), _rand(BIG, dtype, 2)
    results = []
    for n in (1, 2, 3, 8):
        threads(n)
        results.append((op(a, b), op(a, 1.25), op(0.75, b)))
    with np.errstate(all="ignore"):
        expected = (ufunc(a.numpy(), b.numpy()), ufunc(a.numpy(), dtype(1.25)))
    for got in results:  # (0.75 / b is b.reciprocal() * 0.75 in PyTorch: compared across thread counts only)
        for g, e in zip(got, expected + (results[0][2].numpy(),)):
            assert g.dtype == a.dtype and g.numpy().dtype == dtype
            np.testing.assert_array_equal(_bits(g), e.view(_bits(g).dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_give_the_same_bits_on_any_thread_count(threads, dtype, name):
    op, ufunc = UNARY[name]
    a = _rand(BIG, dtype, 3)
    with np.errstate(all="ignore"):
        expected = ufunc(a.numpy())
    for n in (1, 2, 5):
        threads(n)
        got = op(a)
        np.testing.assert_array_equal(_bits(got), expected.view(_bits(got).dtype))


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-13)])
def test_sum_and_mean_match_an_exact_sum_on_any_thread_count(threads, dtype, rtol):
    x = _rand(BIG, dtype, 4, positive=True)
    x.numpy()[5] = x.numpy()[7] = 1.0  # finite: compare with an exactly rounded sum
    exact = math.fsum(x.numpy().astype(np.float64))
    sums = []
    for n in (1, 2, 4):
        threads(n)
        s, m = x.sum(), x.mean()
        assert s.dtype == x.dtype and m.dtype == x.dtype and s.dim() == 0
        sums.append(s.item())
        assert s.item() == pytest.approx(exact, rel=rtol)
        assert m.item() == pytest.approx(exact / BIG, rel=rtol)
    assert max(sums) - min(sums) <= abs(exact) * rtol  # thread counts move a sum by a rounding at most


def test_sum_propagates_nan_and_inf():
    x = _rand(BIG, np.float32, 5)
    assert math.isnan(x.sum().item())
    y = torchplug.full((BIG,), 3e38)
    assert y.sum().item() == math.inf  # float32 overflow gives inf silently, as in PyTorch


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
def test_large_copies_are_exact_on_any_thread_count(threads, dtype):
    base = torchplug.from_numpy((np.arange(1200 * 1100) % 251).astype(dtype).reshape(1200, 1100))
    for n in (1, 2, 3):
        threads(n)
        np.testing.assert_array_equal(base.clone().numpy(), base.numpy())
        np.testing.assert_array_equal(base[:, 3:1000].contiguous().numpy(), base.numpy()[:, 3:1000])
        np.testing.assert_array_equal(base.t().contiguous().numpy(), base.numpy().T)
        np.testing.assert_array_equal(base.flip(0).contiguous().numpy(), base.numpy()[::-1])
        dst = torchplug.empty(1200, 1100, dtype=base.dtype)
        dst.copy_(base)
        np.testing.assert_array_equal(dst.numpy(), base.numpy())


def test_a_copy_within_one_storage_stays_correct(threads):
    threads(2)
    x = torchplug.arange(4 << 20, dtype=torchplug.float32)
    expected = x.numpy()[: 2 << 20].copy()
    x[2 << 20:].copy_(x[: 2 << 20])  # disjoint halves of one storage
    np.testing.assert_array_equal(x.numpy()[2 << 20:], expected)


# ---- out= ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [16, BIG])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_out_writes_into_the_destination_memory(threads, n, name):
    threads(2)
    op = getattr(torchplug, name)
    a, b = _rand(n, np.float32, 6, positive=True), _rand(n, np.float32, 7, positive=True)
    out = torchplug.empty(n)
    ptr = out.data_ptr()
    assert op(a, b, out=out) is out
    assert out.data_ptr() == ptr
    np.testing.assert_array_equal(out.numpy(), op(a, b).numpy())
    assert op(a, 2, out=out) is out and out.data_ptr() == ptr
    np.testing.assert_array_equal(out.numpy(), op(a, 2).numpy())


@pytest.mark.parametrize("name", ["neg", "abs", "sqrt", "exp", "floor"])
def test_unary_out_writes_into_the_destination_memory(name):
    op = getattr(torchplug, name)
    a = _rand(BIG, np.float64, 8, positive=True)
    out = torchplug.empty(BIG, dtype=torchplug.float64)
    ptr = out.data_ptr()
    assert op(a, out=out) is out and out.data_ptr() == ptr
    np.testing.assert_array_equal(out.numpy(), op(a).numpy())


def test_out_may_be_an_input(threads):
    threads(2)
    a, b = _rand(BIG, np.float32, 9), _rand(BIG, np.float32, 10)
    expected = a.numpy() * b.numpy()
    torchplug.mul(a, b, out=a)
    np.testing.assert_array_equal(a.numpy(), expected)
    expected = -b.numpy()
    torchplug.neg(b, out=b)
    np.testing.assert_array_equal(b.numpy(), expected)


def test_out_with_strides_and_broadcasting():
    a = torchplug.rand(4, 1)
    b = torchplug.rand(3)
    big = torchplug.zeros(4, 6)
    out = big[:, ::2]  # a strided view: written through
    torchplug.add(a, b, out=out)
    np.testing.assert_array_equal(big.numpy()[:, ::2], a.numpy() + b.numpy())
    assert (big.numpy()[:, 1::2] == 0).all()


def test_out_resize_rules():
    a, b = torchplug.rand(5), torchplug.rand(5)
    empty = torchplug.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchplug.add(a, b, out=empty)  # an empty out resizes silently
    assert empty.shape == (5,)
    wrong = torchplug.empty(3)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torchplug.mul(a, b, out=wrong)
    np.testing.assert_array_equal(wrong.numpy(), a.numpy() * b.numpy())


def test_out_casting_and_promotion_follow_pytorch():
    torch = pytest.importorskip("torch")
    cases = [
        (lambda T, out: T.add(T.arange(6), T.arange(6), out=out), "float32"),  # int into float: allowed
        (lambda T, out: T.add(T.arange(6), 2, alpha=3, out=out), "int64"),
        (lambda T, out: T.sub(T.arange(6), T.ones(6), out=out), "float64"),
        (lambda T, out: T.div(T.arange(1, 7), 2, rounding_mode="floor", out=out), "int64"),
        (lambda T, out: T.mul(T.arange(6, dtype=T.int8), 100, out=out), "int8"),  # wraps alike
    ]
    for fn, dt in cases:
        mine = fn(torchplug, torchplug.empty(6, dtype=getattr(torchplug, dt)))
        ref = fn(torch, torch.empty(6, dtype=getattr(torch, dt)))
        np.testing.assert_array_equal(mine.numpy(), ref.numpy())
    for T in (torchplug, torch):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            T.add(T.rand(3), 1.5, out=T.empty(3, dtype=T.int64))
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
            T.sub(T.ones(3, dtype=T.bool), T.ones(3, dtype=T.bool), out=T.empty(3, dtype=T.bool))


def test_out_overlap_rules_follow_pytorch():
    torch = pytest.importorskip("torch")
    for T in (torchplug, torch):
        x = T.rand(8)
        with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to tensor"):
            T.add(x[:6], 1.0, out=x[2:])
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            T.add(T.rand(4), 1.0, out=T.zeros(1).expand(4))


# ---- the C entry points' own checks -----------------------------------------------------------------
@needs_c
def test_c_entry_points_refuse_bad_buffers():
    K = _native.ckernels
    x, y = np.zeros(8, np.float32), np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="unknown op"):
        K.binary(9, x, y, x.copy(), False)
    with pytest.raises(ValueError, match="expected 8 items"):
        K.binary(0, x, np.zeros(7, np.float32), x.copy(), False)
    with pytest.raises(ValueError, match="partly overlaps an input"):
        buf = np.zeros(9, np.float32)
        K.binary(0, buf[:8], y, buf[1:], False)
    with pytest.raises(ValueError, match="unknown op"):
        K.unary(5, x, x, False)
    with pytest.raises(ValueError, match="one length"):
        K.copy(np.zeros(8, np.uint8), np.zeros(9, np.uint8))
    with pytest.raises(ValueError, match="overlap"):
        buf = np.zeros(16, np.uint8)
        K.copy(buf[:8], buf[4:12])
    with pytest.raises(ValueError, match="overlaps the source"):
        buf = np.zeros((4, 4), np.float32)
        K.copy_strided(buf[:, :2], buf.reshape(-1)[4:12])
    with pytest.raises(ValueError, match="expected 8 items"):
        K.copy_strided(np.zeros((4, 4), np.float32)[:, :2], np.zeros(9, np.float32))
    with pytest.raises(ValueError, match="positive"):
        K.set_num_threads(0)


@needs_c
def test_which_loops_take_the_pool(threads):
    x, y, out = np.ones(BIG, np.float32), np.ones(BIG, np.float32), np.empty(BIG, np.float32)
    threads(2)
    assert _parallel.binary(np.add, x, y, out) and (out == 2).all()
    assert _parallel.binary_scalar(np.multiply, x, 3, out) and (out == 3).all()
    assert _parallel.unary(np.negative, x, out) and (out == -1).all()
    assert _parallel.copy(out, x) and (out == 1).all()
    assert _parallel.total(x) == BIG
    small = np.ones(16, np.float32)
    assert not _parallel.binary(np.add, small, small, np.empty(16, np.float32))  # below MIN_ITEMS
    assert not _parallel.binary(np.add, x, y.astype(np.float64), out)  # mixed dtypes: NumPy promotes
    assert not _parallel.binary(np.add, x, np.ones(1, np.float32), out)  # broadcasting
    assert not _parallel.binary(np.power, x, y, out)  # not one of the pool's ops
    assert not _parallel.unary(np.exp, x, out)
    assert not _parallel.binary_scalar(np.add, x, 2**60, out)  # not exactly a double
    assert _parallel.total(x.astype(np.int32)) is None
    threads(1)
    assert not _parallel.binary(np.add, x, y, out)  # one thread: NumPy's own loop
    assert _parallel.total(x) == BIG  # sums take the same order whatever the thread count


@needs_c
def test_results_without_the_c_extension_are_the_same(monkeypatch, threads):
    threads(2)
    a, b = _rand(BIG, np.float32, 11), _rand(BIG, np.float32, 12)
    fast = (a + b, a * 3.0, torchplug.sqrt(a), a[::2].contiguous())
    monkeypatch.setattr(_parallel, "_K", None)
    slow = (a + b, a * 3.0, torchplug.sqrt(a), a[::2].contiguous())
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(_bits(f), _bits(s))


def _child_sum(q):
    x = torchplug.ones(BIG)
    q.put(((x + x).sum().item(), x.clone().sum().item()))


@needs_c
def test_a_forked_child_runs_threaded_loops(threads):
    threads(2)
    x = torchplug.ones(BIG)
    (x + x).sum()  # the parent's workers exist before the fork
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_sum, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0
    assert got == (2.0 * BIG, float(BIG))
