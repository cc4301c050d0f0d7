"""cpu kernels: max/avg pooling (2d, 3d; 1d is a composite), adaptive pooling, and their backward ops.

Windows are visited one kernel offset at a time over strided views of the padded input, so the
only Python loop is over kernel positions.  Max-pool indices are flat offsets into each input
plane (PyTorch's convention).  Backward ops scatter with direct assignment when windows do not
overlap, else with ``np.bincount``.  float16/bfloat16 compute in float32.
"""

from __future__ import annotations

import math

import numpy as np

from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable

from .. import _common as C
from .._common import HALF, Tensor
from .core import fresh

TABLE = KernelTable("CPU")

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _lowest(npdt: np.dtype):
    return -np.inf if npdt.kind == "f" else np.iinfo(npdt).min


def _offset_view(xp: np.ndarray, dims: int, offsets, s, out_sp) -> np.ndarray:
    """The strided view of ``xp``'s trailing dims starting at ``offsets`` with steps ``s``."""
    sl = tuple(slice(o, o + (n - 1) * st + 1, st) for o, st, n in zip(offsets, s, out_sp))
    return xp[(Ellipsis,) + sl]


def _padded(x: np.ndarray, dims: int, p, extent, fill) -> np.ndarray:
    sp = x.shape[-dims:]
    if not any(p) and tuple(extent) == tuple(sp):
        return x
    out = np.full(x.shape[:-dims] + tuple(extent), fill, x.dtype)
    out[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, sp))] = x
    return out


