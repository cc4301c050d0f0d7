"""Rows for special functions real scripts call by their top-level name: ``i0``, ``polygamma``, ``frexp``
(backend primitives) and ``special_i1`` (i0's derivative; not published as a torch function).

The rest of that surface (mvlgamma, window functions, lu, histogram, matrix_exp...) is written as
Python compositions in ``_pyfuncs/surface.py``.
"""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    "i0(Tensor self) -> Tensor | inplace out pointwise",
    "special_i1(Tensor self) -> Tensor | out pointwise",
    "polygamma(int n, Tensor self) -> Tensor | out pointwise",
    "frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent) | pointwise",
)
