"""``rearrange``: einops-style reordering of a tensor's dims by a pattern, as ``torch.func.rearrange``."""

from __future__ import annotations

import math
from typing import Any

import torchplug

__all__ = ["rearrange"]

_ELLIPSIS = "…"  # an ellipsis inside brackets: its dims merge into the group
_ELLIPSIS_ALONE = "…!"  # an ellipsis standing alone: one group per dim


def _parse(side: str) -> list[list[str]]:
    """Groups of axis names, one group per dim (``(a b)`` is one group; ``1`` an empty group)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for token in side.replace("(", " ( ").replace(")", " ) ").replace("...", f" {_ELLIPSIS} ").split():
        if token == "(":
            if current is not None:
                raise ValueError(f"Axis composition is one-level (brackets inside brackets not allowed): {side}")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"Brackets are not balanced: {side}")
            groups.append(current)
            current = None
        else:
            if token != _ELLIPSIS and not token.isidentifier() and not token.isdigit():
                raise ValueError(f"Invalid axis identifier: {token}")
            item = [] if token == "1" else [token]
            if current is None:
                groups.append([_ELLIPSIS_ALONE] if token == _ELLIPSIS else item)
            else:
                current.extend(item)
    if current is not None:
        raise ValueError(f"Brackets are not balanced: {side}")
    return groups


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Any:
    """Reorder, merge and split the dims of ``tensor`` (or of a list of tensors stacked along a new first
    dim) by an einops pattern such as ``"b h w c -> b (h w) c"``, as ``torch.func.rearrange``."""
    if isinstance(tensor, (list, tuple)):
        tensor = torchplug.stack(tensor)
    left_text, arrow, right_text = pattern.partition("->")
    if not arrow:
        raise ValueError(f"Pattern must contain '->': {pattern}")
    left, right = _parse(left_text), _parse(right_text)
    left_names = [n for g in left for n in g]
    right_names = [n for g in right for n in g]
    for names in (left_names, right_names):
        seen: set[str] = set()
        for n in names:
            if n in seen:
                raise ValueError(f"Indexing expression contains duplicate dimension '{n}'")
            seen.add(n)
    only = {n for n in set(left_names) ^ set(right_names)} - {_ELLIPSIS, _ELLIPSIS_ALONE}
    if only or (_ELLIPSIS_ALONE in left_names) != (bool({_ELLIPSIS, _ELLIPSIS_ALONE} & set(right_names))):
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {only}")
    has_ellipsis = _ELLIPSIS_ALONE in left_names
    n_fixed = len(left) - (1 if has_ellipsis else 0)
    if (has_ellipsis and tensor.dim() < n_fixed) or (not has_ellipsis and tensor.dim() != len(left)):
        raise ValueError(f"Number of dimensions in pattern ({n_fixed}) must be equal to the number of dimensions "
                         f"in the tensor ({tensor.dim()})")
    if has_ellipsis:  # the ellipsis stands for the dims the pattern does not name
        k = tensor.dim() - n_fixed
        names = [f"{_ELLIPSIS}{i}" for i in range(k)]
        left = [g for grp in left for g in ([[n] for n in names] if grp == [_ELLIPSIS_ALONE] else [grp])]
        expanded = []
        for grp in right:
            if grp == [_ELLIPSIS_ALONE]:
                expanded.extend([n] for n in names)
            else:
                expanded.append([x for n in grp for x in (names if n == _ELLIPSIS else [n])])
        right = expanded
        left_names = [n for g in left for n in g]
    sizes: dict[str, int] = {}
    for grp, size in zip(left, tensor.shape):
        unknown = [n for n in grp if n not in axes_lengths]
        known = math.prod(axes_lengths[n] for n in grp if n in axes_lengths)
        if len(unknown) > 1:
            raise ValueError(f"cannot infer the sizes of two dimensions at once {unknown[0]} and {unknown[1]}")
        if unknown:
            if known == 0 or size % known:
                raise ValueError(f"Shape mismatch, can't divide axis of length {size} in chunks of {known}")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise ValueError(f"Shape mismatch, {size} != {known}")
        for n in grp:
            if n in axes_lengths:
                sizes[n] = axes_lengths[n]
    elementary = tensor.reshape([sizes[n] for n in left_names]) if left_names else tensor.reshape([])
    order = [left_names.index(n) for g in right for n in g]
    permuted = elementary.permute(order) if order else elementary
    return permuted.reshape([math.prod(sizes[n] for n in g) for g in right])
