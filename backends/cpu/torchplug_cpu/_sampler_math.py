"""Host math for the reparameterisation gradients of gamma and Dirichlet samples (NumPy + scipy.special).

``gamma_grad(alpha, x)`` is dx/dalpha for x ~ Gamma(alpha, 1); ``beta_grad(x, alpha, total)`` is ATen's
``dirichlet_grad_one``: dx/dalpha / (1 - x) for x ~ Beta(alpha, total - alpha) with ``total - alpha`` held
fixed.  Both by implicit differentiation of the CDF, dx/dalpha = -(dF/dalpha) / pdf(x), from the series
forms of the regularized incomplete gamma and beta functions.  ATen evaluates them with fitted
approximations; these agree with its values to its approximation error (about 1e-3 relative at worst).

A host module, not a kernel module: the cuda backend re-executes ``kernels/`` for device arrays, and this
math stays on NumPy and SciPy there too (the kernels copy the operands to the host, as ``poisson`` does).
"""

from __future__ import annotations

import numpy as np
from scipy import special as sp

__all__ = ["gamma_grad", "beta_grad"]


def _dlog_c(fn, c: np.ndarray) -> np.ndarray:
    """d/dc log fn(c) by a central difference (fn is smooth and positive in c)."""
    h = 1e-6 * np.maximum(np.abs(c), 1.0)
    return (np.log(fn(c + h)) - np.log(fn(c - h))) / (2 * h)


def gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha of a Gamma(alpha, 1) sample x (float64 arrays of one shape)."""
    out = np.zeros(np.broadcast(alpha, x).shape)
    alpha, x = np.broadcast_to(alpha, out.shape), np.broadcast_to(x, out.shape)
    with np.errstate(all="ignore"):
        # lower tail: P(a, x) = x^a e^-x / Gamma(a + 1) * M(1, a + 1, x), so P / pdf = x M / a and
        # d log P / da = log x - digamma(a + 1) + d log M / da
        low = x <= alpha + 30
        a, xl = alpha[low], x[low]
        m = sp.hyp1f1(1.0, a + 1, xl)
        dlog = np.log(xl) - sp.digamma(a + 1) + _dlog_c(lambda c: sp.hyp1f1(1.0, c + 1, xl), a)
        out[low] = -(xl * m / a) * dlog
        # upper tail: dP/da = -dQ/da, Q = gammaincc
        high = ~low
        a, xh = alpha[high], x[high]
        h = 1e-6 * np.maximum(a, 1.0)
        dq = (sp.gammaincc(a + h, xh) - sp.gammaincc(a - h, xh)) / (2 * h)
        pdf = np.exp((a - 1) * np.log(xh) - xh - sp.gammaln(a))
        out[high] = dq / pdf
    return np.where(np.isfinite(out), out, 0.0)  # ATen's series also answers 0 where it overflows


def beta_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """ATen's ``dirichlet_grad_one``: dx/dalpha of a Beta(alpha, beta = total - alpha) sample x with beta held
    fixed, divided by (1 - x) (the Dirichlet backward multiplies by the simplex factor itself)."""
    shape = np.broadcast(x, alpha, total).shape
    x, alpha, total = (np.broadcast_to(v, shape) for v in (x, alpha, total))
    out = np.zeros(shape)
    with np.errstate(all="ignore"):
        # I_x(a, b) = x^a (1-x)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; x), so I / pdf = x (1-x) F / a and
        # d log I / da = log x - 1/a - digamma(a) + digamma(a + b) + d log F / da (a enters two parameters)
        low = x <= 0.5
        xl, a, t = x[low], alpha[low], total[low]
        b = t - a
        f = sp.hyp2f1(t, 1.0, a + 1, xl)
        dlog = (np.log(xl) - 1 / a - sp.digamma(a) + sp.digamma(t)
                + _dlog_c(lambda c: sp.hyp2f1(c + b, 1.0, c + 1, xl), a))
        out[low] = -(xl * f / a) * dlog
        # x > 1/2: I_x(a, b) = 1 - I_y(b, a) with y = 1 - x, the same series in y
        high = ~low
        xh, a, t = x[high], alpha[high], total[high]
        b, y = t - a, 1 - x[high]
        f = sp.hyp2f1(t, 1.0, b + 1, y)
        dlog = np.log(xh) - sp.digamma(a) + sp.digamma(t) + _dlog_c(lambda c: sp.hyp2f1(c + b, 1.0, b + 1, y), a)
        out[high] = (xh * f / b) * dlog
    return np.where(np.isfinite(out), out, 0.0)
