"""``torchplug.special``: PyTorch's special-function namespace.

Functions PyTorch also publishes at the top level (``erf``, ``digamma``, ``igamma`` as ``gammainc``...) are
those same ops; the rest are the ``special_*`` aten primitives of ``_schemas/special.py`` (cpu kernels on
``scipy.special``), with ``ndtr`` a composite over ``erf`` as in PyTorch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from torchplug._dispatch.aten import A
from torchplug._ops.surface import FUNCTIONS
from torchplug._dispatch.codegen import build_entry
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._tensor.tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
    "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
    "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def _published(op: str) -> Callable[..., Any]:
    """The generated entry point of ``aten::<op>`` as a Python function with ``out=`` (``input`` first)."""
    entry = DISPATCHER.entry(f"aten::{op}")
    out_entry = DISPATCHER.entry(f"aten::{op}.out")
    name = op.removeprefix("special_")
    return build_entry(entry, display=op, first_name="input", out_entry=out_entry, func_name=name)


# ---- the special_* primitives ----------------------------------------------------------------------------
airy_ai = _published("special_airy_ai")
bessel_j0 = _published("special_bessel_j0")
bessel_j1 = _published("special_bessel_j1")
bessel_y0 = _published("special_bessel_y0")
bessel_y1 = _published("special_bessel_y1")
modified_bessel_i0 = _published("special_modified_bessel_i0")
modified_bessel_i1 = _published("special_modified_bessel_i1")
modified_bessel_k0 = _published("special_modified_bessel_k0")
modified_bessel_k1 = _published("special_modified_bessel_k1")
scaled_modified_bessel_k0 = _published("special_scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _published("special_scaled_modified_bessel_k1")
spherical_bessel_j0 = _published("special_spherical_bessel_j0")
entr = _published("special_entr")
erfcx = _published("special_erfcx")
i0e = _published("special_i0e")
i1 = _published("special_i1")
i1e = _published("special_i1e")
log_ndtr = _published("special_log_ndtr")
ndtri = _published("special_ndtri")
xlog1py = _published("special_xlog1py")
zeta = _published("special_zeta")
chebyshev_polynomial_t = _published("special_chebyshev_polynomial_t")
chebyshev_polynomial_u = _published("special_chebyshev_polynomial_u")
chebyshev_polynomial_v = _published("special_chebyshev_polynomial_v")
chebyshev_polynomial_w = _published("special_chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _published("special_shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _published("special_shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _published("special_shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _published("special_shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _published("special_hermite_polynomial_h")
hermite_polynomial_he = _published("special_hermite_polynomial_he")
laguerre_polynomial_l = _published("special_laguerre_polynomial_l")
legendre_polynomial_p = _published("special_legendre_polynomial_p")

# ---- the same ops as torchplug.<name> --------------------------------------------------------------------
digamma = psi = FUNCTIONS["digamma"]
erf = FUNCTIONS["erf"]
erfc = FUNCTIONS["erfc"]
erfinv = FUNCTIONS["erfinv"]
exp2 = FUNCTIONS["exp2"]
expit = FUNCTIONS["sigmoid"]
expm1 = FUNCTIONS["expm1"]
gammainc = FUNCTIONS["igamma"]
gammaincc = FUNCTIONS["igammac"]
gammaln = FUNCTIONS["lgamma"]
i0 = FUNCTIONS["i0"]
log1p = FUNCTIONS["log1p"]
logit = FUNCTIONS["logit"]
logsumexp = FUNCTIONS["logsumexp"]
round = FUNCTIONS["round"]  # noqa: A001  (torch.special.round)
sinc = FUNCTIONS["sinc"]
xlogy = FUNCTIONS["xlogy"]


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of the digamma function (``torchplug.polygamma``)."""
    return FUNCTIONS["polygamma"](n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (``torchplug.mvlgamma``)."""
    return FUNCTIONS["mvlgamma"](input, p, out=out)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """``log(softmax(input, dim))``, computed in ``dtype`` if given (``torchplug.log_softmax``)."""
    return FUNCTIONS["log_softmax"](input, dim, dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """The softmax of ``input`` along ``dim``, computed in ``dtype`` if given (``torchplug.softmax``)."""
    return FUNCTIONS["softmax"](input, dim, dtype=dtype)


def ndtr(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The standard normal cumulative distribution function, ``(1 + erf(x / sqrt(2))) / 2``: a composite over
    ``erf`` as PyTorch's (so its gradient is erf's, and float16/bfloat16 work)."""
    result = A["mul.Scalar"](A["add.Scalar"](A.erf(A["mul.Scalar"](input, math.sqrt(0.5))), 1), 0.5)
    if out is None:
        return result
    from torchplug._ops.composites import check_castable, resize_output

    check_castable(result.dtype, out.dtype)
    resize_output(out, result.shape)
    return A.copy_(out, result)

