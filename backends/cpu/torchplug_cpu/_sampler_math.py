"""Host math for the reparameterisation gradients of gamma and Dirichlet samples (NumPy + scipy.special).

``gamma_grad(alpha, x)`` is dx/dalpha for x ~ Gamma(alpha, 1); ``beta_grad(x, alpha, total)`` is ATen's
``dirichlet_grad_one``: dx/dalpha / (1 - x) for x ~ Beta(alpha, total - alpha) with ``total - alpha`` held
fixed.  Both by implicit differentiation of the CDF, dx/dalpha = -(dF/dalpha) / pdf(x): dF/dalpha from the
series form of the regularized incomplete gamma function, and from central differences of the regularized
incomplete beta function.  ATen evaluates them with fitted
approximations; these agree with its values to its approximation error (about 1e-3 relative at worst).

A host module, not a kernel module: the cuda backend re-executes ``kernels/`` for device arrays, and this
math stays on NumPy and SciPy there too (the kernels copy the operands to the host, as ``poisson`` does).
"""

from __future__ import annotations

import numpy as np

from ._common import lazy_import

__all__ = ["gamma_grad", "beta_grad"]

sp = lazy_import(globals(), "sp", "scipy", "special")  # scipy.special, imported on first use


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
    x, a, t = (np.broadcast_to(v, shape).astype(np.float64) for v in (x, alpha, total))
    b = t - a
    with np.errstate(all="ignore"):
        # dI_x(a, b)/da by a central difference of the regularized incomplete beta function (its continued
        # fraction stays accurate for large a and b, where the hypergeometric series loses all digits); the
        # step stays well inside a > 0
        h = np.minimum(1e-5 * np.maximum(a, 1.0), a / 4)
        d_cdf = (sp.betainc(a + h, b, x) - sp.betainc(a - h, b, x)) / (2 * h)
        log_pdf = (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - sp.betaln(a, b)
        # -d_cdf / pdf / (1 - x), through logarithms: d_cdf and pdf may both be tiny
        out = -np.sign(d_cdf) * np.exp(np.log(np.abs(d_cdf)) - log_pdf - np.log1p(-x))
    return np.where(np.isfinite(out), out, 0.0)
