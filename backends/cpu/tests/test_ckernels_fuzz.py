"""A seeded fuzz corpus for the C extensions (torchplug_cpu._ckernels, torchplug._tensor._fastpath).

Every case drives a C entry point, directly or through a public op, with random valid or invalid
arguments.  A case passes when the call succeeds with the right result (checked against NumPy
references or the NumPy fallback path) or fails with a clean Python exception; what it must never
do is touch memory outside its buffers, which the sanitize tox environment (the extensions built
with AddressSanitizer and UndefinedBehaviorSanitizer) turns into an abort.  Through public ops a
bad argument must be refused by PyTorch's own checks before any C code sees it (an error from
the C kernels' defence-in-depth checks there means a Python-side check is missing).

``TORCHPLUG_CKERNELS_FUZZ_CASES`` sets the number of cases (default 2,000; the sanitize env runs
30,000) and ``TORCHPLUG_CKERNELS_FUZZ_SEED`` the seed.  Case ``i`` draws from
``random.Random(f"{seed}:{i}")``, so a failure names the case that reproduces it.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import torchplug
from torchplug._tensor import construct as _new_tensor
from torchplug_cpu import _common, _native

F = torchplug.nn.functional
K = _native.ckernels

CASES = int(os.environ.get("TORCHPLUG_CKERNELS_FUZZ_CASES", "2000"))
SEED = int(os.environ.get("TORCHPLUG_CKERNELS_FUZZ_SEED", "20240611"))
CHUNK = 1000
SANITIZED = os.environ.get("TORCHPLUG_EXPECT_SANITIZED") == "1"

pytestmark = pytest.mark.skipif(K is None, reason="torchplug_cpu._ckernels was not built (or TORCHPLUG_PURE_PYTHON "
                                                  "is set)")

# clean failures of the raw entry points on bad arguments
RAW_ERRORS = (ValueError, OverflowError, IndexError, TypeError, BufferError)
# failures of public ops on bad arguments (PyTorch's types); never a message from the C kernels' own checks
OP_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError, OverflowError, MemoryError)
HOSTILE = [-1, -2, 0, 1, 2, 3, 7, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 62, 2 ** 63 - 1,
           -(2 ** 31), -(2 ** 63)]
_C_MESSAGE = re.compile(r"_ckernels|max pooling backward: index")


# ---- NumPy references ------------------------------------------------------------------------------------------
def _window_values(x: np.ndarray, g, fill) -> np.ndarray:
    """x (N, C, H, W) -> (C, KH, KW, N, OH, OW): every window element, ``fill`` outside the input."""
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    iy = (np.arange(oh) * sh - ph)[None, :] + (np.arange(kh) * dh)[:, None]  # (KH, OH)
    ix = (np.arange(ow) * sw - pw)[None, :] + (np.arange(kw) * dw)[:, None]  # (KW, OW)
    inside = ((iy >= 0) & (iy < h))[:, None, :, None] & ((ix >= 0) & (ix < w))[None, :, None, :]
    vals = x[:, :, np.clip(iy, 0, h - 1)[:, None, :, None], np.clip(ix, 0, w - 1)[None, :, None, :]]
    vals = np.where(inside, vals, fill)  # (N, C, KH, KW, OH, OW)
    return vals.transpose(1, 2, 3, 0, 4, 5)


def _ref_im2col(x, g):
    n, c, h, w, kh, kw, *_, oh, ow = g
    return _window_values(x.reshape(n, c, h, w), g, 0).reshape(c * kh * kw, n * oh * ow)


def _ref_col2im(cols, g, dtype):
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    v = cols.reshape(c, kh, kw, n, oh, ow).astype(np.float64)
    iy = (np.arange(oh) * sh - ph)[None, :] + (np.arange(kh) * dh)[:, None]
    ix = (np.arange(ow) * sw - pw)[None, :] + (np.arange(kw) * dw)[:, None]
    ci, ki, kj, ni, oy, ox = np.indices(v.shape)
    yy, xx = iy[ki, oy], ix[kj, ox]
    keep = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
    out = np.zeros((n, c, h, w), np.float64)
    np.add.at(out, (ni[keep], ci[keep], yy[keep], xx[keep]), v[keep])
    return out.astype(dtype)


# ---- geometry generation -----------------------------------------------------------------------------------------
def _valid_pool_geometry(rng: random.Random, ceil: bool):
    """A max-pool geometry PyTorch accepts (padding at most half the dilated kernel, output >= 1)."""
    while True:
        n, c, h, w = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 9), rng.randint(1, 9)
        kh, kw, sh, sw = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3)
        dh, dw = rng.choice([1, 1, 2, 3]), rng.choice([1, 1, 2])
        ph, pw = rng.randint(0, ((kh - 1) * dh + 1) // 2), rng.randint(0, ((kw - 1) * dw + 1) // 2)
        oh = _pool_out(h, kh, sh, ph, dh, ceil)
        ow = _pool_out(w, kw, sw, pw, dw, ceil)
        if oh >= 1 and ow >= 1:
            return (n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow)


def _pool_out(size, k, s, p, d, ceil):
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _mutate(rng: random.Random, g: tuple) -> tuple:
    g = list(g)
    for _ in range(rng.randint(1, 2)):
        field = rng.randrange(14)
        g[field] = rng.choice(HOSTILE) if rng.random() < 0.7 else g[field] + rng.choice([-1, 1])
    return tuple(g)


def _count(g, which):
    n, c, h, w, kh, kw, *_, oh, ow = g
    return {"image": n * c * h * w, "out": n * c * oh * ow, "cols": c * kh * kw * n * oh * ow}[which]


def _buffer(rng: random.Random, count: int, dtype, like: int | None = None) -> np.ndarray:
    """A buffer for ``count`` items (or, for a hostile geometry, for the valid one's ``like``), sometimes off by one."""
    if count < 0 or count > 50_000:
        count = like if like is not None else 0
    if rng.random() < 0.1:
        count = max(0, count + rng.choice([-1, 1]))
    return np.asarray(np.random.default_rng(rng.getrandbits(32)).standard_normal(count), dtype)


# ---- raw entry points ----------------------------------------------------------------------------------------------
def _raw_columns(rng: random.Random) -> str:
    g0 = _valid_pool_geometry(rng, rng.random() < 0.5)
    if rng.random() < 0.3:  # im2col/col2im take any padding and output extent
        g0 = g0[:8] + (rng.randint(0, 4), rng.randint(0, 4)) + g0[10:12] + (rng.randint(0, 5), rng.randint(0, 5))
    g = _mutate(rng, g0) if rng.random() < 0.5 else g0
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl != (rng.random() < 0.05) else np.float32  # sometimes the wrong dtype for the flag
    to_cols = rng.random() < 0.5
    x = _buffer(rng, _count(g, "image"), dtype, _count(g0, "image"))
    cols = _buffer(rng, _count(g, "cols"), dtype, _count(g0, "cols"))
    try:
        if to_cols:
            K.im2col(x, cols, dbl, g)
        else:
            src = cols.copy()
            x[:] = 0
            K.col2im(src, x, dbl, g)
    except RAW_ERRORS:
        return "raw-columns:error"
    if 0 in (x.size, cols.size):  # nothing to gather from, or no column: all zeros (a huge extent may come with it)
        assert not (cols if to_cols else x).any()
        return "raw-columns:ok"
    if to_cols:
        np.testing.assert_array_equal(cols, _ref_im2col(x, g).ravel().astype(dtype))
    else:
        np.testing.assert_allclose(x.reshape(g[:4]), _ref_col2im(src, g, dtype), rtol=1e-5, atol=1e-5)
    return "raw-columns:ok"


def _raw_max_pool(rng: random.Random) -> str:
    g0 = _valid_pool_geometry(rng, rng.random() < 0.5)
    g = _mutate(rng, g0) if rng.random() < 0.5 else g0
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    x = _buffer(rng, _count(g, "image"), dtype, _count(g0, "image"))
    if x.size and rng.random() < 0.2:
        x[rng.randrange(x.size)] = rng.choice([np.nan, np.inf, -np.inf])
    out = _buffer(rng, _count(g, "out"), dtype, _count(g0, "out"))
    idx = np.full(out.size + (1 if rng.random() < 0.05 else 0), -7, np.int64)
    try:
        K.max_pool2d(x, out, idx, dbl, g)
    except RAW_ERRORS:
        return "raw-max_pool:error"
    if out.size == 0:
        return "raw-max_pool:ok"
    n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow = g
    ref = _window_values(x.reshape(n, c, h, w), g, -np.inf)  # (C, KH, KW, N, OH, OW); max propagates NaN
    ref = ref.reshape(c, kh * kw, n, oh, ow).max(axis=1).transpose(1, 0, 2, 3)
    np.testing.assert_array_equal(out.reshape(ref.shape), ref)
    # where a window holds input elements (a dilated one may hold only padding: PyTorch then gives -inf
    # and its first tap's row/column clamped into the plane), the index points at the maximum inside it
    inside = np.isfinite(_window_values(np.zeros((n, c, h, w)), g, np.inf)).any(axis=(1, 2)).transpose(1, 0, 2, 3)
    idx = idx[: out.size].reshape(n, c, oh, ow)
    assert (idx >= 0).all() and (idx[inside] < h * w).all()  # PyTorch too points past a padding-only window
    at = np.minimum(idx, h * w - 1).reshape(n * c, oh * ow)
    got = np.take_along_axis(x.reshape(n * c, h * w), at, axis=1).reshape(ref.shape)
    np.testing.assert_array_equal(got[inside], ref[inside])
    row, col = idx // w, idx % w
    top = np.broadcast_to((np.arange(oh) * sh - ph)[:, None], row.shape)
    left = np.broadcast_to((np.arange(ow) * sw - pw)[None, :], col.shape)
    row, col, top, left = row[inside], col[inside], top[inside], left[inside]
    assert ((row - top) % dh == 0).all() and ((row - top) // dh < kh).all() and (row >= top).all()
    assert ((col - left) % dw == 0).all() and ((col - left) // dw < kw).all() and (col >= left).all()
    return "raw-max_pool:ok"


def _raw_max_pool_backward(rng: random.Random) -> str:
    planes, out_pp, in_pp = rng.randint(0, 3), rng.randint(0, 6), rng.randint(0, 12)
    sizes = [planes, out_pp, in_pp]
    if rng.random() < 0.3:
        sizes[rng.randrange(3)] = rng.choice(HOSTILE)
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    n_out = planes * out_pp
    go = _buffer(rng, n_out, dtype)
    idx = np.array([rng.randrange(in_pp) if in_pp and rng.random() < 0.97 else rng.choice(HOSTILE + [in_pp])
                    for _ in range(len(go))], np.int64)
    gi = np.zeros(max(0, planes * in_pp), dtype)
    try:
        K.max_pool_backward(go, idx, gi, dbl, *sizes)
    except RAW_ERRORS:
        return "raw-max_pool_backward:error"
    ref = np.zeros_like(gi, dtype=np.float64)
    np.add.at(ref, (np.arange(n_out) // max(out_pp, 1)) * in_pp + idx, go)
    np.testing.assert_allclose(gi, ref.astype(dtype), rtol=1e-5, atol=1e-5)
    return "raw-max_pool_backward:ok"


def _raw_threshold_backward(rng: random.Random) -> str:
    n = rng.randint(0, 40)
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    x, g = _buffer(rng, n, dtype), _buffer(rng, n, dtype)
    shared = np.zeros(2 * n + 1, dtype)
    out = rng.choice([np.zeros(n, dtype), np.zeros(n, dtype), x, shared[1:n + 1], np.zeros(n + 1, dtype)])
    if out is shared[1:n + 1] or rng.random() < 0.1:
        g = shared[: n]  # an input overlapping the output
    threshold = rng.choice([0.0, 0.5, -1.0, float("nan"), float("inf")])
    try:
        K.threshold_backward(x, g, out, threshold, dbl)
    except RAW_ERRORS:
        return "raw-threshold_backward:error"
    np.testing.assert_array_equal(out, np.where(x <= dtype(threshold), dtype(0), g))
    return "raw-threshold_backward:ok"


def _raw_softmax(rng: random.Random) -> str:
    rows, n = rng.randint(0, 5), rng.randint(0, 6)
    shape = [rows, n]
    if rng.random() < 0.3:
        shape[rng.randrange(2)] = rng.choice(HOSTILE)
    dbl, log = rng.random() < 0.5, rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    x = _buffer(rng, rows * n, dtype) * 3
    out = np.zeros(rows * n + (1 if rng.random() < 0.05 else 0), dtype)
    backward = rng.random() < 0.5
    try:
        if backward:
            y = _buffer(rng, rows * n, dtype)
            K.softmax_backward(x, y, out, dbl, *shape, log)
        else:
            K.softmax(x, out, dbl, *shape, log)
    except RAW_ERRORS:
        return "raw-softmax:error"
    if rows * n == 0:  # accepted with nothing to do (the C kernels saw no element)
        assert not out.any()
        return "raw-softmax:ok"
    xs = x.reshape(rows, n).astype(np.float64)
    if backward:
        ys = y.reshape(rows, n).astype(np.float64)
        ref = xs - np.exp(ys) * xs.sum(1, keepdims=True) if log else xs * ys - ys * (xs * ys).sum(1, keepdims=True)
    else:
        z = xs - xs.max(1, keepdims=True)
        ref = z - np.log(np.exp(z).sum(1, keepdims=True)) if log else np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(out.reshape(rows, n), ref, rtol=1e-4, atol=1e-4)
    return "raw-softmax:ok"


def _raw_reduce_dim(rng: random.Random) -> str:
    sizes = [rng.randint(0, 5), rng.randint(0, 40), rng.randint(0, 6)]  # outer, r, inner
    if rng.random() < 0.2:
        sizes[rng.randrange(3)] = rng.choice(HOSTILE)
    op = rng.choice([0, 0, 1, 2, 3 if rng.random() < 0.1 else 1])
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    valid = [max(0, min(v, 40)) for v in sizes]
    x = _buffer(rng, sizes[0] * sizes[1] * sizes[2], dtype, like=valid[0] * valid[1] * valid[2])
    if x.size and rng.random() < 0.2:
        x[rng.randrange(x.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
    shared = rng.random() < 0.05
    out = x[: sizes[0] * sizes[2]] if shared else _buffer(rng, sizes[0] * sizes[2], dtype, like=valid[0] * valid[2])
    try:
        K.reduce_dim(op, x, out, dbl, *sizes)
    except RAW_ERRORS:
        return "raw-reduce_dim:error"
    outer, r, inner = sizes
    if outer * inner == 0:  # accepted with nothing to write
        return "raw-reduce_dim:ok"
    xs = x.reshape(outer, r, inner).astype(np.float64)
    ref = xs.sum(1) if op == 0 else xs.max(1) if op == 1 else xs.min(1)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(out.reshape(outer, inner), ref, rtol=1e-5, atol=1e-5)
    return "raw-reduce_dim:ok"


def _raw_relu(rng: random.Random) -> str:
    n = rng.randint(0, 40)
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    x = _buffer(rng, n, dtype)
    x[::3] = -0.0
    shared = np.zeros(2 * n + 1, dtype)
    out = rng.choice([np.zeros(n, dtype), x, shared[1:n + 1], np.zeros(n + 1, dtype)])
    if out is shared[1:n + 1]:
        x = shared[:n]  # partly overlapping the output
    want = np.where(x < 0, dtype(0), x)
    try:
        K.unary(4, x, out, dbl)
    except RAW_ERRORS:
        return "raw-relu:error"
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))
    return "raw-relu:ok"


def _raw_nll(rng: random.Random) -> str:
    rows, n = rng.randint(0, 5), rng.randint(0, 5)
    shape = [rows, n]
    if rng.random() < 0.3:
        shape[rng.randrange(2)] = rng.choice(HOSTILE)
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    ignore = rng.choice([-100, 0, 1, 2 ** 63 - 1, -(2 ** 63)])
    t = np.array([rng.randrange(n) if n and rng.random() < 0.9 else rng.choice(HOSTILE + [n, ignore])
                  for _ in range(rows)], np.int64)
    x = _buffer(rng, rows * n, dtype)
    backward = rng.random() < 0.5
    gi = np.zeros(rows * n + (1 if rng.random() < 0.05 else 0), dtype)
    try:
        if backward:
            K.nll_backward(t, gi, dbl, *shape, ignore, 0.5)
        else:
            total, count = K.nll(x, t, dbl, *shape, ignore)
    except RAW_ERRORS:
        return "raw-nll:error"
    keep = t != ignore
    rows_kept = np.nonzero(keep)[0]
    if backward:
        ref = np.zeros((rows, n), dtype)
        ref[rows_kept, t[keep]] = 0.5
        np.testing.assert_array_equal(gi.reshape(rows, n), ref)
    else:
        assert count == keep.sum()
        assert total == pytest.approx(-float(x.reshape(rows, n)[rows_kept, t[keep]].astype(np.float64).sum()),
                                      rel=1e-6, abs=1e-6)
    return "raw-nll:ok"


def _raw_fastpath(rng: random.Random) -> str:
    if not _new_tensor.ACCELERATED:
        return "raw-fastpath:skipped"
    stats = torchplug._runtime.allocator.DeviceAllocator("cpu").stats_for(0)
    arr = np.zeros(rng.randint(0, 8), np.float32)
    nbytes = rng.choice([arr.nbytes, arr.nbytes, -1, -(2 ** 63), 2 ** 63, 2 ** 63 - 1, 2 ** 70, 1.5])
    other = rng.choice([stats, stats, stats, object(), None, 3])
    if rng.random() < 0.2:
        stats.cur_b = rng.choice([2 ** 63 - 1, -(2 ** 63), 2 ** 64, 0.5])
    try:
        t = _new_tensor.new_tensor(arr, "float32", "cpu", 5, other, nbytes)
    except (TypeError, AttributeError, OverflowError, ValueError):
        return "raw-fastpath:error"
    assert t._data is arr and t._storage.data is arr and t._storage.nbytes == nbytes
    view = _new_tensor.new_view(arr[1:], "float32", "cpu", 5, t._storage, t)
    assert view._storage is t._storage and view._base is t
    del t, view
    return "raw-fastpath:ok"


# ---- public ops ----------------------------------------------------------------------------------------------------
def _param(rng: random.Random, lo: int, hi: int, dims: int):
    r = rng.random()
    if r < 0.08:
        return rng.choice(HOSTILE)
    if r < 0.6:
        return rng.randint(lo, hi)
    return tuple(rng.randint(lo, hi) if rng.random() < 0.95 else rng.choice(HOSTILE) for _ in range(dims))


def _tensor(rng: random.Random, shape, dtype=np.float32, requires_grad=False):
    data = np.random.default_rng(rng.getrandbits(32)).standard_normal(shape).astype(dtype)
    return torchplug.tensor(data, requires_grad=requires_grad)


def _op_pool(rng: random.Random):
    if rng.random() < 0.4:  # a geometry PyTorch accepts, through the public op
        n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, *_ = _valid_pool_geometry(rng, ceil := rng.random() < 0.5)
        x = _tensor(rng, (n, c, h, w), rng.choice([np.float32, np.float64]), requires_grad=True)

        def valid():
            out, idx = F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), (dh, dw), ceil_mode=ceil, return_indices=True)
            return (out, idx, *torchplug.autograd.grad(out.sum(), x))

        return "op-max_pool", valid
    dims = rng.choice([1, 2, 2])
    nd = dims + rng.choice([1, 1, 1, 0, 2])
    shape = tuple(rng.randint(1, 7) if rng.random() < 0.95 else 0 for _ in range(nd))
    x = _tensor(rng, shape, rng.choice([np.float32, np.float64]), requires_grad=rng.random() < 0.4)
    k, s, p, d = _param(rng, 1, 4, dims), _param(rng, 1, 3, dims), _param(rng, 0, 2, dims), _param(rng, 1, 3, dims)
    if rng.random() < 0.15:
        p = rng.choice([-1, -2, (1, -1), 3, 5])  # the review's negative and oversized padding
    if rng.random() < 0.2:
        s = None
    ceil = rng.random() < 0.3
    fn = F.max_pool1d if dims == 1 else F.max_pool2d

    def run():
        out, idx = fn(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
        if x.requires_grad:
            (g,) = torchplug.autograd.grad(out.sum(), x)
            return out, idx, g
        return out, idx

    return "op-max_pool", run


def _op_conv(rng: random.Random):
    dims = rng.choice([1, 2])
    groups = rng.choice([1, 1, 2, 0, -1])
    cin, cout = rng.randint(1, 3) * max(groups, 1), rng.randint(1, 3) * max(groups, 1)
    ks = tuple(rng.randint(1, 3) for _ in range(dims))
    x = _tensor(rng, (rng.randint(1, 2), cin) + tuple(rng.randint(1, 7) for _ in range(dims)),
                requires_grad=rng.random() < 0.5)
    w = _tensor(rng, (cout, cin // max(groups, 1)) + ks, requires_grad=rng.random() < 0.5)
    stride, padding, dilation = _param(rng, 1, 3, dims), _param(rng, 0, 2, dims), _param(rng, 1, 2, dims)
    if rng.random() < 0.1:
        padding = rng.choice([-1, (0, -1)])
    fn = F.conv1d if dims == 1 else F.conv2d

    def run():
        y = fn(x, w, None, stride, padding, dilation, groups)
        need = [t for t in (x, w) if t.requires_grad]
        return (y, *torchplug.autograd.grad(y.sum(), need)) if need else (y,)

    return "op-conv", run


def _op_unfold(rng: random.Random):
    k, d, p, s = _param(rng, 1, 3, 2), _param(rng, 1, 2, 2), _param(rng, 0, 2, 2), _param(rng, 1, 3, 2)
    if rng.random() < 0.5:
        x = _tensor(rng, tuple(rng.randint(1, 6) for _ in range(rng.choice([3, 4, 4, 2]))))
        return "op-unfold", lambda: (F.unfold(x, k, d, p, s),)
    size = (rng.randint(1, 7), rng.randint(1, 7))
    x = _tensor(rng, (rng.randint(1, 2), rng.randint(1, 3) * 4, rng.randint(1, 30)))
    return "op-fold", lambda: (F.fold(x, size, k, d, p, s),)


def _op_softmax(rng: random.Random):
    shape = tuple(rng.randint(0, 5) for _ in range(rng.randint(0, 3)))
    x = _tensor(rng, shape, rng.choice([np.float32, np.float64]), requires_grad=rng.random() < 0.5)
    dim = rng.randint(-4, 3)
    fn = rng.choice([F.softmax, F.log_softmax])

    def run():
        y = fn(x, dim)
        return (y, *torchplug.autograd.grad(y.sum(), x)) if x.requires_grad else (y,)

    return "op-softmax", run


def _op_nll(rng: random.Random):
    rows, classes = rng.randint(0, 6), rng.randint(1, 5)
    x = _tensor(rng, (rows, classes), rng.choice([np.float32, np.float64]), requires_grad=rng.random() < 0.6)
    t = [rng.randrange(classes) if rng.random() < 0.9 else rng.choice([classes, -1, -100, 2 ** 40]) for _ in range(rows)]
    if rng.random() < 0.1:
        t = t + [0]  # a target of the wrong length
    target = torchplug.tensor(np.array(t, np.int64).reshape(-1))
    reduction = rng.choice(["mean", "sum", "none"])
    ignore = rng.choice([-100, 0, 1])
    fn = rng.choice([F.nll_loss, F.cross_entropy])

    def run():
        loss = fn(x, target, reduction=reduction, ignore_index=ignore)
        return (loss, *torchplug.autograd.grad(loss.sum(), x)) if x.requires_grad else (loss,)

    return "op-nll", run


def _op_relu_backward(rng: random.Random):
    shape = tuple(rng.randint(0, 5) for _ in range(rng.randint(1, 3)))
    other = shape if rng.random() < 0.8 else tuple(rng.randint(0, 5) for _ in range(rng.randint(1, 3)))
    dt = rng.choice([np.float32, np.float64])
    x, g = _tensor(rng, shape, dt), _tensor(rng, other, rng.choice([dt, dt, np.float16]))
    if rng.random() < 0.3 and x.dim() >= 2:
        x = x.transpose(0, 1)
    threshold = rng.choice([0.0, 0.5, -1.0])
    return "op-relu_backward", lambda: (torchplug.ops.aten.threshold_backward(g, x, threshold),)


def _raw_gemm(rng: random.Random) -> str:
    from torchplug_cpu import _gemm

    if not _gemm.library():
        return "raw-gemm:error"  # no library bound: nothing reaches the kernel
    dims = [rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 9)]  # m, k, n
    valid = list(dims)
    if rng.random() < 0.1:
        dims[rng.randrange(3)] = rng.choice(HOSTILE)
    dbl, ta, tb = rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    m, k, n = valid
    a = _buffer(rng, m * k, dtype)
    b = _buffer(rng, k * n, dtype)
    if rng.random() < 0.05:
        dtype = np.float32 if dbl else np.float64  # buffers of the other item size
    shared = np.zeros(m * k + m * n + 1, dtype)
    c = rng.choice([np.zeros(m * n, dtype), np.zeros(m * n, dtype), shared[m * k // 2:][:m * n]])
    if c.base is shared and rng.random() < 0.5:
        a = shared[: m * k]
    parts = rng.choice([1, 2, 3, 0, -1, 64])
    try:
        K.gemm(a, b, c, dbl, ta, tb, dims[0], dims[2], dims[1], parts)  # (m, n, k)
    except RAW_ERRORS:
        return "raw-gemm:error"
    am = a.reshape((k, m) if ta else (m, k)).astype(np.float64)
    bm = b.reshape((n, k) if tb else (k, n)).astype(np.float64)
    ref = (am.T if ta else am) @ (bm.T if tb else bm)
    np.testing.assert_allclose(c.reshape(m, n), ref, rtol=1e-4, atol=1e-4)
    return "raw-gemm:ok"


def _raw_axpy(rng: random.Random) -> str:
    n = rng.randint(0, 40)
    dbl = rng.random() < 0.5
    dtype = np.float64 if dbl else np.float32
    x = _buffer(rng, n, dtype)
    shared = np.zeros(2 * n + 1, dtype)
    y = rng.choice([_buffer(rng, n, dtype), _buffer(rng, n, dtype), x, shared[1:n + 1]])
    if y is shared[1:n + 1]:
        x = shared[: n]  # partly overlapping
    alpha = rng.choice([0.5, -0.1, 0.0, 3.0, float("inf")])
    before = y.copy()
    try:
        K.axpy(x, y, alpha, dbl)
    except RAW_ERRORS:
        return "raw-axpy:error"
    with np.errstate(all="ignore"):
        want = before + dtype(alpha) * (before if x is y else x)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    return "raw-axpy:ok"


RAW = [_raw_columns, _raw_max_pool, _raw_max_pool_backward, _raw_threshold_backward, _raw_softmax, _raw_nll,
       _raw_fastpath, _raw_reduce_dim, _raw_relu, _raw_gemm, _raw_axpy]
OPS = [_op_pool, _op_conv, _op_unfold, _op_softmax, _op_nll, _op_relu_backward]


def _values(results) -> list[np.ndarray]:
    return [r.detach().numpy() for r in results]


def _run_op(rng: random.Random, monkeypatch) -> str:
    family, run = rng.choice(OPS)(rng)
    try:
        fast = run()
    except OP_ERRORS as e:
        assert not _C_MESSAGE.search(str(e)), f"a public op reached the C kernels' own checks: {e!r}"
        return f"{family}:error"
    if rng.random() < 0.3:  # the NumPy fallback gives the same values
        with monkeypatch.context() as m:
            m.setattr(_common, "ckernels", None)
            try:
                slow = run()
            except (MemoryError, OverflowError, ValueError):
                # the fallback pads the input whole: a huge padding or stride with a small output
                # (which the C kernels handle element by element) is past what NumPy can allocate
                return f"{family}:ok"
        for a, b in zip(_values(fast), _values(slow)):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    return f"{family}:ok"


def run_case(i: int, monkeypatch) -> str:
    """Case ``i`` of the corpus; returns "family:ok" or "family:error" (a clean refusal)."""
    rng = random.Random(f"{SEED}:{i}")
    if rng.random() < 0.55:
        return rng.choice(RAW)(rng)
    return _run_op(rng, monkeypatch)


@pytest.mark.parametrize("chunk", range((CASES + CHUNK - 1) // CHUNK))
def test_fuzz_corpus(chunk, monkeypatch):
    outcomes: Counter = Counter()
    for i in range(chunk * CHUNK, min(CASES, (chunk + 1) * CHUNK)):
        try:
            outcomes[run_case(i, monkeypatch)] += 1
        except AssertionError as e:
            raise AssertionError(f"fuzz case {i} (seed {SEED}): {e}") from e
    families = {k.split(":")[0] for k in outcomes}
    # every chunk reaches every family, and both accepted and refused arguments
    assert len(families - {"raw-fastpath"}) >= 8, outcomes
    assert any(k.endswith(":ok") for k in outcomes) and any(k.endswith(":error") for k in outcomes), outcomes
    print(f"chunk {chunk}: {sum(outcomes.values())} cases {dict(sorted(outcomes.items()))}")


# ---- the sanitize env: the sanitized builds are the ones loaded -------------------------------------------------------
REPO = Path(__file__).resolve().parents[3]


def _dynamic_symbol_names(path: str) -> bytes:
    try:
        return subprocess.run(["nm", "-D", path], capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.CalledProcessError):  # no binutils: the names are in the ELF string table
        return Path(path).read_bytes()


@pytest.mark.skipif(not SANITIZED, reason="only in the sanitize tox env (TORCHPLUG_EXPECT_SANITIZED=1)")
def test_the_sanitized_extensions_are_the_ones_loaded():
    import torchplug._tensor._fastpath as fastpath
    import torchplug_cpu._ckernels as ckernels

    assert _new_tensor.ACCELERATED and _native.ckernels is ckernels and _common.ckernels is ckernels
    in_tree = {REPO / "core/torchplug", REPO / "backends/cpu/torchplug_cpu"}
    for module in (fastpath, ckernels):
        path = Path(module.__file__).resolve()
        assert path.parent not in in_tree, f"{module.__name__} was imported from the checkout, not the sanitized build"
        names = _dynamic_symbol_names(str(path))
        assert b"__asan_report_" in names and b"__ubsan_handle_" in names, f"{path} is not instrumented"
    maps = Path("/proc/self/maps").read_text()
    assert "libasan" in maps and "libubsan" in maps, "the sanitizer runtimes are not loaded"


@pytest.mark.skipif(not SANITIZED, reason="only in the sanitize tox env (TORCHPLUG_EXPECT_SANITIZED=1)")
def test_an_out_of_bounds_write_aborts_the_process():
    # The sanitizers are armed: a C write (memmove, which ASan intercepts) one element past a NumPy
    # buffer, in a child process, is reported and aborts it, as any out-of-bounds write in the C
    # extensions would.
    code = ("import ctypes, numpy as np\n"
            "a, b = np.zeros(1000, np.int64), np.ones(1, np.int64)\n"
            "ctypes.memmove(a.ctypes.data + a.nbytes, b.ctypes.data, 8)\n"
            "print('written')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "heap-buffer-overflow" in out.stderr and "written" not in out.stdout, \
        out.stderr[-2000:]
