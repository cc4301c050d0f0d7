"""``torchplug.special``'s own primitives: the special functions PyTorch has only under ``torch.special``
(Bessel and Airy functions, the orthogonal polynomials, the scaled/normal-distribution functions, the
Hurwitz zeta).  The rest of ``torchplug.special`` reuses top-level ops (erf, digamma, igamma...).
"""

from __future__ import annotations

__all__ = ["ROWS", "UNARY", "BINARY", "POLYNOMIALS"]

UNARY = (
    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 "
    "modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 entr erfcx i0e i1e "
    "log_ndtr ndtri"
).split()
BINARY = ("xlog1py", "zeta")
POLYNOMIALS = (
    "chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
    "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l "
    "legendre_polynomial_p"
).split()

ROWS = (
    *(f"special_{name}(Tensor self) -> Tensor | out pointwise" for name in UNARY),
    # torch's Scalar overloads (self_scalar/other_scalar, x_scalar/n_scalar) are the wrapped numbers here
    *(f"special_{name}(Tensor self, Tensor other) -> Tensor | wrapped out pointwise" for name in BINARY),
    # n is a tensor of degrees, truncated to integers (a negative degree gives 0)
    *(f"special_{name}(Tensor x, Tensor n) -> Tensor | wrapped out pointwise" for name in POLYNOMIALS),
)
