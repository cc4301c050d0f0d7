"""Pointwise math rows beyond the foundation: special functions, sign/rounding helpers, binary math."""

from __future__ import annotations

__all__ = ["ROWS"]

# Unary ops whose integer/bool inputs compute in the default float dtype.
_UNARY_FLOAT = "erf erfc erfinv lgamma digamma deg2rad rad2deg sinc"

ROWS = (
    # ---- unary --------------------------------------------------------------------------------
    *(f"{name}(Tensor self) -> Tensor | inplace out pointwise" for name in _UNARY_FLOAT.split()),
    "sgn(Tensor self) -> Tensor | inplace out pointwise",
    "logit(Tensor self, float? eps=None) -> Tensor | inplace out pointwise",
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor | inplace out pointwise",
    "signbit(Tensor self) -> Tensor | out pointwise",
    "isposinf(Tensor self) -> Tensor | out pointwise",
    "isneginf(Tensor self) -> Tensor | out pointwise",
    "positive(Tensor self) -> Tensor | composite",
    # ---- binary ---------------------------------------------------------------------------------
    "hypot(Tensor self, Tensor other) -> Tensor | inplace out pointwise",
    "logaddexp(Tensor self, Tensor other) -> Tensor | out pointwise",
    "logaddexp2(Tensor self, Tensor other) -> Tensor | out pointwise",
    "xlogy.Tensor(Tensor self, Tensor other) -> Tensor | wrapped inplace out pointwise",
    "copysign.Tensor(Tensor self, Tensor other) -> Tensor | wrapped inplace out pointwise",
    "heaviside(Tensor self, Tensor values) -> Tensor | inplace out pointwise",
    # float_power_ needs its own dtype check (self must already be double): a hand-written method
    "float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor | wrapped out pointwise composite",
    "clamp_min(Tensor self, Tensor min) -> Tensor | wrapped inplace out pointwise composite",
    "clamp_max(Tensor self, Tensor max) -> Tensor | wrapped inplace out pointwise composite",
    # ATen's Scalar overloads, called only by composites: PyTorch's C++ add(x, eps) records AddBackward1 with one
    # edge where Python's x + eps records AddBackward0 with two (torchplug.add/mul bind the Tensor overloads)
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor | pointwise composite",
    "mul.Scalar(Tensor self, Scalar other) -> Tensor | pointwise composite",
    "div.Scalar(Tensor self, Scalar other) -> Tensor | pointwise composite",
    # ---- comparisons ------------------------------------------------------------------------------
    "isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor | composite",
    "allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool | composite",
    "equal(Tensor self, Tensor other) -> bool | composite",
)
