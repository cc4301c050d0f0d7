"""Graph nodes: ``Node`` (one per recorded op), ``AccumulateGrad`` (one per leaf) and their hooks.

A node holds its edges (``(node, output_nr)`` or ``None`` per differentiable input), what its
formula saved (with the version of every saved tensor), and the shape and dtype of its output
so the engine can reduce broadcast gradients and cast them back.  Nodes never reference their
outputs, so a graph is freed by reference counting as soon as its last output dies.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

from torchplug._dispatch.keys import BACKEND_BAND
from torchplug._dispatch.keys import _AUTOGRAD_BASE as AUTOGRAD_SHIFT
from torchplug._tensor.construct import new_view
from torchplug._tensor.tensor import Tensor

__all__ = ["Node", "AccumulateGrad", "NodeHooks", "SEQ", "grad_accumulator", "new_accumulator", "set_history",
           "autograd_bit", "SECOND_BACKWARD", "alias_of", "type_description", "check_unpacked"]

SEQ = itertools.count()
# The ._saved module once the plugin is configured (it reads nodes, so this module cannot import it).
SAVED_VIEW: list[Any] = []
_new = object.__new__

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


def autograd_bit(keyset: int) -> int:
    """The ``Autograd<Backend>`` bit matching the backend bit of ``keyset``."""
    return (keyset & BACKEND_BAND) << AUTOGRAD_SHIFT


_NO_AUTOGRAD_KEYS = ~(BACKEND_BAND << AUTOGRAD_SHIFT)


def type_description(t: Tensor) -> str:
    """PyTorch's ``[torch.FloatTensor [2, 3]]`` description used in autograd errors."""
    from torchplug._ops.composites import scalar_type_name

    dev = "" if t._device.type == "cpu" else f"{t._device.type}."
    return f"[torch.{dev}{scalar_type_name(t._dtype)}Tensor [{', '.join(str(s) for s in t._data.shape)}]]"


class NodeHooks:
    """Hooks of one node, created only when the first hook is registered."""

    __slots__ = ("pre", "post", "tensor_pre", "retain", "__weakref__")

    def __init__(self) -> None:
        self.pre: dict[int, Any] = {}  # handle id -> fn(grad_outputs) -> new grad_outputs | None
        self.post: dict[int, Any] = {}  # handle id -> fn(grad_inputs, grad_outputs) -> new grad_inputs | None
        self.tensor_pre: dict[int, dict[int, Any]] = {}  # output_nr -> {handle id: fn(grad)}
        self.retain: dict[int, Any] = {}  # output_nr -> weakref to the tensor that retains its grad


_HANDLE_IDS = itertools.count()


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_ref", "id")

    def __init__(self, table: dict[int, Any]) -> None:
        self.id = next(_HANDLE_IDS)
        self._ref = _weak_dict(table)

    def remove(self) -> None:
        table = self._ref()
        if table is not None:
            table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class _HookDict(dict):
    __slots__ = ("__weakref__",)


def check_unpacked(value: Any) -> Any:
    """PyTorch's error for a saved-tensor unpack hook that returns something other than a tensor."""
    if not isinstance(value, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(value).__name__}")
    return value


def _weak_dict(table: dict[int, Any]) -> Any:
    try:
        return weakref.ref(table)
    except TypeError:
        return lambda: table


