"""Python bindings for complex numbers: ``conj``/``resolve_conj``/``is_conj``, ``real``/``imag``, ``view_as_real``...

``conj()`` of a complex tensor is a lazy conjugate view (the conjugate bit, see
``torchplug._tensor.math_bits``); of any other tensor it is the tensor itself, as in PyTorch.
``x.conj().imag`` is a lazily negated view of ``x``'s imaginary part (the negative bit).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from torchplug._dispatch.aten import A
from torchplug._tensor.math_bits import CONJ_MASK, NEG_MASK, VIEW_AS_REAL_CONJ_MESSAGE, resolve_conj as _resolve_conj
from torchplug._tensor.math_bits import resolve_neg as _resolve_neg
from torchplug._tensor.tensor import Tensor

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

HANDWRITTEN = {"view_as_real", "view_as_complex", "conj_physical"}


def _not_tensor(name: str, value: Any) -> TypeError:
    return TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}")


def conj(input: Tensor) -> Tensor:
    """The complex conjugate as a lazy view (``is_conj()`` True); non-complex tensors are returned as is."""
    if not isinstance(input, Tensor):
        raise _not_tensor("conj", input)
    return A._conj(input) if input._dtype.is_complex else input


def is_conj(input: Tensor) -> bool:
    """True if ``input`` is a lazily conjugated view whose values are not yet materialised."""
    if not isinstance(input, Tensor):
        raise _not_tensor("is_conj", input)
    return bool(input._keyset & CONJ_MASK)


def resolve_conj(input: Tensor) -> Tensor:
    """``input`` if its conjugate bit is clear, else a new tensor with the conjugated values."""
    if not isinstance(input, Tensor):
        raise _not_tensor("resolve_conj", input)
    return _resolve_conj(input)


def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex conjugate computed eagerly into a new tensor (``input`` itself for non-complex dtypes)."""
    if not isinstance(input, Tensor):
        raise _not_tensor("conj_physical", input)
    if out is not None:
        return A["conj_physical.out"](input, out=out)
    return A.conj_physical(input) if input._dtype.is_complex else input


def _conj_physical_(self: Tensor) -> Tensor:
    return A.conj_physical_(self) if self._dtype.is_complex else self


def is_neg(input: Tensor) -> bool:
    """True if ``input`` is a lazily negated view (``x.conj().imag``) whose values are not yet materialised."""
    if not isinstance(input, Tensor):
        raise _not_tensor("is_neg", input)
    return bool(input._keyset & NEG_MASK)


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` if its negative bit is clear, else a new tensor with the negated values."""
    if not isinstance(input, Tensor):
        raise _not_tensor("resolve_neg", input)
    return _resolve_neg(input)


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor viewed as real, with a trailing dimension of 2 holding (real, imaginary)."""
    if not isinstance(input, Tensor):
        raise _not_tensor("view_as_real", input)
    if input._keyset & CONJ_MASK:
        raise RuntimeError(VIEW_AS_REAL_CONJ_MESSAGE)
    return A.view_as_real(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dimension (size 2, stride 1) holds (real, imaginary) viewed as complex."""
    if not isinstance(input, Tensor):
        raise _not_tensor("view_as_complex", input)
    return A.view_as_complex(input)


def real(input: Tensor) -> Tensor:
    """The real part as a view sharing storage (writes reach ``input``); real tensors are returned as is."""
    if not isinstance(input, Tensor):
        raise _not_tensor("real", input)
    if not input._dtype.is_complex:
        return input
    plain = A._conj(input) if input._keyset & CONJ_MASK else input  # conjugation keeps the real part
    return A.select(A.view_as_real(plain), -1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part as a view sharing storage (of a conjugate view: a negated view, ``is_neg()``)."""
    if not isinstance(input, Tensor):
        raise _not_tensor("imag", input)
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if input._keyset & CONJ_MASK:
        return A._neg_view(A.select(A.view_as_real(A._conj(input)), -1, 1))
    return A.select(A.view_as_real(input), -1, 1)


def _set_real(self: Tensor, value: Any) -> None:
    _copy_into(real(self), value)


def _set_imag(self: Tensor, value: Any) -> None:
    _copy_into(imag(self), value)


def _copy_into(target: Tensor, value: Any) -> None:
    if isinstance(value, Tensor):
        A.copy_(target, value)
    else:
        A["fill_.Scalar"](target, value)


def abs_(input: Tensor) -> Tensor:
    """``Tensor.abs_``: refused for complex tensors, whose absolute value is real, as in PyTorch
    (``torch.abs_`` calls this method)."""
    if input._dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return A.abs_(input)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions, as a view."""
    if not isinstance(input, Tensor):
        raise _not_tensor("adjoint", input)
    n = input.dim()
    if n == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return conj(A.alias(input))
    if n < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return conj(A.transpose(input, -2, -1))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "conj": conj, "is_conj": is_conj, "resolve_conj": resolve_conj, "conj_physical": conj_physical,
    "is_neg": is_neg, "resolve_neg": resolve_neg, "view_as_real": view_as_real, "view_as_complex": view_as_complex,
    "real": real, "imag": imag, "adjoint": adjoint,
}

METHODS: dict[str, Any] = {
    "conj": conj, "is_conj": is_conj, "resolve_conj": resolve_conj,
    "conj_physical": lambda self: conj_physical(self), "conj_physical_": _conj_physical_,
    "is_neg": is_neg, "resolve_neg": resolve_neg, "adjoint": adjoint, "abs_": abs_, "absolute_": abs_,
    "real": property(real, _set_real, doc="The real part, a view sharing storage (settable)."),
    "imag": property(imag, _set_imag, doc="The imaginary part, a view sharing storage (settable)."),
}