def _extent(sp, out_sp, k, s, p, d):
    return [max(sp[i] + 2 * p[i], (out_sp[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1) for i in range(len(sp))]


def _plane_strides(sp) -> list[int]:
    out = [1] * len(sp)
    for i in range(len(sp) - 2, -1, -1):
        out[i] = out[i + 1] * sp[i + 1]
    return out


# ---- max pooling ---------------------------------------------------------------------------------------------
_OFFSETS: dict = {}  # (input plane, kernel, stride, padding, dilation, output plane) -> (origins, kernel offsets)


def _window_offsets(sp, out_sp, k, s, p, d):
    """Flat input-plane index of each window origin, and of each kernel position relative to it (cached)."""
    key = (sp, out_sp, k, s, p, d)
    found = _OFFSETS.get(key)
    if found is not None:
        return found
    dims = len(sp)
    pst = _plane_strides(sp)
    base = np.zeros(out_sp, _I64)
    for i in range(dims):
        shape = [1] * dims
        shape[i] = out_sp[i]
        base = base + (np.arange(out_sp[i], dtype=_I64) * s[i] - p[i]).reshape(shape) * pst[i]
    offs = np.array([sum(a * b * c for a, b, c in zip(pos, d, pst)) for pos in np.ndindex(*k)], dtype=_I64)
    if len(_OFFSETS) > 256:
        _OFFSETS.clear()
    _OFFSETS[key] = found = (base, offs)
    return found


def _first_inside(out_sp, k, s, p, d) -> np.ndarray:
    """Per window, the flat kernel position (row-major) of its first element inside the input."""
    first = np.zeros(out_sp, _I64)
    for i in range(len(out_sp)):
        shape = [1] * len(out_sp)
        shape[i] = out_sp[i]
        start = np.arange(out_sp[i], dtype=_I64) * s[i] - p[i]  # window start; negative inside the padding
        kfirst = np.maximum(-start + d[i] - 1, 0) // d[i]  # ceil(-start / d), at least 0
        first = first + (kfirst * math.prod(k[i + 1:])).reshape(shape)
    return first


_ORIGINS: dict = {}  # (planes, H, W, kernel, output plane) -> flat window origins, over all planes and per plane


def _origins(planes: int, height: int, width: int, k, out_sp) -> tuple[np.ndarray, np.ndarray]:
    key = (planes, height, width, tuple(k), tuple(out_sp))
    found = _ORIGINS.get(key)
    if found is None:
        (kh, kw), (oh, ow) = k, out_sp
        plane = (np.arange(oh, dtype=_I64)[:, None] * (kh * width) + np.arange(ow, dtype=_I64) * kw).reshape(-1)
        every = ((np.arange(planes, dtype=_I64) * (height * width))[:, None] + plane).reshape(-1)
        if len(_ORIGINS) > 64:
            _ORIGINS.clear()
        _ORIGINS[key] = found = (every, np.tile(plane, planes))
    return found


def _tiled_max2d(x: np.ndarray, k, out_sp):
    """2-d max pooling whose windows tile the input (stride == kernel, no padding or dilation).

    Separable and shift-based, so every pass runs over one long contiguous run (NumPy is slow on
    the short strided rows of small feature maps): pass 1 compares each element with its right
    neighbours within a window row (first maximum wins), pass 2 compares those row maxima with
    the rows below (strictly greater wins, so ties keep PyTorch's row-major scan order); the
    window origins are then gathered.  Elements whose shifted neighbours cross a row or plane are
    computed but never gathered.  Returns None when a window holds a NaN (PyTorch then picks the
    last NaN; the general path does that).
    """
    (kh, kw), (oh, ow) = k, out_sp
    height, width = x.shape[-2:]
    lead = x.shape[:-2]
    planes = math.prod(lead)
    flat = np.ascontiguousarray(x).reshape(-1)
    n1 = flat.size - (kw - 1)
    m, col = flat[:n1], None  # per window-row start: maximum over the row, and its first column
    for j in range(1, kw):
        v = flat[j : j + n1]
        gt = np.greater(v, m)
        col = gt if j == 1 else np.where(gt, j, col)
        m = np.maximum(m, v)
    n2 = n1 - (kh - 1) * width
    best, row = m[:n2], None
    for i in range(1, kh):
        v = m[i * width : i * width + n2]
        gt = np.greater(v, best)
        row = gt if i == 1 else np.where(gt, i, row)
        best = np.maximum(best, v)
    at, plane = _origins(planes, height, width, (kh, kw), (oh, ow))
    out = best.take(at)
    if out.dtype.kind == "f" and np.isnan(out).any():
        return None
    idx = plane.copy()
    if row is not None:
        r = row.take(at)
        idx += r * width if r.dtype != np.bool_ else r.astype(_I64) * width
    if col is not None:
        if row is None:
            idx += col.take(at)
        else:  # the column of the chosen row: gather each row's column, select by r
            c = col.take(at)
            for i in range(1, kh):
                c = np.where(r == i, col.take(at + i * width), c)
            idx += c
    shape = lead + (oh, ow)
    return out.reshape(shape), idx.reshape(shape)


def _max_pool(name: str, dims: int, self: Tensor, kernel_size, stride, padding, dilation, ceil_mode):
    k, s, p, d, out_shape = S.check_max_pool(name, self._data.shape, dims, kernel_size, stride, padding, dilation,
                                             ceil_mode)
    dt = self._dtype
    if dt is C.D.bool_ or dt in C.COMPLEX:
        raise C.not_implemented(name, dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    sp = x.shape[-dims:]
    out_sp = out_shape[-dims:]
    if 0 in out_shape:
        return fresh(np.zeros(out_shape, dt.numpy_dtype)), fresh(np.zeros(out_shape, _I64))
    if dims == 2 and C.ckernels is not None and C.native_float(cdt):  # one pass in C, PyTorch's scan order
        out, idx = np.empty(out_shape, cdt), np.empty(out_shape, _I64)
        lead = math.prod(x.shape[:-2])
        C.ckernels.max_pool2d(np.ascontiguousarray(x), out, idx, cdt.itemsize == 8,
                            (lead, 1, *sp, *k, *s, *p, *d, *out_sp))
        return fresh(out.astype(dt.numpy_dtype, copy=False)), fresh(idx)
    if (dims == 2 and tuple(s) == tuple(k) and not any(p) and d[0] == d[1] == 1 and cdt.kind == "f"
            and out_sp[0] * k[0] <= sp[0] and out_sp[1] * k[1] <= sp[1]):  # no partial (ceil_mode) window
        tiled = _tiled_max2d(x, k, out_sp)
        if tiled is not None:
            return fresh(tiled[0].astype(dt.numpy_dtype, copy=False)), fresh(tiled[1])
    xp = _padded(x, dims, p, _extent(sp, out_sp, k, s, p, d), _lowest(cdt))
    # One pass per kernel position; ``pos`` records the first position holding the maximum (PyTorch's
    # scan order), or the last NaN (PyTorch's `val > max || isnan(val)`); np.maximum propagates NaN.
    nan_aware = cdt.kind == "f" and bool(np.isnan(x.max()) if x.size else False)
    best = None
    # A window of padding and -inf keeps its first in-bounds position, as PyTorch's scan does.
    pos = np.broadcast_to(_first_inside(tuple(out_sp), k, s, p, d), out_shape).copy()
    for j, kpos in enumerate(np.ndindex(*k)):
        v = _offset_view(xp, dims, [a * b for a, b in zip(kpos, d)], s, out_sp)
        if best is None:
            best = v.copy()
            continue
        np.copyto(pos, j, where=(np.greater(v, best) | np.isnan(v)) if nan_aware else np.greater(v, best))
        np.maximum(best, v, out=best)
    base, offs = _window_offsets(sp, tuple(out_sp), k, s, p, d)
    indices = offs[pos] + base
    return fresh(best.astype(dt.numpy_dtype, copy=False)), fresh(indices)


def _check_plane_indices(idx: np.ndarray, plane: int) -> None:
    """Refuses indices outside their input plane (they would land in the next plane, or past the end)."""
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= plane):
        flat = idx.reshape(-1)
        at = int(np.flatnonzero((flat < 0) | (flat >= plane))[0])
        raise IndexError(f"max pooling backward: index {int(flat[at])} (at flat position {at} of indices) is outside "
                         f"its input plane of {plane} elements; pass the indices returned by the forward")


def _scatter_plane(g: np.ndarray, idx: np.ndarray, dims: int, in_shape, unique: bool) -> np.ndarray:
    """grad_input[..., idx] += g over each input plane (flat plane indices ``idx``)."""
    plane = math.prod(in_shape[-dims:])
    lead = math.prod(in_shape[:-dims])
    _check_plane_indices(idx, plane)
    gl = g.reshape(lead, -1)
    flat = (idx.reshape(lead, -1) + (np.arange(lead, dtype=_I64) * plane)[:, None]).ravel()
    if unique:
        out = np.zeros(lead * plane, g.dtype)
        out[flat] = gl.ravel()
    else:
        out = np.bincount(flat, weights=gl.ravel(), minlength=lead * plane).astype(g.dtype, copy=False)
    return out.reshape(in_shape)


def _check_dim_size(t: np.ndarray, dim: int, dim_size: int, size: int) -> None:
    """PyTorch's check_dim_size."""
    if t.ndim != dim or t.shape[dim_size] != size:
        got = t.shape[S.wrap_dim(dim_size, t.ndim)]
        raise RuntimeError(f"Expected a tensor of dimension {dim} and tensor.size[{dim_size}] == {size} but got: "
                           f"dimension {t.ndim} and tensor.size[{dim_size}] = {got}")


def _padding_only(sp, out_sp, k, s, p, d) -> np.ndarray | None:
    """Per output position, whether its window holds padding only (possible with dilation > 1), or None.

    PyTorch gives such a window -inf and an index past its plane; its gradient reaches no input.
    """
    if all(x == 1 for x in d):
        return None
    inside = None
    for i in range(len(sp)):
        taps = (np.arange(out_sp[i]) * s[i] - p[i])[:, None] + np.arange(k[i]) * d[i]
        m = ((taps >= 0) & (taps < sp[i])).any(1)
        inside = m if inside is None else np.logical_and.outer(inside, m)
    return None if inside.all() else ~inside


def _max_pool_backward(dims, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    name = f"max_pool{dims}d_with_indices_backward"
    k, s, p, d, out_shape = S.check_max_pool(f"max_pool{dims}d", self._data.shape, dims, kernel_size, stride, padding,
                                             dilation, ceil_mode)
    ndim = self._data.ndim
    if dims == 2:  # max_pool2d_backward_shape_check
        for t in (grad_output._data, indices._data):
            for j in (3, 2, 1):
                _check_dim_size(t, ndim, ndim - j, out_shape[-j])
            if ndim == 4:
                _check_dim_size(t, ndim, 0, out_shape[0])
    elif tuple(grad_output._data.shape) != tuple(out_shape):
        raise RuntimeError(f"{name}(): Expected grad_output of shape {S.fmt_sizes(out_shape)}, but got "
                           f"{S.fmt_sizes(grad_output._data.shape)}")
    else:
        for j in (4, 3, 2, 1):
            _check_dim_size(indices._data, ndim, ndim - j, out_shape[-j])
    if indices._dtype is not C.D.int64:
        raise RuntimeError(f"expected scalar type Long but found {C.torch_name(indices._dtype)}")
    dt = self._dtype
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    idx = indices._data
    skip = _padding_only(self._data.shape[-dims:], out_shape[-dims:], k, s, p, d)
    if skip is not None:
        g, idx = np.where(skip, cdt.type(0), g), np.where(skip, 0, idx)
    if C.ckernels is not None and C.native_float(cdt) and idx.dtype == _I64 and idx.shape == g.shape:
        in_shape = self._data.shape
        gi = np.zeros(in_shape, cdt)
        plane = math.prod(in_shape[-dims:])
        C.ckernels.max_pool_backward(np.ascontiguousarray(g), np.ascontiguousarray(idx), gi, cdt.itemsize == 8,
                                   gi.size // plane if plane else 0, math.prod(out_shape[-dims:]), plane)
    else:
        unique = all(s[i] >= (k[i] - 1) * d[i] + 1 for i in range(dims))
        gi = _scatter_plane(g, idx, dims, self._data.shape, unique)
    return fresh(gi.astype(dt.numpy_dtype, copy=False))


@TABLE.impl("aten::max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _max_pool("max_pool2d", 2, self, kernel_size, stride, padding, dilation, ceil_mode)


@TABLE.impl("aten::max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    return _max_pool("max_pool3d", 3, self, kernel_size, stride, padding, dilation, ceil_mode)


@TABLE.impl("aten::max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _max_pool_backward(2, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)


@TABLE.impl("aten::max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _max_pool_backward(3, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)


# ---- average pooling ---------------------------------------------------------------------------------------------
def _divisor(dims, sp, out_sp, k, s, p, count_include_pad, divisor_override) -> np.ndarray | int:
    if divisor_override is not None:
        return divisor_override
    total = None
    for i in range(dims):
        start = np.arange(out_sp[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], sp[i] + p[i])
        if count_include_pad:
            cnt = end - start
        else:
            cnt = np.minimum(end, sp[i]) - np.maximum(start, 0)
        shape = [1] * dims
        shape[i] = out_sp[i]
        cnt = cnt.reshape(shape)
        total = cnt if total is None else total * cnt
    return total


def _avg_pool(dims: int, self: Tensor, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{dims}d"
    k, s, p, out_shape = S.check_avg_pool(name, self._data.shape, dims, kernel_size, stride, padding, ceil_mode,
                                          divisor_override)
    dt = self._dtype
    # PyTorch's cpu kernels: floating types and int64 (avg_pool3d: no float16/bfloat16 either).
    if not (dt is C.D.int64 or dt.is_floating_point) or (dims == 3 and dt in HALF):
        raise C.not_implemented("avg_pool3d_out_frame" if dims == 3 else "avg_pool2d", dt)
    cdt = _cdt(dt)
    integral = cdt.kind in "iu"
    acc = np.dtype(np.int64) if integral else cdt
    x = self._data.astype(acc, copy=False)
    sp = x.shape[-dims:]
    out_sp = out_shape[-dims:]
    xp = _padded(x, dims, p, _extent(sp, out_sp, k, s, p, (1,) * dims), 0)
    total = np.zeros(out_shape, acc)
    for pos in np.ndindex(*k):
        total += _offset_view(xp, dims, pos, s, out_sp)
    div = _divisor(dims, sp, out_sp, k, s, p, count_include_pad, divisor_override)
    if integral:
        # PyTorch divides integers with truncation toward zero
        div = np.asarray(div, dtype=acc)
        out = (np.sign(total) * (np.abs(total) // np.abs(div)) * np.sign(div)).astype(dt.numpy_dtype)
    else:
        out = (total / np.asarray(div, dtype=acc)).astype(dt.numpy_dtype, copy=False)
    return fresh(np.ascontiguousarray(out))


def _avg_pool_backward(dims, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    name = f"avg_pool{dims}d"
    k, s, p, out_shape = S.check_avg_pool(name, self._data.shape, dims, kernel_size, stride, padding, ceil_mode,
                                          divisor_override)
    if tuple(grad_output._data.shape) != tuple(out_shape):
        raise RuntimeError(f"avg_pool{dims}d_backward(): Expected grad_output of shape {S.fmt_sizes(out_shape)}, but "
                           f"got {S.fmt_sizes(grad_output._data.shape)}")
    dt = self._dtype
    cdt = _cdt(dt)
    sp = self._data.shape[-dims:]
    out_sp = out_shape[-dims:]
    div = _divisor(dims, sp, out_sp, k, s, p, count_include_pad, divisor_override)
    g = grad_output._data.astype(cdt, copy=False) / np.asarray(div, dtype=cdt)
    ext = _extent(sp, out_sp, k, s, p, (1,) * dims)
    gi = np.zeros(self._data.shape[:-dims] + tuple(ext), cdt)
    for pos in np.ndindex(*k):
        _offset_view(gi, dims, pos, s, out_sp)[...] += g
    gi = gi[(Ellipsis,) + tuple(slice(pp, pp + n) for pp, n in zip(p, sp))]
    return fresh(np.ascontiguousarray(gi).astype(dt.numpy_dtype, copy=False))


@TABLE.impl("aten::avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(2, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@TABLE.impl("aten::avg_pool3d")
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(3, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@TABLE.impl("aten::avg_pool2d_backward")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _avg_pool_backward(2, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)


@TABLE.impl("aten::avg_pool3d_backward")
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _avg_pool_backward(3, grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override)


# ---- adaptive pooling -----------------------------------------------------------------------------------------------
def _windows(n_in: int, n_out: int):
    o = np.arange(n_out)
    start = (o * n_in) // n_out
    end = -((-(o + 1) * n_in) // n_out)
    return start, end


def _membership(n_in: int, n_out: int, dtype) -> np.ndarray:
    """(n_out, n_in) 0/1 matrix: which inputs each adaptive window covers."""
    start, end = _windows(n_in, n_out)
    i = np.arange(n_in)
    return ((i[None, :] >= start[:, None]) & (i[None, :] < end[:, None])).astype(dtype)


def _check_float(name: str, dt) -> None:
    if dt not in C.FLOATING:
        raise C.not_implemented(name, dt)


@TABLE.impl("aten::_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(self, output_size):
    out_shape = S.adaptive_check("adaptive_avg_pool2d", self._data.shape, output_size, 2)
    dt = self._dtype
    if 0 in out_shape:  # torch's kernel computes nothing, in any dtype
        return fresh(np.zeros(out_shape, dt.numpy_dtype))
    _check_float("adaptive_avg_pool2d", dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    h, w = x.shape[-2:]
    oh, ow = out_shape[-2:]
    # each window summed on its own (a nan/inf stays in its windows), columns first, then rows
    hs, he = _windows(h, oh)
    ws, we = _windows(w, ow)
    cols = np.stack([x[..., a:b].sum(-1) for a, b in zip(ws, we)], -1)  # (..., h, ow)
    out = np.stack([cols[..., a:b, :].sum(-2) for a, b in zip(hs, he)], -2)  # (..., oh, ow)
    out /= ((he - hs)[:, None] * (we - ws)[None, :]).astype(cdt)
    return fresh(np.ascontiguousarray(out).astype(dt.numpy_dtype, copy=False))


@TABLE.impl("aten::_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward(grad_output, self):
    g_shape = grad_output._data.shape
    for d in range(1, len(g_shape)):
        if g_shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for "
                               f"non-batch dimensions, but grad_output has sizes {list(g_shape)} with dimension {d} "
                               "being empty")
    dt = self._dtype
    _check_float("adaptive_avg_pool2d_backward_cpu", dt)
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    h, w = self._data.shape[-2:]
    oh, ow = g.shape[-2:]
    mh, mw = _membership(h, oh, cdt), _membership(w, ow, cdt)
    g = g / (mh.sum(1)[:, None] * mw.sum(1)[None, :])
    return fresh(np.ascontiguousarray(mh.T @ g @ mw).astype(dt.numpy_dtype, copy=False))


@TABLE.impl("aten::adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    out_shape = S.adaptive_check("adaptive_max_pool2d", self._data.shape, output_size, 2)
    dt = self._dtype
    _check_float("adaptive_max_pool2d", dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    h, w = x.shape[-2:]
    oh, ow = out_shape[-2:]
    if not (oh and ow) or x.size == 0:
        return fresh(np.zeros(out_shape, dt.numpy_dtype)), fresh(np.zeros(out_shape, _I64))
    # Stage 1 over columns: each row's max in every column window (first maximum wins, as PyTorch scans).
    hs, he = _windows(h, oh)
    ws, we = _windows(w, ow)
    kw = int((we - ws).max())
    cols = np.minimum(ws[:, None] + np.arange(kw)[None, :], we[:, None] - 1)  # (ow, kw), repeats stay in window
    v1 = x[..., cols]  # (..., h, ow, kw)
    a1 = _argmax_last(v1)
    m1 = np.take_along_axis(v1, a1[..., None], -1)[..., 0]  # (..., h, ow)
    c1 = np.minimum(ws + a1, we - 1)  # (..., h, ow): the chosen column of every row
    kh = int((he - hs).max())
    rows = np.minimum(hs[:, None] + np.arange(kh)[None, :], he[:, None] - 1)  # (oh, kh)
    v2 = np.moveaxis(m1[..., rows, :], -1, -2)  # (..., oh, ow, kh)
    a2 = _argmax_last(v2)
    val = np.take_along_axis(v2, a2[..., None], -1)[..., 0]
    row = np.minimum(hs[:, None] + a2, he[:, None] - 1)  # (..., oh, ow)
    col = np.take_along_axis(c1, row, axis=-2)
    return fresh(np.ascontiguousarray(val).astype(dt.numpy_dtype, copy=False)), fresh(row * w + col)


def _argmax_last(v: np.ndarray) -> np.ndarray:
    """First maximum along the last axis, NaN counting as the maximum (PyTorch's scan order)."""
    if v.dtype.kind == "f":
        nan = np.isnan(v)
        if nan.any():
            return np.where(nan.any(-1), np.argmax(nan, -1), np.argmax(v, -1))
    return np.argmax(v, -1)


@TABLE.impl("aten::adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    dt = self._dtype
    _check_float("adaptive_max_pool2d_backward", dt)
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    gi = _scatter_plane(g, indices._data, 2, self._data.shape, False)
    return fresh(gi.astype(dt.numpy_dtype, copy=False))
