"""The conjugate and negative bits: lazily conjugated / negated views, as PyTorch's math bits.

``x.conj()`` of a complex tensor is a *view* with the conjugate bit set: it shares ``x``'s storage,
and a write through it stores the conjugate of the written value in ``x``; ``x.conj().imag`` is a
view with the negative bit set, likewise with ``neg``.  Each bit is a dispatch key in the tensor's
own key set (``Conjugate``, ``Negative``: the highest keys), so such a tensor reaching any op goes
through its bit's fallback first, which (like PyTorch's MathBitsFallback):

- passes the op that flips the bit (``_conj``, ``_neg_view``) straight through;
- for a view op, takes the view of the plain alias and flips the bit back on the result (views of
  a lazy view are lazy views, and writes through them still reach the base);
- for an op writing to a tensor with the bit, runs it on a resolved copy and stores the outcome,
  transformed back, through the plain alias;
- for every other op, resolves (materialises) those inputs and calls the op on them.

Every step dispatches normally, so autograd records ``_conj``/``conj_physical``/``_neg_view``/``neg``
and gradients flow through the lazy views.  Backends never see the bits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._dispatch.aten import A
from torchplug._dispatch import keys as K
from torchplug._dispatch.tls import tls
from torchplug._tensor.tensor import Tensor, autograd_hooks, resolve_conj, resolve_neg

__all__ = ["CONJ_MASK", "NEG_MASK", "VIEW_AS_REAL_CONJ_MESSAGE", "is_conj", "resolve_conj", "resolve_neg",
           "conj_kernel", "neg_view_kernel", "conjugate_fallback", "negative_fallback"]

CONJ_MASK = 1 << K.CONJUGATE_BIT
NEG_MASK = 1 << K.NEGATIVE_BIT

VIEW_AS_REAL_CONJ_MESSAGE = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can view "
    "it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias the original."
)


def is_conj(t: Tensor) -> bool:
    """True if ``t`` is a lazily conjugated view (its conjugate bit is set)."""
    return bool(t._keyset & CONJ_MASK)


# ---- the ops that flip a bit ----------------------------------------------------------------------
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


def conj_kernel(self: Tensor) -> Tensor:
    """An alias of ``self`` with the conjugate bit flipped (real tensors: a plain alias)."""
    return _flip_alias(self, CONJ_MASK if self._dtype.is_complex else 0)


def neg_view_kernel(self: Tensor) -> Tensor:
    """An alias of ``self`` with the negative bit flipped (its values read negated)."""
    return _flip_alias(self, NEG_MASK)


# ---- the fallbacks ---------------------------------------------------------------------------------
class _MathBit:
    """One lazy math bit (conjugate, negative): its mask, the view op that flips it, and how values resolve.

    ``toggle(t)`` is a view of ``t`` with the bit flipped; ``physical(t)`` applies the operation to
    the values of a tensor without the bit (``conj_physical``, ``neg``), so a tensor with the bit
    resolves to ``physical(toggle(t))``.
    """

    def __init__(self, bit: int, toggle_name: str, physical: Callable[[Tensor], Tensor], what: str) -> None:
        self.mask = 1 << bit
        self.below = ~self.mask
        self.toggle_name = toggle_name
        self.physical = physical
        # PyTorch refuses dtype views of such tensors (the bits would not mean the same in another dtype)
        self.view_dtype_message = f"torch.Tensor.view is not supported for {what} when converting to a different dtype."

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
        if schema.name == "view" and schema.overload_name == "dtype":
            raise RuntimeError(self.view_dtype_message)
        mutated = schema.mutated_argument_indices
        view_of = schema.view_of
        if view_of is not None and not mutated and isinstance(args[view_of], Tensor) and args[view_of]._keyset & mask:
            # A view of a lazy view: the same view of the plain alias, flipped again.
            new = [(self.toggle(a) if i == view_of else self.resolved(a)) if self.has(a) else a
                   for i, a in enumerate(args)]
            return self.flipped(op.redispatch(below, *new))
        writes = [(i, args[i]) for i in mutated if isinstance(args[i], Tensor) and args[i]._keyset & mask]
        check = autograd_hooks.check_view_write
        if writes and check is not None:
            for _, target in writes:  # refused as the write itself would be (a view made under no_grad...)
                if target._base is not None:
                    check(target)
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


CONJUGATE = _MathBit(K.CONJUGATE_BIT, "_conj", lambda t: A.conj_physical(t), "conjugate view tensors")
NEGATIVE = _MathBit(K.NEGATIVE_BIT, "_neg_view", lambda t: A.neg(t), "tensors with negative bit set")
conjugate_fallback = CONJUGATE.fallback
negative_fallback = NEGATIVE.fallback
