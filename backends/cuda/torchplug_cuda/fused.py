"""Fused CuPy kernels (one launch instead of a chain of CuPy calls) and their NumPy references.

Each ``*_cupy`` function takes and returns CuPy arrays (float32 math; float16 inputs are read
and written in float16); each ``*_reference`` is the NumPy formula it must match, which
``tests/test_gpu.py`` compares on a GPU.  Kernels are compiled on first use (CuPy caches them).

They are building blocks: the op table still runs the shared kernels; wiring these in as
fast paths (``softmax``, ``log_softmax`` + ``nll_loss``, ``layer_norm``, ``gelu``, the Adam/SGD
updates) is to be measured on a GPU first (see the issue note).  GPU-unverified here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "softmax_cupy", "softmax_reference", "log_softmax_nll_cupy", "log_softmax_nll_reference",
    "layer_norm_cupy", "layer_norm_reference", "gelu_cupy", "gelu_reference", "adam_step_cupy",
    "adam_step_reference", "sgd_momentum_cupy", "sgd_momentum_reference",
]

_CACHE: dict[str, Any] = {}

# One block per row; rows are contiguous (the caller makes them so).  Two passes over shared
# memory: max, then sum of exp, both tree reductions.
_ROW_SOFTMAX = r"""
extern "C" __global__ void row_softmax(const T* x, T* y, int cols, int log_mode) {
    extern __shared__ float buf[];
    const T* row = x + (long long)blockIdx.x * cols;
    T* out = y + (long long)blockIdx.x * cols;
    float m = -3.402823466e38f;  // -FLT_MAX: NVRTC needs no math header for it
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, (float)row[j]);
    buf[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] = fmaxf(buf[threadIdx.x], buf[threadIdx.x + s]);
        __syncthreads();
    }
    m = buf[0];
    __syncthreads();
    float acc = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) acc += expf((float)row[j] - m);
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    float total = buf[0];
    float lse = m + logf(total);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = (float)row[j];
        out[j] = (T)(log_mode ? v - lse : expf(v - m) / total);
    }
}
"""

_ROW_LAYER_NORM = r"""
extern "C" __global__ void row_layer_norm(const T* x, const T* w, const T* b, T* y, float* mean_out,
                                          float* rstd_out, int cols, float eps) {
    extern __shared__ float buf[];
    const T* row = x + (long long)blockIdx.x * cols;
    T* out = y + (long long)blockIdx.x * cols;
    float s = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += (float)row[j];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    float mean = buf[0] / cols;
    __syncthreads();
    float v = 0.f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) { float d = (float)row[j] - mean; v += d * d; }
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) buf[threadIdx.x] += buf[threadIdx.x + k];
        __syncthreads();
    }
    float rstd = rsqrtf(buf[0] / cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float n = ((float)row[j] - mean) * rstd;
        out[j] = (T)(n * (float)w[j] + (float)b[j]);
    }
    if (threadIdx.x == 0) { mean_out[blockIdx.x] = mean; rstd_out[blockIdx.x] = rstd; }
}
"""

_THREADS = 256


def _ctype(dtype: Any) -> str:
    return {np.dtype(np.float32): "float", np.dtype(np.float16): "half", np.dtype(np.float64): "double"}[np.dtype(dtype)]


def _raw(name: str, source: str, dtype: Any) -> Any:
    import cupy as cp

    key = f"{name}:{np.dtype(dtype)}"
    kern = _CACHE.get(key)
    if kern is None:
        ctype = _ctype(dtype)
        prelude = "#include <cuda_fp16.h>\n" if ctype == "half" else ""
        kern = _CACHE[key] = cp.RawKernel(f"{prelude}typedef {ctype} T;\n{source}", name)
    return kern


def _rows(x: Any) -> tuple[Any, int, int]:
    import cupy as cp

    x = cp.ascontiguousarray(x)
    cols = x.shape[-1]
    return x, x.size // max(cols, 1), cols


# ---- softmax / log_softmax over the last dim -------------------------------------------------------
def softmax_cupy(x: Any, log: bool = False) -> Any:
    import cupy as cp

    x, rows, cols = _rows(x)
    y = cp.empty_like(x)
    if rows and cols:
        _raw("row_softmax", _ROW_SOFTMAX, x.dtype)((rows,), (_THREADS,), (x, y, np.int32(cols), np.int32(int(log))),
                                                   shared_mem=_THREADS * 4)
    return y


def softmax_reference(x: np.ndarray, log: bool = False) -> np.ndarray:
    x32 = x.astype(np.float32)
    m = x32.max(-1, keepdims=True)
    e = np.exp(x32 - m)
    s = e.sum(-1, keepdims=True)
    return (x32 - m - np.log(s) if log else e / s).astype(x.dtype)


# ---- log_softmax + nll_loss (mean over the batch, ignore_index) ------------------------------------
def log_softmax_nll_cupy(logits: Any, target: Any, ignore_index: int = -100) -> tuple[Any, Any]:
    """(mean loss, log-probabilities) for 2-d ``logits`` and int64 ``target``: the softmax launch,
    then one elementwise launch that gathers and masks per row, and a sum."""
    import cupy as cp

    logp = softmax_cupy(logits, log=True)
    kern = _CACHE.get("nll")
    if kern is None:
        # ``i`` is the row (the elementwise index over ``target``); ``logp`` is indexed raw.
        kern = _CACHE["nll"] = cp.ElementwiseKernel(
            "raw T logp, int64 t, int32 cols, int64 ignore", "float32 loss, float32 valid",
            "if (t == ignore) { loss = 0.0f; valid = 0.0f; } else { loss = -(float)logp[i * cols + t]; valid = 1.0f; }",
            "fused_nll_pick")
    loss, valid = kern(logp, target, np.int32(logp.shape[1]), np.int64(ignore_index))
    return loss.sum() / valid.sum(), logp  # 0/0 is NaN when every target is ignored, as in PyTorch


def log_softmax_nll_reference(logits: np.ndarray, target: np.ndarray, ignore_index: int = -100) -> tuple[Any, Any]:
    logp = softmax_reference(logits, log=True)
    keep = target != ignore_index
    picked = -logp.astype(np.float32)[np.arange(len(target))[keep], target[keep]]
    return (np.float32(picked.mean()) if keep.any() else np.float32("nan")), logp


# ---- layer_norm over the last dim -----------------------------------------------------------------
def layer_norm_cupy(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """(y, mean, rstd) like ``native_layer_norm`` over the last dim (one launch per call)."""
    import cupy as cp

    x, rows, cols = _rows(x)
    # Real arrays for absent affine parameters: a RawKernel argument is typed by its Python value.
    weight = cp.ascontiguousarray(weight, x.dtype) if weight is not None else cp.ones(cols, x.dtype)
    bias = cp.ascontiguousarray(bias, x.dtype) if bias is not None else cp.zeros(cols, x.dtype)
    y = cp.empty_like(x)
    mean = cp.empty(rows, cp.float32)
    rstd = cp.empty(rows, cp.float32)
    if rows and cols:
        _raw("row_layer_norm", _ROW_LAYER_NORM, x.dtype)(
            (rows,), (_THREADS,),
            (x, weight, bias, y, mean, rstd, np.int32(cols), np.float32(eps)), shared_mem=_THREADS * 4)
    return y, mean, rstd


def layer_norm_reference(x: np.ndarray, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> tuple[Any, Any, Any]:
    x32 = x.astype(np.float32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x32 - mean) * rstd
    if weight is not None:
        y = y * weight.astype(np.float32)
    if bias is not None:
        y = y + bias.astype(np.float32)
    return y.astype(x.dtype), mean.reshape(-1), rstd.reshape(-1)


# ---- GELU (exact erf form and tanh approximation) ----------------------------------------------------
def gelu_cupy(x: Any, approximate: str = "none") -> Any:
    import cupy as cp

    key = f"gelu:{approximate}"
    kern = _CACHE.get(key)
    if kern is None:
        body = ("float v = (float)x; y = (T)(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));"
                if approximate == "none" else
                "float v = (float)x; y = (T)(0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v))));")
        kern = _CACHE[key] = cp.ElementwiseKernel("T x", "T y", body, f"fused_gelu_{approximate}")
    return kern(x)


def gelu_reference(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    v = x.astype(np.float64)
    if approximate == "none":
        erf = np.vectorize(math.erf)
        y = 0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))
    else:
        y = 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))
    return y.astype(x.dtype)


# ---- optimizer updates (in place, one launch per parameter) ---------------------------------------
def adam_step_cupy(param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any, step: int, lr: float, beta1: float,
                   beta2: float, eps: float, weight_decay: float = 0.0) -> None:
    """torch.optim.Adam's update (L2 weight decay, no amsgrad) for one parameter, in place."""
    import cupy as cp

    kern = _CACHE.get("adam")
    if kern is None:
        kern = _CACHE["adam"] = cp.ElementwiseKernel(
            "T g, float32 lr, float32 b1, float32 b2, float32 eps, float32 wd, float32 bc1, float32 bc2s",
            "T p, T m, T v",
            "float gg = (float)g + wd * (float)p;"
            "float mm = b1 * (float)m + (1.0f - b1) * gg;"
            "float vv = b2 * (float)v + (1.0f - b2) * gg * gg;"
            "m = (T)mm; v = (T)vv;"
            "p = (T)((float)p - (lr / bc1) * mm / (sqrtf(vv) / bc2s + eps));",
            "fused_adam")
    bc1 = 1.0 - beta1 ** step
    bc2s = math.sqrt(1.0 - beta2 ** step)
    kern(grad, np.float32(lr), np.float32(beta1), np.float32(beta2), np.float32(eps), np.float32(weight_decay),
         np.float32(bc1), np.float32(bc2s), param, exp_avg, exp_avg_sq)


