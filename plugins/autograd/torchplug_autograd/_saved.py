"""What a graph node saved, as PyTorch exposes it for debugging and memory tricks.

``grad_fn._saved_<name>`` unpacks one saved value (running its unpack hook, if any) and
``grad_fn._raw_saved_<name>`` gives the ``SavedTensor`` whose ``register_hooks(pack, unpack)``
moves that one tensor out of the graph.  ``<name>`` is the schema argument the formula saved
(``self``, ``other``, ``result``...), or ``<arg>_sym_sizes``/``<arg>_scalar_type`` for saved
metadata, as in PyTorch's generated nodes.  None of this is on the per-op path: a node only comes
here when such an attribute is asked for.
"""

from __future__ import annotations

import weakref
from typing import Any

from torchplug._tensor.tensor import Tensor

from . import _graph as G

__all__ = ["SavedTensor", "saved_names", "saved_attribute"]

# saved metadata (``self.shape`` in a rule) under the name PyTorch's node gives it
_ATTR_SUFFIX = {"shape": "sym_sizes", "shapes": "sym_sizes", "dtype": "scalar_type", "device": "options",
                "geometry": "sym_strides", "dim": "dim"}

FREED_HOOKS = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph "
    "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved variables after calling backward."
)


def _torch_name(spec: str) -> str:
    base, _, attr = spec.partition(".")
    return f"{base}_{_ATTR_SUFFIX.get(attr, attr)}" if attr else base


def saved_names(node: G.Node) -> list[str]:
    """The ``_saved_*`` names of ``node`` (for ``dir``)."""
    return [f"_saved_{_torch_name(s)}" for s in node._saves]


def _slot(node: G.Node, name: str) -> int | None:
    for i, spec in enumerate(node._saves):
        if _torch_name(spec) == name:
            return i
    return None


def _unpack_slot(node: G.Node, i: int) -> Any:
    saved = node._saved
    if saved is None:
        raise RuntimeError(G.SECOND_BACKWARD)
    if node._versions is None:  # packed by hooks: (packed, unpack hook, gradient edge of a saved input)
        packed, unpack, edge = saved[i]
        value = G.check_unpacked(unpack(packed)) if unpack is not None else packed
        if not isinstance(value, Tensor):
            return value
        if i in node._result_slots:
            return node._reconnect(value, i)
        if edge is not None:  # what the hook returned carries no history: give it the saved input's
            value = G.alias_of(value)
            if isinstance(edge[0], G.AccumulateGrad):  # a leaf comes back a leaf, sharing its accumulator
                value._requires_grad = True
                value._autograd_meta = weakref.ref(edge[0])
                value._keyset |= G.autograd_bit(value._keyset)
            else:
                G.set_history(value, edge[0], edge[1])
        return value
    value = saved[i]
    versions = node._versions
    if versions and versions[i] is not None and value._storage.version != versions[i]:
        node._version_error(value, versions[i], i in node._result_slots)
    if i in node._result_slots:  # an output comes back as a new tensor that has this node as grad_fn
        return node._reconnect(value, i)
    return value  # an input is the very tensor that was saved


class SavedTensor:
    """One tensor saved by a graph node (``torch._C._autograd.SavedTensor``)."""

    __slots__ = ("_node", "_slot")

    def __init__(self, node: G.Node, slot: int) -> None:
        self._node = node
        self._slot = slot

    def register_hooks(self, pack_hook: Any, unpack_hook: Any) -> None:
        """Pack this saved tensor now with ``pack_hook`` (given a detached alias); ``unpack_hook`` runs
        on the packed value each time the tensor is needed (``_saved_*`` access or backward)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: SavedTensor, arg0: Callable, arg1: Callable) -> None\n\n"
                            f"Invoked with: {type(pack_hook).__name__}, {type(unpack_hook).__name__}")
        node, i = self._node, self._slot
        saved = node._saved
        if saved is None:
            raise RuntimeError(FREED_HOOKS)
        if node._versions is None:
            packed, unpack, edge = saved[i]
            if unpack is not None:
                raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                                   "Hint: only one pair of hooks is allowed at a time.")
            entries = list(saved)
        else:
            # The node switches to the hooked layout (value, unpack, edge) for all its slots; the
            # version checks of its other saved tensors are dropped with it, as under saved_tensors_hooks.
            from ._views import gradient_edge

            entries = [(v, None, gradient_edge(v) if isinstance(v, Tensor) and v._requires_grad else None)
                       for v in saved]
            packed, _, edge = entries[i]
        entries[i] = (pack_hook(G.alias_of(packed)), unpack_hook, edge)
        node._saved = tuple(entries)
        node._versions = None

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


def saved_attribute(node: G.Node, name: str) -> Any:
    """``node._saved_<x>`` / ``node._raw_saved_<x>``; AttributeError for a name the node did not save."""
    raw = name.startswith("_raw_saved_")
    i = _slot(node, name[len("_raw_saved_" if raw else "_saved_"):])
    if i is not None and not raw:
        return _unpack_slot(node, i)
    if i is not None and node._saves[i].partition(".")[2] == "":
        saved = node._saved
        value = saved[i][0] if saved is not None and node._versions is None else (saved[i] if saved else None)
        if saved is None or isinstance(value, Tensor) or (node._versions is None and saved[i][1] is not None):
            return SavedTensor(node, i)
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")
