"""Derivative formulas of the FFT primitives (``_schemas/fft.py``), as derivatives.yaml and
FunctionsManual.cpp (``fft_r2c_backward``, ``fft_c2r_backward``) write them.  Each transform is linear, so its
gradient is the adjoint transform with the same normalization."""

from __future__ import annotations

import torchplug as T

from ._rules import rule

__all__: list[str] = []


@rule("_fft_c2c", saves="dim, normalization, forward")
def fft_c2c(n, g, dim, normalization, forward):
    return (T.ops.aten._fft_c2c(g, dim, normalization, not forward),)


@rule("_fft_r2c", saves="dim, normalization, onesided, self.shape")
def fft_r2c(n, g, dim, normalization, onesided, shape):
    # a onesided r2c is a c2c of the (real) input followed by dropping the upper half: its adjoint pads
    # the gradient back to full length with zeros, runs the inverse c2c and keeps the real part
    last = dim[-1]
    full = shape[last]
    if onesided and full > g.shape[last]:
        pad = [0] * (2 * g.dim())
        pad[len(pad) - 2 * last - 1] = full - g.shape[last]
        g = T.ops.aten.constant_pad_nd(g, pad)
    return (T.real(T.ops.aten._fft_c2c(g, dim, normalization, False)),)


@rule("_fft_c2r", saves="dim, normalization")
def fft_c2r(n, g, dim, normalization):
    # c2r fills the upper half by conjugate symmetry: the onesided r2c of the gradient, with the entries
    # whose mirror image lies outside the onesided range (1 .. n - (n // 2 + 1)) counted twice
    gi = T.ops.aten._fft_r2c(g, dim, normalization, True)
    last = dim[-1]
    doubled = g.shape[last] - gi.shape[last]
    if doubled > 0:
        rest = gi.shape[last] - 1 - doubled
        gi = T.cat([gi.narrow(last, 0, 1), gi.narrow(last, 1, doubled) * 2, gi.narrow(last, 1 + doubled, rest)], last)
    return (gi,)