def adam_step_reference(param: np.ndarray, grad: np.ndarray, exp_avg: np.ndarray, exp_avg_sq: np.ndarray, step: int,
                        lr: float, beta1: float, beta2: float, eps: float, weight_decay: float = 0.0) -> None:
    g = grad + weight_decay * param
    exp_avg *= beta1
    exp_avg += (1 - beta1) * g
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * g * g
    bc1 = 1 - beta1 ** step
    bc2s = math.sqrt(1 - beta2 ** step)
    param -= (lr / bc1) * exp_avg / (np.sqrt(exp_avg_sq) / bc2s + eps)


def sgd_momentum_cupy(param: Any, grad: Any, buf: Any, lr: float, momentum: float, dampening: float = 0.0,
                      weight_decay: float = 0.0, first: bool = False) -> None:
    """torch.optim.SGD's momentum update for one parameter, in place (``first``: buf = grad)."""
    import cupy as cp

    kern = _CACHE.get("sgd")
    if kern is None:
        kern = _CACHE["sgd"] = cp.ElementwiseKernel(
            "T g, float32 lr, float32 mom, float32 damp, float32 wd, bool first", "T p, T b",
            "float gg = (float)g + wd * (float)p;"
            "float bb = first ? gg : mom * (float)b + (1.0f - damp) * gg;"
            "b = (T)bb; p = (T)((float)p - lr * bb);",
            "fused_sgd_momentum")
    kern(grad, np.float32(lr), np.float32(momentum), np.float32(dampening), np.float32(weight_decay), bool(first),
         param, buf)


def sgd_momentum_reference(param: np.ndarray, grad: np.ndarray, buf: np.ndarray, lr: float, momentum: float,
                           dampening: float = 0.0, weight_decay: float = 0.0, first: bool = False) -> None:
    g = grad + weight_decay * param
    if first:
        buf[...] = g
    else:
        buf *= momentum
        buf += (1 - dampening) * g
    param -= lr * buf
