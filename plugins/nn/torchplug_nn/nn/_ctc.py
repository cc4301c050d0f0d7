"""``ctc_loss``: the CTC forward (alpha) and backward (beta) recursions in NumPy, vectorised over batch
and target positions (one step per time frame), with PyTorch's gradient formula.

PyTorch's gradient w.r.t. ``log_probs`` is ``exp(lp) - exp(log(alpha*beta) + nll - lp)``: the
gradient of the loss composed with a log-softmax, which is what callers feed it. A composite
would give the plain derivative instead, so the op is an autograd Function.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import torchplug
from torchplug._tensor.tensor import Tensor
from torchplug._ops.nn_functional import _reduction_enum

from .. import _grad

__all__ = ["ctc_loss"]

_NEG_INF = -np.inf


def _lse(*xs: np.ndarray) -> np.ndarray:
    m = xs[0]
    for x in xs[1:]:
        m = np.maximum(m, x)
    safe = np.where(np.isfinite(m), m, 0.0)
    total = sum(np.exp(x - safe) for x in xs)
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(m), np.log(total) + safe, m)


def _extended(targets: np.ndarray, target_lengths: np.ndarray, blank: int) -> tuple[np.ndarray, np.ndarray]:
    """Blank-interleaved labels l' (N, 2*Smax+1) and whether l'(s) may skip from l'(s-2)."""
    n, smax = targets.shape
    ext = np.full((n, 2 * smax + 1), blank, dtype=np.int64)
    ext[:, 1::2] = targets
    skip = np.zeros(ext.shape, dtype=bool)
    if smax > 1:
        skip[:, 3::2] = targets[:, 1:] != targets[:, :-1]
    valid = np.arange(2 * smax + 1)[None, :] < (2 * target_lengths[:, None] + 1)
    return np.where(valid, ext, blank), skip & valid


