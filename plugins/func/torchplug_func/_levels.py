"""Moving batch dims between vmap levels and a tensor's logical dims, under nested batched tensors.

Reverse-mode transforms differentiate the *physical* tensors (all batch dims visible); these helpers
turn a batched tensor into its physical form at some levels and back, wherever those levels sit in the
nesting (a wrapper of a higher level may wrap them).
"""

from __future__ import annotations

from typing import Any

from ._batched import BatchedTensor, current_levels, wrap

__all__ = ["expose", "hide", "peel", "rebuild", "add_missing_levels"]


def expose(g: Any, level: int, bd: int, size: int) -> Any:
    """``g`` with the batch dim of ``level`` turned into its logical dim ``bd`` (expanded to ``size`` when
    ``g`` is not batched at ``level``); wrappers of higher levels stay around it."""
    if g.__class__ is BatchedTensor and g._bt_level > level:
        v, b = g._bt_value, g._bt_bdim
        q, nb = (bd, b + 1) if bd <= b else (bd + 1, b)
        return wrap(expose(v, level, q, size), nb, g._bt_level)
    if g.__class__ is BatchedTensor and g._bt_level == level:
        v, b = g._bt_value, g._bt_bdim
        return v if b == bd else v.movedim(b, bd)
    shape = list(g.shape)
    shape.insert(bd, size)
    return g.unsqueeze(bd).expand(shape)


def hide(g: Any, level: int, bd: int) -> Any:
    """``g`` with its logical dim ``bd`` made the batch dim of ``level`` (inverse of :func:`expose`)."""
    if g.__class__ is BatchedTensor and g._bt_level > level:
        v, b = g._bt_value, g._bt_bdim
        q = bd if bd < b else bd + 1
        nb = b if b < q else b - 1
        return wrap(hide(v, level, q), nb, g._bt_level)
    return wrap(g, bd, level)


def peel(t: Any) -> tuple[Any, list[tuple[int, int, int]]]:
    """The physical tensor under every wrapper of ``t`` and the chain ``[(level, bdim, size)]``,
    lowest level (innermost wrapper) first."""
    chain = []
    while t.__class__ is BatchedTensor:
        chain.append((t._bt_level, t._bt_bdim, t._bt_value.shape[t._bt_bdim]))
        t = t._bt_value
    chain.reverse()
    return t, chain


def rebuild(p: Any, chain: list[tuple[int, int, int]]) -> Any:
    """Wrap a physical tensor with ``chain`` (as :func:`peel` returned it)."""
    for level, bdim, _ in chain:
        p = wrap(p, bdim, level)
    return p


def add_missing_levels(t: Any) -> Any:
    """``t`` batched at every active vmap level: a level it does not carry gets an expanded batch dim."""
    present = set()
    u = t
    while u.__class__ is BatchedTensor:
        present.add(u._bt_level)
        u = u._bt_value
    for lv in current_levels():
        if lv.level not in present:
            t = hide(t.unsqueeze(0).expand((lv.batch_size,) + tuple(t.shape)), lv.level, 0)
    return t
