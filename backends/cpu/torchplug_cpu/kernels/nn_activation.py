"""cpu kernels: activation functions (gelu, silu, elu, leaky_relu, hardtanh, softplus, mish, hard*, log_sigmoid,
threshold, shrinks, prelu, glu) and their backward ops.

float16/bfloat16 compute in float32 and round once; Scalar arguments join the computation in
that dtype.  Kernel names in "not implemented" errors are PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable

from .. import _common as C
from .._common import HALF, Tensor
from .core import fresh

special = C.lazy_import(globals(), "special", "scipy", "special")  # imported on first use


def _erf(x: np.ndarray) -> np.ndarray:
    try:  # scipy's erf is vectorized; math.erf is the exact fallback
        return special.erf(x)
    except ImportError:  # pragma: no cover - scipy is optional
        return np.vectorize(math.erf, otypes=[np.float64])(x)

TABLE = KernelTable("CPU")

_F32 = np.dtype(np.float32)


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _out(arr, dt) -> Tensor:
    arr = np.asarray(arr)
    return fresh(arr.astype(dt.numpy_dtype, copy=False))


def _unary(name: str, self: Tensor, fn, *, ints: bool = False):
    dt = self._dtype
    if dt not in C.FLOATING and not (ints and dt in C.INTEGRAL):
        raise C.not_implemented(name, dt)
    cdt = _cdt(dt) if dt in C.FLOATING else dt.numpy_dtype
    tok = C.quiet()
    try:
        r = fn(self._data.astype(cdt, copy=False), cdt)
    finally:
        C.loud(tok)
    return _out(r, dt)


def _binary(name: str, grad: Tensor, self: Tensor, fn):
    dt = C.result_dtype(grad, self)
    if dt not in C.FLOATING:
        raise C.not_implemented(name, dt)
    cdt = _cdt(dt)
    tok = C.quiet()
    try:
        r = fn(grad._data.astype(cdt, copy=False), self._data.astype(cdt, copy=False), cdt)
    finally:
        C.loud(tok)
    return _out(r, dt)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    # log1p(exp(x)) without overflow
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


# ---- gelu ---------------------------------------------------------------------------------------------------------
_SQRT1_2 = 0.7071067811865476
_KBETA = math.sqrt(2.0 / math.pi)
_KAPPA = 0.044715


def _check_approx(approximate: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


@TABLE.impl("aten::gelu")
def gelu(self, approximate="none"):
    _check_approx(approximate)
    if approximate == "tanh":
        return _unary("GeluKernelImpl", self,
                      lambda x, t: 0.5 * x * (1 + np.tanh(t.type(_KBETA) * (x + t.type(_KAPPA) * x * x * x))))
    return _unary("GeluKernelImpl", self, lambda x, t: (x * 0.5 * (1 + _erf(x * t.type(_SQRT1_2)))).astype(t))


def _gelu_bw(g, x, t, approximate):
    if approximate == "tanh":
        x_sq = x * x
        inner = t.type(_KBETA) * (x + t.type(_KAPPA) * x_sq * x)
        th = np.tanh(inner)
        left = 0.5 * x
        right = 1 + th
        return g * (0.5 * right + left * (1 - th * th) * t.type(_KBETA) * (1 + 3 * t.type(_KAPPA) * x_sq))
    cdf = 0.5 * (1 + _erf(x * t.type(_SQRT1_2)))
    pdf = np.exp(-0.5 * x * x) * t.type(1 / math.sqrt(2 * math.pi))
    return (g * (cdf + x * pdf)).astype(t)


@TABLE.impl("aten::gelu_backward")
def gelu_backward(grad_output, self, approximate="none"):
    _check_approx(approximate)
    return _binary("GeluBackwardCPUKernelImpl", grad_output, self, lambda g, x, t: _gelu_bw(g, x, t, approximate))


# ---- silu / mish ----------------------------------------------------------------------------------------------------
@TABLE.impl("aten::silu")
def silu(self):
    return _unary("silu_cpu", self, lambda x, t: x / (1 + np.exp(-x)))


@TABLE.impl("aten::silu_backward")
def silu_backward(grad_output, self):
    def fn(g, x, t):
        s = _sigmoid(x)
        return g * s * (1 + x * (1 - s))

    return _binary("silu_backward_cpu", grad_output, self, fn)


@TABLE.impl("aten::mish")
def mish(self):
    return _unary("mish_cpu", self, lambda x, t: x * np.tanh(_softplus(x)))


@TABLE.impl("aten::mish_backward")
def mish_backward(grad_output, self):
    def fn(g, x, t):
        s = _sigmoid(x)
        tsp = np.tanh(_softplus(x))
        return g * (tsp + x * s * (1 - tsp * tsp))

    return _binary("mish_backward_cpu", grad_output, self, fn)


# ---- elu family ------------------------------------------------------------------------------------------------------
@TABLE.impl("aten::elu")
def elu(self, alpha=1, scale=1, input_scale=1):
    def fn(x, t):
        a, s, i = t.type(alpha), t.type(scale), t.type(input_scale)
        return np.where(x > 0, x * s, np.expm1(x * i) * a * s)

    return _unary("elu_cpu", self, fn)


@TABLE.impl("aten::elu_backward")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    if is_result and alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
            "caused by calling in-place forward function with a negative slope, please call out-of-place version "
            "instead."
        )

    def fn(g, x, t):
        a, s, i = t.type(alpha), t.type(scale), t.type(input_scale)
        if is_result:
            return np.where(x <= 0, g * i * (x + a * s), g * s)
        return np.where(x <= 0, g * i * a * s * np.exp(x * i), g * s)

    return _binary("elu_backward_cpu", grad_output, self_or_result, fn)


@TABLE.impl("aten::leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    return _unary("leaky_relu_cpu", self, lambda x, t: np.where(x > 0, x, x * t.type(negative_slope)))


@TABLE.impl("aten::leaky_relu_backward")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    if self_is_result and negative_slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. This "
            "is caused by calling in-place forward function with a negative slope, please call out-of-place version "
            "instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place "
            "leakRelu backward calculation with negative slope"
        )
    return _binary("leaky_relu_backward_cpu", grad_output, self,
                   lambda g, x, t: np.where(x > 0, g, g * t.type(negative_slope)))


# ---- hard* / threshold / shrinks -------------------------------------------------------------------------------------
@TABLE.impl("aten::hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    if self._dtype is D.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self._dtype in C.INTEGRAL:
        if self._dtype is D.uint8 and (int(min_val) < 0 or int(max_val) < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        return _out(np.clip(self._data, min_val, max_val), self._dtype)
    return _unary("hardtanh_cpu", self, lambda x, t: C.clamp_above(C.clamp_below(x, t.type(min_val)), t.type(max_val)))


@TABLE.impl("aten::hardtanh_backward")
def hardtanh_backward(grad_output, self, min_val, max_val):
    return _binary("hardtanh_backward_cpu", grad_output, self,
                   lambda g, x, t: np.where((x <= min_val) | (x >= max_val), t.type(0), g))


@TABLE.impl("aten::softplus")
def softplus(self, beta=1, threshold=20):
    def fn(x, t):
        xb = x * t.type(beta)
        return np.where(xb > threshold, x, np.log1p(np.exp(xb)) / t.type(beta))

    return _unary("softplus_cpu", self, fn)


@TABLE.impl("aten::softplus_backward")
def softplus_backward(grad_output, self, beta, threshold):
    def fn(g, x, t):
        xb = x * t.type(beta)
        z = np.exp(xb)
        return np.where(xb > threshold, g, g * z / (z + 1))

    return _binary("softplus_backward_cpu", grad_output, self, fn)


@TABLE.impl("aten::hardswish")
def hardswish(self):
    return _unary("hardswish_cpu", self, lambda x, t: x * np.minimum(np.maximum(x + 3, 0), 6) / 6)


@TABLE.impl("aten::hardswish_backward")
def hardswish_backward(grad_output, self):
    return _binary("hardswish_backward_cpu", grad_output, self,
                   lambda g, x, t: np.where(x < -3, t.type(0), np.where(x <= 3, g * (x / 3 + t.type(0.5)), g)))


@TABLE.impl("aten::hardsigmoid")
def hardsigmoid(self):
    return _unary("hardsigmoid_cpu", self, lambda x, t: np.minimum(np.maximum(x + 3, 0), 6) / 6)


@TABLE.impl("aten::hardsigmoid_backward")
def hardsigmoid_backward(grad_output, self):
    return _binary("hardsigmoid_backward_cpu", grad_output, self,
                   lambda g, x, t: np.where((x > -3) & (x < 3), g / 6, t.type(0)))


@TABLE.impl("aten::log_sigmoid_forward")
def log_sigmoid_forward(self):
    dt = self._dtype
    if dt not in C.FLOATING:
        raise C.not_implemented("log_sigmoid_cpu", dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    tok = C.quiet()
    try:
        z = np.exp(-np.abs(x))
        out = np.minimum(x, 0) - np.log1p(z)
    finally:
        C.loud(tok)
    return _out(out, dt), _out(z, dt)


@TABLE.impl("aten::log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self, buffer):
    def fn(g, x, t):
        z = np.exp(-np.abs(x))
        neg = x < 0
        return (neg.astype(t) - np.where(neg, t.type(1), t.type(-1)) * (z / (1 + z))) * g

    return _binary("log_sigmoid_backward_cpu", grad_output, self, fn)


@TABLE.impl("aten::threshold")
def threshold(self, threshold, value):
    dt = self._dtype
    if dt is D.bool_ or dt in C.COMPLEX:
        raise C.not_implemented("threshold_cpu", dt)
    if dt in C.INTEGRAL:
        x = self._data
        return _out(np.where(x <= threshold, C.scalar_to(value, dt), x), dt)
    return _unary("threshold_cpu", self, lambda x, t: np.where(x <= t.type(threshold), t.type(value), x))


_FLOAT_NP = frozenset(np.dtype(t) for t in (np.float32, np.float64))
_ZERO = {d: d.type(0) for d in _FLOAT_NP}


@TABLE.impl("aten::threshold_backward")
def threshold_backward(grad_output, self, threshold):
    g, x = grad_output._data, self._data
    if g.shape != x.shape:
        C.broadcast_shape(x.shape, g.shape)  # PyTorch's message for shapes that do not broadcast
    if (C.ckernels is not None and grad_output._dtype is self._dtype and C.native_float(g.dtype)
            and g.shape == x.shape and not isinstance(threshold, complex)):  # one vectorized select in C
        out = np.empty(x.shape, g.dtype)
        C.ckernels.threshold_backward(np.ascontiguousarray(x), np.ascontiguousarray(g), out, float(threshold),
                                    g.dtype.itemsize == 8)
        return C.wrap(out)
    if grad_output._dtype is self._dtype and g.dtype in _FLOAT_NP and 0 < x.size < 4096:
        # relu's backward on small float tensors: one select, nothing to promote
        return C.wrap(np.where(x <= threshold, _ZERO[g.dtype], g))
    dt = C.result_dtype(grad_output, self)
    if dt is D.bool_:
        raise C.not_implemented("threshold_cpu", dt)
    npdt = dt.numpy_dtype
    if g.dtype != npdt:
        g = g.astype(npdt)
    if x.size < 4096:  # small: one select beats the four calls below
        return fresh(np.where(x <= threshold, npdt.type(0), g))
    # relu's backward on activations: g times the kept mask is ~3x faster than np.where; it differs
    # only where a dropped position holds inf/NaN (0*inf), which the exact select then redoes.
    keep = np.less_equal(x, threshold)
    np.logical_not(keep, out=keep)  # NaN inputs are kept, as in PyTorch's `x <= t ? 0 : g`
    tok = C.quiet()  # 0 * inf warns; the select below handles it
    try:
        r = np.multiply(g, keep, dtype=npdt)
    finally:
        C.loud(tok)
    if npdt.kind in "fc" and np.isnan(r).any():
        r = np.where(x <= threshold, npdt.type(0), g)
    return fresh(r)


@TABLE.impl("aten::hardshrink")
def hardshrink(self, lambd=0.5):
    return _unary("hardshrink_cpu", self, lambda x, t: np.where((x >= -lambd) & (x <= lambd), t.type(0), x))


@TABLE.impl("aten::hardshrink_backward")
def hardshrink_backward(grad_out, self, lambd):
    return _binary("hardshrink_backward_cpu", grad_out, self,
                   lambda g, x, t: np.where((x >= -lambd) & (x <= lambd), t.type(0), g))


_DTYPE_MAX = {"float32": ("Float", 3.4028234663852886e38), "float64": ("Double", 1.7976931348623157e308),
              "float16": ("Half", 65504.0), "bfloat16": ("BFloat16", 3.3895313892515355e38)}


def _check_lambd(lambd, dt) -> None:
    name, top = _DTYPE_MAX.get(dt.name, (C.torch_name(dt), float("inf")))
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {name}, but found {lambd:g}")


@TABLE.impl("aten::softshrink")
def softshrink(self, lambd=0.5):
    if self._dtype not in C.FLOATING:
        raise C.not_implemented("softshrink_check", self._dtype)
    _check_lambd(lambd, self._dtype)

    def fn(x, t):
        lam = t.type(lambd)
        return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, x * 0))  # x * 0 keeps NaN

    return _unary("softshrink_cpu", self, fn)


@TABLE.impl("aten::softshrink_backward")
def softshrink_backward(grad_output, self, lambd):
    _check_lambd(lambd, self._dtype)
    return _binary("softshrink_backward_cpu", grad_output, self,
                   lambda g, x, t: np.where((x >= -lambd) & (x <= lambd), t.type(0), g))


# ---- prelu / glu -----------------------------------------------------------------------------------------------------
@TABLE.impl("aten::_prelu_kernel")
def _prelu_kernel(self, weight):
    dt = C.result_dtype(self, weight)
    if dt not in C.FLOATING:
        raise C.not_implemented("prelu_cpu", dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    w = weight._data.astype(cdt, copy=False)
    return _out(np.where(x > 0, x, w * x), dt)


@TABLE.impl("aten::_prelu_kernel_backward")
def _prelu_kernel_backward(grad_output, self, weight):
    dt = C.result_dtype(grad_output, self, weight)
    if dt not in C.FLOATING:
        raise C.not_implemented("prelu_backward_cpu", dt)
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    x = self._data.astype(cdt, copy=False)
    w = weight._data.astype(cdt, copy=False)
    pos = x > 0
    gi = np.where(pos, g, w * g)
    # like PyTorch, grad_weight keeps the broadcast shape: autograd sums it to weight's shape
    gw = np.where(pos, cdt.type(0), x * g)
    return _out(gi, self._dtype), _out(gw, weight._dtype)


def _glu_dim(self: Tensor, dim: int) -> int:
    if self._data.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = S.wrap_dim(dim, self._data.ndim)
    n = self._data.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    return d


@TABLE.impl("aten::glu")
def glu(self, dim=-1):
    d = _glu_dim(self, dim)

    def fn(x, t):
        a, b = np.split(x, 2, axis=d)
        return a * _sigmoid(b)

    return _unary("glu_cpu", self, fn)


@TABLE.impl("aten::glu_backward")
def glu_backward(grad_output, self, dim):
    d = _glu_dim(self, dim)

    def fn(g, x, t):
        a, b = np.split(x, 2, axis=d)
        s = _sigmoid(b)
        return np.concatenate([g * s, g * a * s * (1 - s)], axis=d)

    dt = self._dtype
    if dt not in C.FLOATING:
        raise C.not_implemented("glu_backward_cpu", dt)
    cdt = _cdt(dt)
    tok = C.quiet()
    try:
        r = fn(grad_output._data.astype(cdt, copy=False), self._data.astype(cdt, copy=False), cdt)
    finally:
        C.loud(tok)
    return _out(r, dt)