class Node:
    """A backward function in the graph (PyTorch's ``torch.autograd.graph.Node``).

    Subclasses (one per op, made by the kernel builder) set ``_name``, ``_fn`` (the formula),
    ``_saves`` (names of what is saved) and ``_n_out``.
    """

    __slots__ = ("_next", "_saved", "_versions", "_shape", "_dtype", "_seq", "_hooks", "_extra", "__weakref__")
    _name = "Node"
    _fn: Any = None
    _fn_real: Any = None  # _fn for a real gradient (a holomorphic rule's formula without its complex wrapper)
    _saves: tuple[str, ...] = ()
    _result_slots: tuple[int, ...] = ()  # positions in _saved holding (aliases of) outputs
    _n_out = 1
    _diff_outs: frozenset[int] | None = None  # differentiable outputs (None: all floating ones)
    _op = ""
    _hidden: tuple[int, ...] = ()  # edges PyTorch's node does not have (inputs its overload takes as Scalars)
    _view_op = False  # the node of a view op (its first edge leads to the viewed tensor)
    _undefined = False  # an edge to this node is PyTorch's undefined edge (next_functions shows None)

    def __init__(self) -> None:
        self._next: tuple[Any, ...] = ()
        self._saved: Any = ()
        self._versions: Any = ()
        self._shape: Any = ()
        self._dtype: Any = None
        self._seq = next(SEQ)
        self._hooks: NodeHooks | None = None
        self._extra: dict[str, Any] | None = None

    # -- public API -----------------------------------------------------------------------------
    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        hidden = self._hidden
        return tuple(e if e is not None and not e[0]._undefined else (None, 0)
                     for i, e in enumerate(self._next) if i not in hidden)

    @property
    def metadata(self) -> dict[str, Any]:
        extra = self._extras()
        return extra.setdefault("metadata", {})

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the class lacks: ``_saved_<x>`` / ``_raw_saved_<x>`` (PyTorch's debug view
        # of what the formula saved) are computed on demand by ._saved, off the per-op path.
        if SAVED_VIEW and name.startswith(("_saved_", "_raw_saved_")):
            return SAVED_VIEW[0].saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        names = SAVED_VIEW[0].saved_names(self) if SAVED_VIEW else []
        return sorted({*super().__dir__(), *names, *(n.replace("_saved_", "_raw_saved_", 1) for n in names)})

    def _extras(self) -> dict[str, Any]:
        if self._extra is None:
            self._extra = {}
        return self._extra

    def _sequence_nr(self) -> int:
        return self._seq

    def _get_hooks(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
            self._hooks.pre = _HookDict()
            self._hooks.post = _HookDict()
        return self._hooks

    def register_hook(self, fn: Any) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after the node runs; may return new grad_inputs."""
        table = self._get_hooks().post
        handle = RemovableHandle(table)
        table[handle.id] = fn
        return handle

    def register_prehook(self, fn: Any) -> RemovableHandle:
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        table = self._get_hooks().pre
        handle = RemovableHandle(table)
        table[handle.id] = fn
        return handle

    def _register_tensor_hook(self, output_nr: int, fn: Any) -> RemovableHandle:
        hooks = self._get_hooks()
        table = hooks.tensor_pre.get(output_nr)
        if table is None:
            table = hooks.tensor_pre[output_nr] = _HookDict()
        handle = RemovableHandle(table)
        table[handle.id] = fn
        return handle

    def __call__(self, *grads: Any) -> Any:
        """Apply the backward function directly (PyTorch allows ``grad_fn(grad)``)."""
        out = self._apply(list(grads), tuple(e is not None for e in self._next), False)
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self) -> str:
        return f"<{self._name} object at {hex(id(self))}>"

    # -- engine side ----------------------------------------------------------------------------
    def _out_meta(self, nr: int) -> tuple[Any, Any]:
        if nr == 0:
            return self._shape, self._dtype
        return self._extra["out_meta"][nr]  # type: ignore[index]

    def _unpack(self, create_graph: bool) -> tuple[Any, ...]:
        saved = self._saved
        if saved is None:
            raise RuntimeError(SECOND_BACKWARD)
        versions = self._versions
        if versions is None:  # packed by saved_tensors_hooks
            if create_graph:
                return self._unpack_hooked_with_history(saved)
            return tuple(check_unpacked(u(p)) if u is not None else p for p, u, _ in saved)
        if versions:
            for i, v in enumerate(versions):
                if v is not None and saved[i]._storage.version != v:
                    self._version_error(saved[i], v, i in self._result_slots)
        if create_graph and self._result_slots:
            saved = list(saved)
            for i in self._result_slots:
                saved[i] = self._reconnect(saved[i], i)
            return tuple(saved)
        return saved

    def _unpack_hooked_with_history(self, saved: Any) -> tuple[Any, ...]:
        """Unpack hooked saved values for a differentiable backward: a saved output carries this
        node as its grad_fn again, a saved input that required grad the edge it had when saved."""
        out = []
        slots = self._result_slots
        for i, (p, u, e) in enumerate(saved):
            v = check_unpacked(u(p)) if u is not None else p
            if isinstance(v, Tensor):
                if i in slots:
                    v = self._reconnect(v, i)
                elif e is not None:
                    v = alias_of(v)
                    set_history(v, e[0], e[1])
            out.append(v)
        return tuple(out)

    def _reconnect(self, alias: Any, slot: int) -> Any:
        """Under create_graph a saved output must carry this node as its grad_fn again."""
        if not isinstance(alias, Tensor):
            return alias
        nr = self._extra.get("result_nr", {}).get(slot, 0) if self._extra else 0
        t = alias_of(alias)
        fw = alias.__dict__.get("_fw")
        if fw:  # its forward-AD tangents too (forward-over-reverse reads them)
            t.__dict__["_fw"] = fw
        t._grad_fn = self
        t._autograd_meta = nr
        t._requires_grad = True
        t._keyset |= autograd_bit(t._keyset)
        return t

    def _version_error(self, t: Any, expected: int, is_output: bool) -> None:
        desc = type_description(t)
        owner = ""
        if is_output:
            owner = f", which is output 0 of {self._name},"
        else:
            fn = self._extra.get("saved_fns", {}).get(id(t)) if self._extra else None
            if fn is not None:
                owner = f", which is output 0 of {fn},"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{desc}{owner} is at version {t._storage.version}; expected version {expected} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True)."
        )

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        saved = self._unpack(create_graph)
        g = grads[0] if self._n_out == 1 else tuple(grads)
        return self._fn(needs, g, *saved)

    def _release(self) -> None:
        # Like PyTorch, only saved tensors are freed: a node that saved metadata alone can run again.
        if self._versions != () and self._saved:
            self._saved = None


class AccumulateGrad(Node):
    """The node of a leaf: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("variable",)
    _name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        self._next = ()
        self._saved = ()
        self._versions = ()
        self._shape = variable._data.shape
        self._dtype = variable._dtype
        self._seq = _ACC_SEQ + next(SEQ)  # run as soon as ready, like PyTorch's UINT64_MAX priority
        self._hooks = None
        self._extra = None
        self.variable = variable

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The (shared, weakly cached) AccumulateGrad node of leaf ``t``."""
    ref = t._autograd_meta
    if ref is not None and ref.__class__ is weakref.ref:
        acc = ref()
        if acc is not None:
            return acc
    return new_accumulator(t)


_ACC_SEQ = 1 << 62
_wref = weakref.ref


def new_accumulator(t: Tensor) -> AccumulateGrad:
    """A new AccumulateGrad for leaf ``t``, cached weakly on it (as PyTorch does, a leaf whose graphs all
    died gets a new one).  ``AccumulateGrad.__init__``'s steps, without its call: an op on a leaf whose
    previous graph was freed (each step of a training loop) makes one."""
    acc = _new(AccumulateGrad)
    acc._next = acc._saved = acc._versions = ()
    acc._shape = t._data.shape
    acc._dtype = t._dtype
    acc._seq = _ACC_SEQ + next(SEQ)
    acc._hooks = acc._extra = None
    acc.variable = t
    t._autograd_meta = _wref(acc)
    return acc


def set_history(t: Tensor, node: Node, nr: int = 0) -> None:
    t._grad_fn = node
    t._autograd_meta = nr
    t._requires_grad = True
    t._keyset |= autograd_bit(t._keyset)


def alias_of(t: Tensor) -> Tensor:
    """A new Tensor object over the same data and storage, without autograd history."""
    return new_view(t._data, t._dtype, t._device, t._keyset & _NO_AUTOGRAD_KEYS, t._storage, t._base)