def _forward(lp: np.ndarray, ext: np.ndarray, skip: np.ndarray, in_len: np.ndarray,
             tgt_len: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log_alpha (T, N, S'), the negative log likelihood (N,) and the per-position log-probs (T, N, S')."""
    t_max, n, _ = lp.shape
    s_ext = ext.shape[1]
    valid = np.arange(s_ext)[None, :] < (2 * tgt_len[:, None] + 1)
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (t_max, n, s_ext)), 2)  # (T, N, S')
    lpe = np.where(valid[None], lpe, _NEG_INF)
    alpha = np.full((t_max, n, s_ext), _NEG_INF)
    if t_max:
        alpha[0, :, 0] = lpe[0, :, 0]
        if s_ext > 1:
            alpha[0, :, 1] = np.where(tgt_len > 0, lpe[0, :, 1], _NEG_INF)
    neg = np.full((n, 1), _NEG_INF)
    for t in range(1, t_max):
        prev = alpha[t - 1]
        s1 = np.concatenate([neg, prev[:, :-1]], 1)
        s2 = np.concatenate([neg, neg, prev[:, :-2]], 1)[:, :s_ext]
        s2 = np.where(skip, s2, _NEG_INF)
        alpha[t] = np.where(t < in_len[:, None], lpe[t] + _lse(prev, s1, s2), _NEG_INF)
    idx = np.arange(n)
    last = np.maximum(in_len - 1, 0)
    end = alpha[last, idx, 2 * tgt_len]
    end1 = np.where(tgt_len > 0, alpha[last, idx, np.maximum(2 * tgt_len - 1, 0)], _NEG_INF)
    nll = -_lse(end, end1)
    return alpha, nll, lpe


def _backward(lp: np.ndarray, lpe: np.ndarray, ext: np.ndarray, skip: np.ndarray, in_len: np.ndarray,
              tgt_len: np.ndarray, alpha: np.ndarray, nll: np.ndarray, grad_out: np.ndarray, zero_infinity: bool,
              num_classes: int) -> np.ndarray:
    t_max, n, s_ext = lpe.shape
    beta = np.full((t_max, n, s_ext), _NEG_INF)
    idx = np.arange(n)
    neg = np.full((n, 1), _NEG_INF)
    skip_next = np.concatenate([skip[:, 2:], np.zeros((n, 2), dtype=bool)], 1)  # may s+2 skip back to s
    for t in range(t_max - 1, -1, -1):
        start = np.full((n, s_ext), _NEG_INF)
        start[idx, 2 * tgt_len] = lpe[t, idx, 2 * tgt_len]
        has = tgt_len > 0
        s_last = np.maximum(2 * tgt_len - 1, 0)
        start[idx[has], s_last[has]] = lpe[t, idx[has], s_last[has]]
        if t + 1 < t_max:
            nxt = beta[t + 1]
            s1 = np.concatenate([nxt[:, 1:], neg], 1)
            s2 = np.where(skip_next, np.concatenate([nxt[:, 2:], neg, neg], 1), _NEG_INF)
            rec = lpe[t] + _lse(nxt, s1, s2)
        else:
            rec = start
        beta[t] = np.where((t == in_len - 1)[:, None], start, np.where((t < in_len - 1)[:, None], rec, _NEG_INF))
    ab = alpha + beta  # (T, N, S')
    m = ab.max(2, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    onehot = np.zeros((n, s_ext, num_classes))
    onehot[idx[:, None], np.arange(s_ext)[None, :], ext] = 1.0
    valid = np.arange(s_ext)[None, :] < (2 * tgt_len[:, None] + 1)
    onehot *= valid[:, :, None]
    summed = np.einsum("tns,nsc->tnc", np.exp(ab - m), onehot)
    with np.errstate(divide="ignore"):
        lcab = np.log(summed) + m
    with np.errstate(over="ignore", invalid="ignore"):
        grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    grad = grad * grad_out[None, :, None]
    live = np.arange(t_max)[:, None] < in_len[None, :]
    if zero_infinity:
        live = live & np.isfinite(nll)[None, :]
    return np.where(live[:, :, None], grad, 0.0)


def _lengths(x: Any, n: int, name: str) -> np.ndarray:
    arr = np.asarray(x.detach().cpu().numpy() if isinstance(x, Tensor) else x, dtype=np.int64).reshape(-1)
    if arr.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


def _padded_targets(targets: Tensor, tgt_len: np.ndarray, n: int) -> np.ndarray:
    t = targets.detach().cpu().numpy().astype(np.int64)
    smax = int(tgt_len.max()) if n else 0
    if t.ndim == 1:
        # Concatenated targets: row b is the next target_lengths[b] entries.
        out = np.zeros((n, smax), dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(tgt_len)[:-1]])
        if tgt_len.sum() > t.shape[0]:
            raise RuntimeError(f"Expected tensor to have size at least {int(tgt_len.sum())} at dimension 0, but got "
                               f"size {t.shape[0]} for argument #2 'targets' (while checking arguments for "
                               f"ctc_loss_cpu)")
        cols = np.arange(smax)[None, :]
        take = cols < tgt_len[:, None]
        src = np.where(take, offsets[:, None] + cols, 0)
        out = np.where(take, t[src] if t.size else 0, 0)
        return out
    if t.shape[1] < smax:
        raise RuntimeError(f"Expected tensor to have size at least {smax} at dimension 1, but got size {t.shape[1]} "
                           f"for argument #2 'targets' (while checking arguments for ctc_loss_cpu)")
    return t[:, :smax]


@functools.cache
def _ctc_function() -> Any:
    """The autograd Function (built once, on first use, as the autograd plugin may be absent)."""
    from torchplug.autograd import Function

    class CtcLossFunction(Function):
        @staticmethod
        def forward(ctx: Any, lp_t: Tensor, targets: np.ndarray, in_len: np.ndarray, tgt_len: np.ndarray,
                    blank: int, zero_infinity: bool) -> Tensor:
            nll, saved = _nll_numpy(lp_t, targets, in_len, tgt_len, blank)
            ctx.saved = saved + (in_len, tgt_len, zero_infinity)
            ctx.meta = (lp_t.dtype, lp_t.device)
            return nll

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> Any:
            lp, lpe, ext, skip, alpha, nll, in_len, tgt_len, zero_infinity = ctx.saved
            g = _backward(lp, lpe, ext, skip, in_len, tgt_len, alpha, nll,
                          grad.detach().cpu().numpy().astype(np.float64), zero_infinity, lp.shape[2])
            dtype, device = ctx.meta
            return torchplug.from_numpy(g).to(dtype=dtype, device=device), None, None, None, None, None

    return CtcLossFunction


def _nll_numpy(lp_t: Tensor, targets: np.ndarray, in_len: np.ndarray, tgt_len: np.ndarray,
               blank: int) -> tuple[Tensor, tuple]:
    lp = lp_t.detach().cpu().numpy().astype(np.float64)
    ext, skip = _extended(targets, tgt_len, blank)
    alpha, nll, lpe = _forward(lp, ext, skip, in_len, tgt_len)
    out = torchplug.from_numpy(nll).to(dtype=lp_t.dtype, device=lp_t.device)
    return out, (lp, lpe, ext, skip, alpha, nll)


def _nll(log_probs: Tensor, targets: np.ndarray, in_len: np.ndarray, tgt_len: np.ndarray, blank: int,
         zero_infinity: bool) -> Tensor:
    if not _grad.autograd_available():
        return _nll_numpy(log_probs, targets, in_len, tgt_len, blank)[0]
    return _ctc_function().apply(log_probs, targets, in_len, tgt_len, blank, zero_infinity)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss over (T, N, C) or (T, C) log-probabilities."""
    enum = _reduction_enum(reduction)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"ctc_loss(): expected log_probs to be 2D (unbatched) or 3D (batched), but got "
                           f"{log_probs.dim()}D")
    t_max, n, c = log_probs.shape
    if blank < 0 or blank >= c:
        raise RuntimeError("blank must be in label range")
    in_len = _lengths(input_lengths, n, "input_lengths")
    tgt_len = _lengths(target_lengths, n, "target_lengths")
    for b in range(n):
        if in_len[b] > t_max or in_len[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got value {in_len[b]} "
                               f"(while checking arguments for ctc_loss_cpu)")
    tg = _padded_targets(targets, tgt_len, n)
    nll = _nll(log_probs, tg, in_len, tgt_len, blank, zero_infinity)
    if zero_infinity:
        nll = torchplug.where(nll == float("inf"), torchplug.zeros_like(nll), nll)
    if enum == 1:
        lengths = torchplug.tensor(tgt_len.tolist(), dtype=nll.dtype, device=nll.device).clamp_min(1)
        return (nll / lengths).mean()
    if enum == 2:
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
