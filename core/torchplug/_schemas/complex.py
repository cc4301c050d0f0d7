"""Complex-number rows: the conjugate bit, real/complex views, and the complex constructors."""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    # A view of ``self`` with the conjugate bit flipped (PyTorch's ``_conj``; ``Tensor.conj()`` calls it).
    "_conj(Tensor(a) self) -> Tensor(a) | view",
    # A view of ``self`` with the negative bit flipped (``x.conj().imag`` is one, as in PyTorch).
    "_neg_view(Tensor(a) self) -> Tensor(a) | view",
    "conj_physical(Tensor self) -> Tensor | inplace out pointwise",
    # ``self`` (complex) as a real tensor with a trailing dimension of 2, and back.
    "view_as_real(Tensor(a) self) -> Tensor(a) | view",
    "view_as_complex(Tensor(a) self) -> Tensor(a) | view",
    "angle(Tensor self) -> Tensor | out pointwise",
    "polar(Tensor abs, Tensor angle) -> Tensor | out",
    "complex(Tensor real, Tensor imag) -> Tensor | out",
)
