"""A minimal pytree: nested tuples, lists, dicts and namedtuples of leaves (torch.utils._pytree's containers)."""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "TreeSpec", "broadcast_prefix"]


class TreeSpec:
    """The structure of a pytree: a container kind, its context (dict keys, namedtuple type) and children."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind: str, context: Any, children: list[TreeSpec]) -> None:
        self.kind = kind  # 'leaf' | 'tuple' | 'list' | 'dict' | 'namedtuple' | 'none'
        self.context = context
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        return f"{self.kind}({', '.join(map(repr, self.children))})"


def _children(tree: Any) -> tuple[str, Any, list[Any]] | None:
    if tree is None:
        return "none", None, []
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return "namedtuple", type(tree), list(tree)
    if type(tree) is tuple:
        return "tuple", None, list(tree)
    if type(tree) is list:
        return "list", None, list(tree)
    if isinstance(tree, dict):
        keys = list(tree)
        return "dict", (type(tree), keys), [tree[k] for k in keys]
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` in order, and its structure."""
    leaves: list[Any] = []

    def go(t: Any) -> TreeSpec:
        node = _children(t)
        if node is None:
            leaves.append(t)
            return TreeSpec("leaf", None, [])
        kind, ctx, kids = node
        return TreeSpec(kind, ctx, [go(k) for k in kids])

    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves: list[Any], spec: TreeSpec) -> Any:
    """The tree of structure ``spec`` holding ``leaves``."""
    it = iter(leaves)

    def go(s: TreeSpec) -> Any:
        if s.kind == "leaf":
            return next(it)
        kids = [go(c) for c in s.children]
        if s.kind == "none":
            return None
        if s.kind == "tuple":
            return tuple(kids)
        if s.kind == "list":
            return kids
        if s.kind == "namedtuple":
            return s.context(*kids)
        cls, keys = s.context
        out = dict(zip(keys, kids))
        return out if cls is dict else cls(out)

    return go(spec)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix: Any, tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any] | None:
    """The prefix tree's values repeated over the leaves of ``tree`` below each prefix leaf, or None when
    ``prefix`` is not a prefix of ``tree``'s structure."""
    out: list[Any] = []

    def go(p: Any, t: Any) -> bool:
        pnode = _children(p) if not (is_leaf and is_leaf(p)) else None
        if pnode is None or pnode[0] == "none" and _children(t) is not None and _children(t)[0] != "none":
            n = tree_flatten(t)[1].num_leaves
            out.extend([p] * n)
            return True
        tnode = _children(t)
        if tnode is None:
            return False
        pk, pctx, pkids = pnode
        tk, tctx, tkids = tnode
        if pk != tk or len(pkids) != len(tkids):
            if not (pk in ("tuple", "list") and tk in ("tuple", "list") and len(pkids) == len(tkids)):
                return False
        if pk == "dict" and set(pctx[1]) != set(tctx[1]):
            return False
        if pk == "dict":
            pmap = dict(zip(pctx[1], pkids))
            pkids = [pmap[k] for k in tctx[1]]
        return all(go(a, b) for a, b in zip(pkids, tkids))

    return out if go(prefix, tree) else None
