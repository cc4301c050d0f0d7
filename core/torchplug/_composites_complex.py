"""Complex-number composites (backend-generic) and the conjugate bit's fallback.

``x.conj()`` of a complex tensor is a *view* with the conjugate bit set, as in PyTorch: it
shares ``x``'s storage and a write through it stores the conjugate of the written value in
``x``.  The bit is the ``Conjugate`` dispatch key in the tensor's own key set, the highest key,
so a conjugated tensor reaching any op goes through :func:`conjugate_fallback` first, which
(like PyTorch's MathBitsFallback):

- passes ``_conj`` (the op that flips the bit) straight through;
- for a view op, takes the view of the unconjugated alias and flips the bit back on the result
  (views of a conjugate view are conjugate views, writes through them still reach the base);
- for an op writing to a conjugated tensor, runs it on a resolved copy and stores the
  conjugate of the outcome back through the unconjugated alias;
- for every other op, resolves (materialises) the conjugated inputs and calls the op on them.

Every step dispatches normally, so autograd records ``_conj``/``conj_physical`` (whose gradients
conjugate) and gradients flow through conjugate views.  Backends never see the bit.

The negative bit (the ``Negative`` key, flipped by ``_neg_view``) works the same way with ``neg``
for the conjugation: ``x.conj().imag`` is such a view of ``x``'s imaginary part, as in PyTorch.

The views and constructors (``view_as_real``, ``view_as_complex``, ``complex``, ``polar``,
``angle``, ``conj_physical``) are written over ``view.dtype``, ``select`` and pointwise ops, so
any backend with the primitive set runs them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import _dtype as D
from ._aten import A
from ._composites import _broadcast_shapes, scalar_type_name
from ._dispatch import keys as K
from ._dispatch.tls import tls
from ._tensor import Tensor

__all__ = ["COMPOSITES", "CONJ_MASK", "NEG_MASK", "complex_random", "conjugate_fallback", "negative_fallback",
           "is_conj", "resolve_conj", "resolve_neg", "VIEW_AS_REAL_CONJ_MESSAGE"]

CONJ_MASK = 1 << K.CONJUGATE_BIT
NEG_MASK = 1 << K.NEGATIVE_BIT

VIEW_AS_REAL_CONJ_MESSAGE = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view "
    "it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original."
)


def is_conj(t: Tensor) -> bool:
    """True if ``t`` is a lazily conjugated view (its conjugate bit is set)."""
    return bool(t._keyset & CONJ_MASK)


def resolve_conj(t: Tensor) -> Tensor:
    """``t`` itself if its conjugate bit is clear, else a new tensor holding its (conjugated) values."""
    if not t._keyset & CONJ_MASK:
        return t
    return A.conj_physical(A._conj(t))


def resolve_neg(t: Tensor) -> Tensor:
    """``t`` itself if its negative bit is clear, else a new tensor holding its (negated) values."""
    if not t._keyset & NEG_MASK:
        return t
    return A.neg(A._neg_view(t))


def complex_random(self: Tensor, fill: Callable[..., Any], *args: Any) -> Tensor:
    """A backend's random fill of a complex tensor, as ATen does it: ``fill`` (the backend's real kernel)
    draws into ``view_as_real(self)``, so the real and imaginary parts interleave in the stream."""
    fill(A.view_as_real(self), *args)
    return self


# ---- kernels ---------------------------------------------------------------------------------------
_MATH_BITS = CONJ_MASK | NEG_MASK


def _flip_alias(self: Tensor, bit: int) -> Tensor:
    """An alias of ``self`` keeping its math bits, with ``bit`` flipped."""
    old = tls.mask
    tls.mask = old & ~_MATH_BITS  # the alias below must not come back through a fallback
    try:
        out = A.alias(self)
    finally:
        tls.mask = old
    out._keyset = (out._keyset & ~_MATH_BITS) | ((self._keyset & _MATH_BITS) ^ bit)
    return out


def _conj(self: Tensor) -> Tensor:
    """An alias of ``self`` with the conjugate bit flipped (real tensors: a plain alias)."""
    return _flip_alias(self, CONJ_MASK if self._dtype.is_complex else 0)


def _neg_view(self: Tensor) -> Tensor:
    """An alias of ``self`` with the negative bit flipped (its values read negated)."""
    return _flip_alias(self, NEG_MASK)


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
    "_conj": ("CompositeExplicitAutograd", _conj),
    "_neg_view": ("CompositeExplicitAutograd", _neg_view),
    "conj_physical": ("CompositeExplicitAutograd", conj_physical),
    "view_as_real": ("CompositeExplicitAutograd", view_as_real),
    "view_as_complex": ("CompositeExplicitAutograd", view_as_complex),
    "complex": ("CompositeExplicitAutograd", complex_),
    "polar": ("CompositeExplicitAutograd", polar),
    "angle": ("CompositeExplicitAutograd", angle),
}


# ---- the math bits' fallbacks ------------------------------------------------------------------------
class _MathBit:
    """One lazy math bit (conjugate, negative): its mask, the view op that flips it, and how values resolve.

    ``toggle(t)`` is a view of ``t`` with the bit flipped; ``physical(t)`` applies the operation to
    the values of a tensor without the bit (``conj_physical``, ``neg``), so a tensor with the bit
    resolves to ``physical(toggle(t))``.
    """

    def __init__(self, bit: int, toggle_name: str, physical: Callable[[Tensor], Tensor]) -> None:
        self.mask = 1 << bit
        self.below = ~self.mask
        self.toggle_name = toggle_name
        self.physical = physical

    def toggle(self, t: Tensor) -> Tensor:
        return getattr(A, self.toggle_name)(t)

    def resolve(self, t: Tensor) -> Tensor:
        return self.physical(self.toggle(t)) if t._keyset & self.mask else t

    def has(self, value: Any) -> bool:
        if isinstance(value, Tensor):
            return bool(value._keyset & self.mask)
        if isinstance(value, (list, tuple)):
            return any(isinstance(v, Tensor) and v._keyset & self.mask for v in value)
        return False

    def resolved(self, value: Any) -> Any:
        if isinstance(value, Tensor):
            return self.resolve(value)
        if isinstance(value, (list, tuple)):
            return type(value)(self.resolve(v) if isinstance(v, Tensor) else v for v in value)
        return value

    def flipped(self, result: Any) -> Any:
        if isinstance(result, Tensor):
            return self.toggle(result)
        if isinstance(result, (list, tuple)):
            return type(result)(self.toggle(r) if isinstance(r, Tensor) else r for r in result)
        return result

    def fallback(self, ks: int, op: Any, *args: Any) -> Any:
        """The boxed kernel of this bit's dispatch key (see the module docstring)."""
        schema = op._entry.schema
        below = ks & self.below
        mask = self.mask
        if schema.name == self.toggle_name:
            return op.redispatch(below, *args)
        if schema.name == "view_as_real" and mask == CONJ_MASK:
            raise RuntimeError(VIEW_AS_REAL_CONJ_MESSAGE)
        mutated = schema.mutated_argument_indices
        view_of = schema.view_of
        if view_of is not None and not mutated and isinstance(args[view_of], Tensor) and args[view_of]._keyset & mask:
            # A view of a lazy view: the same view of the plain alias, flipped again.
            new = [(self.toggle(a) if i == view_of else self.resolved(a)) if self.has(a) else a
                   for i, a in enumerate(args)]
            return self.flipped(op.redispatch(below, *new))
        writes = [(i, args[i]) for i in mutated if isinstance(args[i], Tensor) and args[i]._keyset & mask]
        new = [self.resolved(a) if self.has(a) else a for a in args]
        result = op.redispatch(below, *new)
        for i, target in writes:
            # The op wrote the values it sees into a resolved copy: store them, transformed back, in the base.
            A.copy_(self.toggle(target), self.physical(new[i]))
        if writes:
            swap = {id(new[i]): target for i, target in writes}
            if isinstance(result, Tensor):
                return swap.get(id(result), result)
            if isinstance(result, (list, tuple)):
                return type(result)(swap.get(id(r), r) for r in result)
        return result


CONJUGATE = _MathBit(K.CONJUGATE_BIT, "_conj", lambda t: A.conj_physical(t))
NEGATIVE = _MathBit(K.NEGATIVE_BIT, "_neg_view", lambda t: A.neg(t))
conjugate_fallback = CONJUGATE.fallback
negative_fallback = NEGATIVE.fallback
