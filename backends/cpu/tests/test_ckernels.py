"""The optional C kernels (im2col/col2im, max pooling) give exactly what their NumPy fallbacks give.

Each case runs the op twice, once with ``torchplug_cpu._ckernels`` and once with the kernel
modules' ``ckernels`` set to None (the path a build without a compiler takes), and compares
bit for bit; values are also checked against PyTorch where it is installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug
from torchplug_cpu import _common, _native

F = torchplug.nn.functional

pytestmark = pytest.mark.skipif(_native.ckernels is None,
                                reason="torchplug_cpu._ckernels was not built (or TORCHPLUG_PURE_PYTHON is set)")


def _rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _both(monkeypatch, fn):
    """``fn()`` with the C kernels, then with the NumPy fallbacks."""
    fast = fn()
    with monkeypatch.context() as m:
        m.setattr(_common, "ckernels", None)
        slow = fn()
    return fast, slow


def _assert_same(fast, slow):
    for a, b in zip(fast, slow):
        a, b = a.numpy(), b.numpy()
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


POOL_CASES = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    (3, 2, 0, 1, False),
    (3, 1, 0, 1, False),
    (3, 2, 1, 1, False),
    (3, 2, 1, 1, True),
    (2, 2, 0, 1, True),
    ((2, 3), (1, 2), (1, 0), (2, 1), False),
    ((3, 2), (2, 3), (0, 1), (1, 2), True),
    (4, 3, 2, 1, True),
]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("data", ["normal", "ties", "nan_and_inf"])
def test_max_pool2d_forward_and_backward_match_the_numpy_path(monkeypatch, case, dtype, data):
    kernel, stride, padding, dilation, ceil_mode = case
    rng = np.random.default_rng(7)
    if data == "ties":
        x = rng.integers(0, 3, (2, 3, 9, 11)).astype(dtype)
    else:
        x = _rand(2, 3, 9, 11, dtype=dtype)
    if data == "nan_and_inf":
        x[0, 0, 1:3, 1:4] = np.nan
        x[0, 1, :, :3] = -np.inf
        x[1, 2, 4, 4] = np.inf
        x[1, 0] = -np.inf  # whole planes of -inf: the window's first element is the index
    t = torchplug.tensor(x, requires_grad=True)

    def run():
        out, idx = F.max_pool2d(t, kernel, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)
        g = torchplug.tensor(_rand(*out.shape, dtype=dtype, seed=2))
        (grad,) = torchplug.autograd.grad(out, t, g)
        return out.detach(), idx, grad

    fast, slow = _both(monkeypatch, run)
    _assert_same(fast[:2], slow[:2])
    # gradients of overlapping windows: the fallback sums in float64 (np.bincount), C and PyTorch in the dtype
    np.testing.assert_allclose(fast[2].numpy(), slow[2].numpy(), rtol=1e-6, atol=1e-6)
    torch = pytest.importorskip("torch")
    tt = torch.tensor(x, requires_grad=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(tt, kernel, stride, padding, dilation, ceil_mode=ceil_mode,
                                                  return_indices=True)
    np.testing.assert_array_equal(fast[0].numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(fast[1].numpy(), ref_idx.numpy())
    (ref_grad,) = torch.autograd.grad(ref, tt, torch.tensor(_rand(*ref.shape, dtype=dtype, seed=2)))
    np.testing.assert_allclose(fast[2].numpy(), ref_grad.numpy(), rtol=1e-6, atol=1e-6)


def test_max_pool1d_and_batchless_inputs_take_the_same_kernel(monkeypatch):
    x = torchplug.tensor(_rand(3, 5, 17))
    _assert_same(*_both(monkeypatch, lambda: F.max_pool1d(x, 3, 2, 1, return_indices=True)))
    x3 = torchplug.tensor(_rand(4, 7, 6))
    _assert_same(*_both(monkeypatch, lambda: F.max_pool2d(x3, 2, return_indices=True)))


def test_max_pool_backward_refuses_indices_outside_the_plane():
    x = torchplug.tensor(_rand(1, 2, 4, 4))
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    bad = idx.clone()
    bad[0, 1, 0, 0] = 16  # one past the 4x4 plane
    op = torchplug.ops.aten.max_pool2d_with_indices_backward
    with pytest.raises(IndexError, match="outside its input plane of 16 elements"):
        op(torchplug.ones_like(out), x, [2, 2], [2, 2], [0, 0], [1, 1], False, bad)
    good = op(torchplug.ones_like(out), x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx)
    assert float(good.sum()) == out.numel()


CONV_CASES = [  # input shape, weight shape, stride, padding, dilation, groups
    ((4, 1, 8, 8), (8, 1, 3, 3), 1, 0, 1, 1),
    ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), (1, 2), (1, 2), 2),
    ((3, 3, 10, 10), (5, 3, 5, 5), 3, 2, 1, 1),
    ((2, 2, 6, 6), (4, 2, 1, 1), 1, 0, 1, 1),
    ((2, 6, 13), (4, 3, 3), 2, 1, 2, 2),  # conv1d: height 1
    ((1, 2, 5), (3, 2, 4), 1, 3, 1, 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolution_and_its_gradients_match_the_numpy_path(monkeypatch, case, dtype):
    xs, ws, stride, padding, dilation, groups = case
    x = torchplug.tensor(_rand(*xs, dtype=dtype), requires_grad=True)
    w = torchplug.tensor(_rand(*ws, dtype=dtype, seed=1), requires_grad=True)
    conv = F.conv1d if len(xs) == 3 else F.conv2d

    def run():
        y = conv(x, w, None, stride, padding, dilation, groups)
        gx, gw = torchplug.autograd.grad(y, (x, w), torchplug.tensor(_rand(*y.shape, dtype=dtype, seed=3)))
        return y.detach(), gx, gw

    fast, slow = _both(monkeypatch, run)
    for a, b in zip(fast, slow):  # the same GEMMs; summation order in col2im may differ by rounding
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transposed_convolution_matches_the_numpy_path(monkeypatch, dtype):
    x = torchplug.tensor(_rand(2, 4, 5, 6, dtype=dtype), requires_grad=True)
    w = torchplug.tensor(_rand(4, 3, 3, 2, dtype=dtype, seed=1), requires_grad=True)

    def run():
        y = F.conv_transpose2d(x, w, None, stride=2, padding=1, output_padding=1, dilation=(1, 2))
        gx, gw = torchplug.autograd.grad(y, (x, w), torchplug.ones_like(y))
        return y.detach(), gx, gw

    fast, slow = _both(monkeypatch, run)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_raw_kernels_check_buffer_sizes_instead_of_overrunning():
    k = _native.ckernels
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ValueError, match="columns holds"):
        k.im2col(x, np.zeros(3, np.float32), False, (1, 1, 4, 4, 3, 3, 1, 1, 0, 0, 1, 1, 2, 2))
    with pytest.raises(ValueError, match="input holds"):
        k.max_pool2d(x, np.zeros(4, np.float32), np.zeros(4, np.int64), True, (1, 1, 4, 4, 2, 2, 2, 2, 0, 0, 1, 1, 2, 2))
    with pytest.raises(ValueError, match="must not be empty"):
        k.softmax(np.zeros(0, np.float32), np.zeros(0, np.float32), False, 0, 0, True)
    with pytest.raises(ValueError, match="grad_input holds"):
        k.softmax_backward(x, x, np.zeros(3, np.float32), False, 4, 4, False)
    with pytest.raises(ValueError, match="must be positive"):
        k.max_pool2d(x, np.zeros(4, np.float32), np.zeros(4, np.int64), False, (1, 1, 4, 4, 2, 2, 0, 2, 0, 0, 1, 1, 2, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threshold", [0.0, 0.25, -1.5])
@pytest.mark.parametrize("size", [7, 5000])
def test_threshold_backward_matches_the_numpy_path_and_torch(monkeypatch, dtype, threshold, size):
    x = _rand(size, dtype=dtype)
    x[:4] = [np.nan, np.inf, -np.inf, threshold]  # NaN keeps the gradient; x == threshold drops it
    g = _rand(size, dtype=dtype, seed=1)
    g[4:6] = [np.inf, np.nan]
    op = torchplug.ops.aten.threshold_backward
    fast = op(torchplug.tensor(g), torchplug.tensor(x), threshold)
    with monkeypatch.context() as m:
        m.setattr(_common, "ckernels", None)
        slow = op(torchplug.tensor(g), torchplug.tensor(x), threshold)
    assert fast.dtype == slow.dtype
    np.testing.assert_array_equal(fast.numpy(), slow.numpy())
    torch = pytest.importorskip("torch")
    ref = torch.ops.aten.threshold_backward(torch.tensor(g), torch.tensor(x), threshold)
    np.testing.assert_array_equal(fast.numpy(), ref.numpy())


def test_threshold_backward_of_strided_operands_is_computed_on_their_values():
    x = torchplug.tensor(_rand(6, 8)).t()
    g = torchplug.tensor(_rand(8, 6, seed=1))
    out = torchplug.ops.aten.threshold_backward(g, x, 0.0)
    np.testing.assert_array_equal(out.numpy(), np.where(x.numpy() <= 0, 0, g.numpy()))



@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 10), (3, 4, 1), (7,), (2, 3, 200)])
def test_softmax_rows_and_their_backward_match_the_numpy_path_and_torch(monkeypatch, fn, dtype, shape):
    x = _rand(*shape, dtype=dtype) * 4
    flat = x.reshape(-1, shape[-1])
    if flat.shape[0] > 2:
        flat[0, 0] = np.nan  # a NaN row stays NaN
        flat[1, :] = -np.inf  # all -inf: NaN, as in PyTorch
        flat[2, 0] = np.inf
    t = torchplug.tensor(x, requires_grad=True)
    g = _rand(*shape, dtype=dtype, seed=5)
    op = getattr(F, fn)

    def run():
        y = op(t, -1)
        (gx,) = torchplug.autograd.grad(y, t, torchplug.tensor(g))
        return y.detach(), gx

    fast, slow = _both(monkeypatch, run)
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-13)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)  # summation order: last-ulp differences
    torch = pytest.importorskip("torch")
    tt = torch.tensor(x, requires_grad=True)
    ref = getattr(torch.nn.functional, fn)(tt, -1)
    (ref_g,) = torch.autograd.grad(ref, tt, torch.tensor(g))
    np.testing.assert_allclose(fast[0].numpy(), ref.detach().numpy(), **tol)
    np.testing.assert_allclose(fast[1].numpy(), ref_g.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


def test_softmax_over_other_axes_and_half_inputs_still_agree(monkeypatch):
    x = torchplug.tensor(_rand(4, 5, 6))
    for dim in (0, 1, 2):
        fast, slow = _both(monkeypatch, lambda: (F.log_softmax(x, dim), F.softmax(x.half(), dim)))
        np.testing.assert_allclose(fast[0].numpy(), slow[0].numpy(), rtol=2e-6, atol=2e-6)
        np.testing.assert_array_equal(fast[1].float().numpy(), slow[1].float().numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("targets", ["valid", "some_ignored", "all_ignored", "empty"])
def test_nll_loss_and_its_backward_match_the_numpy_path_and_torch(monkeypatch, reduction, dtype, targets):
    rows = 0 if targets == "empty" else 33
    x = _rand(rows, 7, dtype=dtype)
    t = np.random.default_rng(4).integers(0, 7, rows)
    if targets == "some_ignored":
        t[::3] = 5  # ignore_index below
    if targets == "all_ignored":
        t[:] = 5
    ignore = 5 if targets in ("some_ignored", "all_ignored") else -100
    xt = torchplug.tensor(x, requires_grad=True)

    def run():
        loss = F.nll_loss(xt, torchplug.tensor(t), reduction=reduction, ignore_index=ignore)
        (g,) = torchplug.autograd.grad(loss, xt, torchplug.tensor(np.asarray(1.5, dtype)))
        return loss.detach(), g

    fast, slow = _both(monkeypatch, run)
    tol = dict(rtol=1e-6) if dtype == np.float32 else dict(rtol=1e-14)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)  # C sums in double, NumPy in the dtype
    torch = pytest.importorskip("torch")
    tt = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.nll_loss(tt, torch.tensor(t), reduction=reduction, ignore_index=ignore)
    (ref_g,) = torch.autograd.grad(ref, tt, torch.tensor(1.5, dtype=tt.dtype))
    np.testing.assert_allclose(fast[0].numpy(), ref.detach().numpy(), **tol)
    np.testing.assert_allclose(fast[1].numpy(), ref_g.numpy(), **tol)


@pytest.mark.parametrize("bad", [7, -1])
def test_nll_loss_refuses_out_of_range_targets_like_torch(bad):
    x = torchplug.tensor(_rand(4, 7), requires_grad=True)
    t = torchplug.tensor([1, bad, 2, 3])
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        F.cross_entropy(x, t)
    x2 = _rand(2, 3)
    total, count = _native.ckernels.nll(x2, np.array([0, 2]), False, 2, 3, -100)
    assert count == 2 and total == pytest.approx(-(float(x2[0, 0]) + float(x2[1, 2])))
    op = torchplug.ops.aten.nll_loss_backward
    good = F.log_softmax(x, 1).detach()
    with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
        op(torchplug.tensor(1.0), good, t, None, 1, -100, torchplug.tensor(4.0))


# ---- hostile arguments to the raw entry points: a clean exception, never a write outside a buffer -----------------
_F4, _F8, _I8 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)
_HUGE = [2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 62, 2 ** 63 - 1]
_GEOM = (1, 2, 5, 6, 2, 3, 1, 2, 1, 1, 2, 1, 4, 3)  # N C H W KH KW SH SW PH PW DH DW OH OW: a valid window geometry
_FIELDS = "N C H W KH KW SH SW PH PW DH DW OH OW".split()


def _geom_buffers(g, dtype=_F4):
    n, c, h, w, kh, kw, *_, oh, ow = g
    return np.zeros(n * c * h * w, dtype), np.zeros(c * kh * kw * n * oh * ow, dtype), np.zeros(n * c * oh * ow, dtype)


def test_the_valid_geometry_of_the_hostile_tests_runs():
    k = _native.ckernels
    x, cols, out = _geom_buffers(_GEOM)
    k.im2col(x, cols, False, _GEOM)
    k.col2im(cols, x, False, _GEOM)
    k.max_pool2d(x, out, np.zeros(out.size, _I8), False, _GEOM)


@pytest.mark.parametrize("field", range(14), ids=_FIELDS)
@pytest.mark.parametrize("value", [-1, -(2 ** 63)] + _HUGE)
def test_window_kernels_refuse_each_hostile_geometry_field(field, value):
    k = _native.ckernels
    g = list(_GEOM)
    g[field] = value
    g = tuple(g)
    x, cols, out = _geom_buffers(_GEOM)  # buffers sized for the valid geometry
    idx = np.full(out.size, -7, _I8)
    out[:] = np.nan
    sizes = field in (0, 1, 2, 3, 12, 13)  # N C H W OH OW: every kernel's buffer sizes depend on them
    for name, call in [("im2col", lambda: k.im2col(x, cols, False, g)), ("col2im", lambda: k.col2im(cols, x, False, g)),
                       ("max_pool2d", lambda: k.max_pool2d(x, out, idx, False, g))]:
        try:
            call()
        except (ValueError, OverflowError):
            continue
        # Accepted: a field that leaves the buffer sizes alone, with a geometry the kernel can run safely
        # (a long kernel clamped to the input, one window whose stride never applies, ...).
        assert value >= 0 and not sizes and not (name != "max_pool2d" and field in (4, 5)), (name, value)
        if name == "max_pool2d":  # every output written (the input is zeros; -inf where a window saw only padding)
            assert set(out.tolist()) <= {0.0, -np.inf} and (idx >= 0).all()


def test_size_products_that_wrap_to_the_buffer_length_raise_overflow():
    k = _native.ckernels
    empty = np.zeros(0, np.float32)
    # N * C * H * W = 2^64 wraps to 0 in 64 bits: the old check matched an empty buffer and ran the loops
    for g in [(2 ** 62, 4, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1), (2 ** 32, 2 ** 32, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1),
              (1, 1, 2 ** 32, 2 ** 32, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1), (1, 1, 1, 1, 2 ** 32, 2 ** 32, 1, 1, 0, 0, 1, 1, 1, 1)]:
        for call in (k.im2col, k.col2im):
            with pytest.raises(OverflowError, match="overflows a 64-bit size"):
                call(empty, empty, False, g)
        with pytest.raises((OverflowError, ValueError)):
            k.max_pool2d(empty, empty, np.zeros(0, _I8), False, g)
    # the review's im2col with sizes near 2^32 (segfaulted)
    with pytest.raises((OverflowError, ValueError)):
        k.im2col(np.zeros(16, np.float32), np.zeros(16, np.float32), False,
                 (1, 1, 2 ** 32, 2 ** 32, 2, 2, 1, 1, 0, 0, 1, 1, 2 ** 32 - 1, 2 ** 32 - 1))
    with pytest.raises(OverflowError):
        k.max_pool_backward(empty, np.zeros(0, _I8), empty, False, 2 ** 62, 4, 0)
    with pytest.raises(OverflowError):
        k.softmax(empty, empty, False, 2 ** 62, 4, False)
    with pytest.raises(OverflowError):
        k.nll(empty, np.zeros(2 ** 2, _I8), False, 4, 2 ** 62, -100)
    with pytest.raises(OverflowError):
        k.im2col(empty, empty, False, (1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 2 ** 64))  # beyond int64: refused


def test_max_pool_refuses_the_reviewed_negative_padding_and_other_pytorch_preconditions():
    k = _native.ckernels
    x = np.arange(8 * 300, dtype=np.float32)
    out, idx = np.zeros(7 * 299, np.float32), np.zeros(7 * 299, _I8)
    with pytest.raises(ValueError, match="padding of height must be non-negative, got -1"):
        k.max_pool2d(x, out, idx, False, (1, 1, 8, 300, 2, 2, 1, 1, -1, -1, 1, 1, 7, 299))
    x = np.zeros(25, np.float32)
    with pytest.raises(ValueError, match="exceeds half the dilated kernel"):  # 2x2 kernel, dilation 1, pad 2
        k.max_pool2d(x, np.zeros(64, np.float32), np.zeros(64, _I8), False, (1, 1, 5, 5, 2, 2, 1, 1, 2, 2, 1, 1, 8, 8))
    # ceil_mode's partial window is the third: a fourth would start past the input
    k.max_pool2d(x, np.zeros(9, np.float32), np.zeros(9, _I8), False, (1, 1, 5, 5, 2, 2, 2, 2, 0, 0, 1, 1, 3, 3))
    with pytest.raises(ValueError, match="are more than the 3 that fit"):
        k.max_pool2d(x, np.zeros(16, np.float32), np.zeros(16, _I8), False, (1, 1, 5, 5, 2, 2, 2, 2, 0, 0, 1, 1, 4, 4))
    with pytest.raises(ValueError, match="are more than the 0 that fit"):  # no window: dilated taps skip the input
        k.max_pool2d(x, np.zeros(16, np.float32), np.zeros(16, _I8), False,
                     (1, 1, 5, 5, 2, 2, 1, 1, 1, 1, 2 ** 31 - 1, 2 ** 31 - 1, 4, 4))
    with pytest.raises(ValueError, match="kernel .* must be positive"):
        k.max_pool2d(x, np.zeros(36, np.float32), np.zeros(36, _I8), False, (1, 1, 5, 5, 0, 0, 1, 1, 0, 0, 1, 1, 6, 6))


def test_buffers_of_the_wrong_size_kind_or_alignment_are_refused():
    k = _native.ckernels
    g = _GEOM
    x, cols, out = _geom_buffers(g)
    idx = np.zeros(out.size, _I8)
    with pytest.raises(ValueError, match="input holds"):
        k.im2col(x[:-1], cols, False, g)
    with pytest.raises(ValueError, match="columns holds"):
        k.im2col(x, np.zeros(cols.size + 1, np.float32), False, g)
    with pytest.raises(ValueError, match="input holds"):  # float32 data declared float64
        k.im2col(x, cols, True, g)
    with pytest.raises(ValueError, match="indices holds"):
        k.max_pool2d(x, out, np.zeros(out.size, np.int32), False, g)
    with pytest.raises((TypeError, BufferError)):  # a read-only output
        k.im2col(x, bytes(cols.nbytes), False, g)
    with pytest.raises((TypeError, BufferError, ValueError)):  # a non-contiguous buffer
        k.im2col(np.zeros(2 * x.size, np.float32)[::2], cols, False, g)
    raw = np.zeros(x.nbytes + 8, np.uint8)
    unaligned = np.ndarray(x.shape, np.float32, raw, offset=1)
    with pytest.raises(ValueError, match="not aligned"):
        k.im2col(unaligned, cols, False, g)
    with pytest.raises(TypeError):
        k.im2col(x, cols, False, g[:-1])  # 13 geometry fields
    with pytest.raises(ValueError, match="shares memory"):
        k.threshold_backward(x, cols[: x.size], x, 0.0, False)
    with pytest.raises(ValueError, match="holds"):  # a byte length that is no whole number of items
        k.threshold_backward(np.zeros(7, np.uint8), np.zeros(7, np.uint8), np.zeros(7, np.uint8), 0.0, False)
    with pytest.raises(ValueError, match="grad holds"):
        k.threshold_backward(x, x[:-1].copy(), np.zeros_like(x), 0.0, False)


def test_backward_and_row_kernels_refuse_out_of_range_indices_targets_and_rows():
    k = _native.ckernels
    go, gi = np.ones(4, np.float32), np.zeros(16, np.float32)
    for bad in (16, -1, 2 ** 63 - 1, -(2 ** 63), 2 ** 32):
        with pytest.raises(IndexError, match="outside its input plane of 16 elements"):
            k.max_pool_backward(go, np.array([0, 1, 2, bad], _I8), gi, False, 1, 4, 16)
    assert gi.tolist()[:3] == [5.0, 5.0, 5.0] and not gi[3:].any()  # only the in-plane indices were added
    with pytest.raises(ValueError):
        k.max_pool_backward(go, np.zeros(4, _I8), gi, False, -1, -4, -16)
    x = np.zeros(6, np.float32)
    for bad in (3, -1, 2 ** 63 - 1, -(2 ** 63)):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            k.nll(x, np.array([0, bad], _I8), False, 2, 3, -100)
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds."):
            k.nll_backward(np.array([0, bad], _I8), np.zeros(6, np.float32), False, 2, 3, -100, 1.0)
    assert k.nll(x, np.array([-(2 ** 63), 1], _I8), False, 2, 3, -(2 ** 63)) == (0.0, 1)  # ignored, never read
    with pytest.raises(ValueError, match="row count must be non-negative"):
        k.nll(x, np.zeros(0, _I8), False, -2, -3, -100)
    with pytest.raises(ValueError, match="must not be empty"):
        k.softmax_backward(x, x, np.zeros(6, np.float32), False, 6, 0, False)
    with pytest.raises(ValueError, match="row count must be non-negative"):
        k.softmax(x, np.zeros(6, np.float32), False, -6, -1, True)


_NATIVE_PROBE = ("import json, torchplug\n"
                 "from torchplug_cpu import _native, _stream\n"
                 "print(json.dumps([_native.ckernels is not None, _stream._load() is not None]))\n")


def _native_loaded(value):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("TORCHPLUG_PURE_PYTHON", None)
    if value is not None:
        env["TORCHPLUG_PURE_PYTHON"] = value
    out = subprocess.run([sys.executable, "-c", _NATIVE_PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pure_python_zero_means_off():
    # TORCHPLUG_PURE_PYTHON=0 keeps the C kernels and the C random stream; =1 turns both off
    assert _native_loaded("0") == _native_loaded(None) == [True, True]
    assert _native_loaded("1") == [False, False]
