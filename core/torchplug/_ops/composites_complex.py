"""Complex-number composites, written once for every backend: the real/complex views, the constructors,
``angle``, ``conj_physical`` and complex random fills.

They are built over ``view.dtype``, ``select``, ``clone`` and pointwise ops, so any backend with the
primitive set runs them.  The lazy conjugate/negative views (``conj()``, ``x.conj().imag``) are in
``torchplug._tensor.math_bits``; their flip ops are registered here with the other composites.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import _broadcast_shapes, scalar_type_name
from torchplug._tensor.math_bits import CONJ_MASK, VIEW_AS_REAL_CONJ_MESSAGE, conj_kernel, neg_view_kernel
from torchplug._tensor.tensor import Tensor

__all__ = ["COMPOSITES", "complex_random", "angle"]


def complex_random(self: Tensor, fill: Callable[..., Any], *args: Any) -> Tensor:
    """A backend's random fill of a complex tensor, as ATen does it: ``fill`` (the backend's real kernel)
    draws into ``view_as_real(self)``, so the real and imaginary parts interleave in the stream."""
    fill(A.view_as_real(self), *args)
    return self


# ---- composites -----------------------------------------------------------------------------------
def conj_physical(self: Tensor) -> Tensor:
    """A new tensor holding the complex conjugate (a copy for real dtypes)."""
    out = A.clone(self)
    if self._dtype.is_complex:
        A.neg_(A.select(A.view_as_real(out), -1, 1))
    return out


def view_as_real(self: Tensor) -> Tensor:
    """``self`` (complex) viewed as real with a trailing dimension of size 2 (real, imaginary)."""
    if not self._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if self._keyset & CONJ_MASK:
        raise RuntimeError(VIEW_AS_REAL_CONJ_MESSAGE)
    # A trailing size-1 dim has stride 1, so the half-size dtype view doubles it to (re, im).
    return A["view.dtype"](A.unsqueeze(self, -1), self._dtype.to_real())


def _complex_of(dtype: D.dtype, what: str) -> D.dtype:
    if dtype is D.float16:
        raise RuntimeError(
            f"{what}: torchplug has no complex32 (ComplexHalf) dtype, which half inputs would give. "
            "Convert the inputs to float32 or float64 first."
        )
    return dtype.to_complex()


def view_as_complex(self: Tensor) -> Tensor:
    """``self`` (real, last dimension of size 2 with stride 1) viewed as complex numbers."""
    if self._dtype not in (D.float16, D.float32, D.float64):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: "
            f"{scalar_type_name(self._dtype)}"
        )
    shape = self.shape
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = self.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    cdtype = _complex_of(self._dtype, "view_as_complex")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return A.squeeze(A["view.dtype"](self, cdtype), [-1])


def _check_parts(real: Tensor, imag: Tensor, name: str) -> D.dtype:
    """PyTorch's checks of ``complex``/``polar`` inputs; the complex result dtype."""
    floating = (D.float16, D.float32, D.float64)
    if real._dtype not in floating or imag._dtype not in floating:
        raise RuntimeError(
            f"Expected both inputs to be Half, Float or Double tensors but got {scalar_type_name(real._dtype)} and "
            f"{scalar_type_name(imag._dtype)}"
        )
    if real._dtype is not imag._dtype:
        raise RuntimeError(
            f"Expected object of scalar type {scalar_type_name(real._dtype)} but got scalar type "
            f"{scalar_type_name(imag._dtype)} for second argument"
        )
    return _complex_of(real._dtype, name)


def _from_parts(re: Tensor, im: Tensor, cdtype: D.dtype) -> Tensor:
    _broadcast_shapes(re.shape, im.shape)  # PyTorch's broadcast error first
    # The result's layout is the one a binary pointwise op gives these inputs (PyTorch's TensorIterator).
    layout = A.add(re, im)
    out = A.empty_strided(list(layout.shape), list(layout.stride()), dtype=cdtype, device=re.device)
    pair = A.view_as_real(out)
    A.copy_(A.select(pair, -1, 0), re)
    A.copy_(A.select(pair, -1, 1), im)
    return out


def complex_(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor ``real + imag * 1j`` (broadcast)."""
    return _from_parts(real, imag, _check_parts(real, imag, "complex"))


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """The complex tensor ``abs * (cos(angle) + 1j * sin(angle))`` (broadcast)."""
    cdtype = _check_parts(abs, angle, "polar")
    return _from_parts(A.mul(abs, A.cos(angle)), A.mul(abs, A.sin(angle)), cdtype)


def angle(self: Tensor) -> Tensor:
    """Elementwise argument: ``atan2(imag, real)`` for complex, ``pi`` for negative reals, else 0 (NaN kept)."""
    if self._dtype.is_complex:
        pair = A.view_as_real(self)
        return A.atan2(A.select(pair, -1, 1), A.select(pair, -1, 0))
    x = self if self._dtype.is_floating_point else A._to_copy(self, dtype=D.get_default_dtype())
    zeros = A.zeros(list(x.shape), dtype=x.dtype, device=x.device)
    return A["where.self"](A.isnan(x), x, A["masked_fill.Scalar"](zeros, A.lt(x, 0), math.pi))


COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "_conj": ("CompositeExplicitAutograd", conj_kernel),
    "_neg_view": ("CompositeExplicitAutograd", neg_view_kernel),
    "conj_physical": ("CompositeExplicitAutograd", conj_physical),
    "view_as_real": ("CompositeExplicitAutograd", view_as_real),
    "view_as_complex": ("CompositeExplicitAutograd", view_as_complex),
    "complex": ("CompositeExplicitAutograd", complex_),
    "polar": ("CompositeExplicitAutograd", polar),
    "angle": ("CompositeExplicitAutograd", angle),
}
