"""The backward engine: iterative, dependency-counted execution of the graph.

Nodes run when every consumer has delivered its gradient (so each runs once), highest
sequence number first like PyTorch's ready queue; there is no recursion, so graph depth is
unbounded.  Gradients are reduced to each input's shape and cast to its dtype on the edge,
accumulated per node, and added into leaves by their ``AccumulateGrad``.
"""

from __future__ import annotations

import heapq
import itertools
import math
import sys
from collections.abc import Sequence
from typing import Any

from torchplug._dispatch.tls import tls
from torchplug._tensor.tensor import Tensor

from . import _graph as G
from . import _views as V
from ._state import AUTOGRAD_BAND, GLOBAL, STATE, set_grad_mode

__all__ = ["run_backward", "backward", "grad", "sum_to", "current_graph_task_id", "is_checkpoint_valid"]

_NOT_BAND = ~AUTOGRAD_BAND


def _T() -> Any:
    import torchplug

    return torchplug


def sum_to(g: Tensor, shape: Sequence[int]) -> Tensor:
    """Reduce a broadcast gradient back to ``shape`` (PyTorch's at::sum_to)."""
    shape = tuple(shape)
    gshape = tuple(g._data.shape)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0:
        return g.reshape(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if lead and len(dims) == lead:  # only leading dims (a bias's gradient): one sum, no reshape
        return g.sum(dims)
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


def _expandable(src: Sequence[int], target: Sequence[int]) -> bool:
    """True if a tensor of shape ``target`` broadcasts to ``src`` (so ``src`` reduces to ``target``)."""
    extra = len(target) - len(src)
    if extra > 0:
        for t in target[:extra]:
            if t != 1:
                return False
        target = target[extra:]
    for t, s in zip(reversed(target), reversed(src)):
        if t != s and t != 1:
            return False
    return True


def _validate(g: Any, node: G.Node, nr: int, producer: G.Node, index: int) -> Tensor:
    if nr == 0:
        shape, dtype = node._shape, node._dtype
    else:
        shape, dtype = node._out_meta(nr)
    gshape = g._data.shape
    if gshape != shape:
        if not _expandable(gshape, tuple(shape)):
            raise RuntimeError(
                f"Function {producer.name()} returned an invalid gradient at index {index} - got "
                f"[{', '.join(map(str, g._data.shape))}] but expected shape compatible with [{', '.join(map(str, shape))}]"
            )
        g = sum_to(g, shape)
    if dtype is not None and g._dtype is not dtype:
        if g._dtype.is_complex and not dtype.is_complex:
            g = g.real  # a real input's gradient is the real part (PyTorch's handle_r_to_c)
        g = g.to(dtype)
    return g


def _check_nan(node: G.Node, outs: Sequence[Any]) -> None:
    for i, g in enumerate(outs):
        if isinstance(g, Tensor) and g.numel() and (g.dtype.is_floating_point or g.dtype.is_complex):
            if bool(g.isnan().any()):
                trace = (node._extra or {}).get("trace", "")
                hint = f"\n\nTraceback of forward call that caused the error:\n{trace}" if trace else ""
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.{hint}")


def _anomaly_context(node: G.Node, exc: BaseException) -> None:
    trace = (node._extra or {}).get("trace")
    if trace and not getattr(exc, "_torchplug_anomaly", False):
        try:
            exc.args = (f"{exc.args[0] if exc.args else ''}\n\nError detected in {node.name()}. Traceback of forward "
                        f"call that caused the error:\n{trace}",) + tuple(exc.args[1:])
            exc._torchplug_anomaly = True  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - best effort
            pass


def _stealable(g: Tensor, var: Tensor) -> Tensor | None:
    """``g`` itself, or a base-less alias of it, if it may become ``var.grad`` without a copy: a
    fresh tensor nobody else holds, laid out like ``var`` (PyTorch steals such gradients too).

    A view qualifies when nothing but the view holds its base (e.g. ``(g.t() @ x).t().t()``, the
    gradient ``nn.Linear``'s weight gets): the gradient then adopts the base's storage.
    """
    # References to g: _run_leaf's local, _accumulate's and this function's arguments, getrefcount's.
    if (g._requires_grad or sys.getrefcount(g) > _STEAL_REFS or g._data.strides != var._data.strides
            or g._data.shape != var._data.shape):
        return None
    base = g._base
    if base is None:
        return g
    # References to base: g's slot, the local ``base`` and getrefcount's argument.
    if sys.getrefcount(base) > 3 or base._requires_grad:
        return None
    alias = _new_tensor(Tensor)
    for slot in _ALIAS_SLOTS:
        setattr(alias, slot, getattr(g, slot))
    alias._base = None
    alias._grad = alias._grad_fn = alias._autograd_meta = None
    return alias


_STEAL_REFS = 4
_new_tensor = object.__new__
_ALIAS_SLOTS = ("_data", "_dtype", "_device", "_keyset", "_storage", "_requires_grad")


def _accumulate(var: Tensor, g: Tensor, create_graph: bool) -> None:
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g
            return
        stolen = _stealable(g, var)
        var._grad = stolen if stolen is not None else g.detach().clone()
        return
    if create_graph or old._requires_grad:
        var._grad = old + g
    else:
        old.add_(g)


def _run_tensor_hooks(hooks: G.NodeHooks, nr: int, g: Any) -> Any:
    table = hooks.tensor_pre.get(nr)
    if table:
        for fn in list(table.values()):
            new = fn(g)
            if new is not None:
                g = new
    ref = hooks.retain.get(nr)
    if ref is not None:
        t = ref()
        if t is not None and g is not None:
            t._grad = g.detach().clone() if t._grad is None else t._grad + g
    return g


def _leaf_hooks(var: Tensor, g: Any) -> Any:
    table = var.__dict__.get("_hooks")
    if table:
        for fn in list(table.values()):
            new = fn(g)
            if new is not None:
                g = new
    return g


def _graph_nodes(roots: Sequence[G.Node]) -> dict[G.Node, int]:
    """Every node reachable from ``roots`` with its number of incoming edges."""
    deps: dict[G.Node, int] = {}
    stack = []
    for n in roots:
        if n not in deps:
            deps[n] = 0
            stack.append(n)
    while stack:
        n = stack.pop()
        for e in n._next:
            if e is not None:
                m = e[0]
                if m in deps:
                    deps[m] += 1
                else:
                    deps[m] = 1
                    stack.append(m)
    return deps


def _needed(roots: Sequence[G.Node], deps: dict[G.Node, int], targets: set[G.Node]) -> tuple[set[G.Node], dict[G.Node, int]]:
    """Nodes on a path from a root to a target, and dependency counts restricted to them."""
    remaining = dict(deps)
    order = []
    ready = [n for n in dict.fromkeys(roots) if remaining[n] == 0]
    while ready:
        n = ready.pop()
        order.append(n)
        for e in n._next:
            if e is not None:
                m = e[0]
                remaining[m] -= 1
                if remaining[m] == 0:
                    ready.append(m)
    needed: set[G.Node] = set()
    for n in reversed(order):
        if n in targets or any(e is not None and e[0] in needed for e in n._next):
            needed.add(n)
    counts = {n: 0 for n in needed}
    for n in needed:
        for e in n._next:
            if e is not None and e[0] in needed:
                counts[e[0]] += 1
    return needed, counts


def run_backward(
    root_edges: Sequence[tuple[G.Node, int]],
    root_grads: Sequence[Any],
    keep_graph: bool,
    create_graph: bool,
    capture: Sequence[tuple[G.Node, int]] | None = None,
    accumulate: bool = True,
) -> list[Any]:
    """Run the graph from ``root_edges`` seeded with ``root_grads``.

    With ``capture`` (autograd.grad or backward(inputs=...)), only nodes on a path to a
    captured edge run, and the gradients arriving at those edges are returned; leaves are
    accumulated only when ``accumulate`` is set.
    """
    prev = (STATE.grad_enabled, tls.mask & AUTOGRAD_BAND, STATE.graph_task)
    set_grad_mode(create_graph)
    STATE.graph_task = (next(_TASK_IDS), capture is None)
    try:
        return _execute(root_edges, root_grads, keep_graph, create_graph, capture, accumulate)
    finally:
        STATE.grad_enabled = prev[0]
        tls.mask = (tls.mask & _NOT_BAND) | prev[1]
        STATE.graph_task = prev[2]


_TASK_IDS = itertools.count()


def current_graph_task_id() -> int:
    """The id of the backward running on this thread, -1 outside backward (torch._C._current_graph_task_id)."""
    return STATE.graph_task[0]


def is_checkpoint_valid() -> bool:
    """False inside a backward that computes gradients for given ``inputs`` (autograd.grad or
    backward(inputs=...)): reentrant checkpoint cannot run there (torch.autograd._is_checkpoint_valid)."""
    return STATE.graph_task[1]


_RULE_APPLY = G.Node._apply


def _needs(nxt: tuple[Any, ...]) -> tuple[bool, ...]:
    """Which inputs of a node want a gradient: those with an edge."""
    return tuple(e is not None for e in nxt)


# The engine in four parts around ``_execute``'s loop:
#   graph discovery   _discover: the nodes reachable from the roots with their dependency counts
#                     (restricted to paths to the captured edges for ``inputs=``/``autograd.grad``)
#   ready queue       _seed: the roots' gradient buffers and the first ready nodes; the loop pops the
#                     highest sequence number first, and pushes a producer once its count hits 0
#   node execution    _run_node (tensor/pre/post hooks, capture, anomaly mode, create_graph,
#                     multi-output); the common formula node runs inline in the loop, without the
#                     checks that cannot apply to it
#   accumulation      the loop's last block (a node's gradients into its producers' buffers, validated
#                     per edge) and _run_leaf (AccumulateGrad: leaf hooks, capture, .grad accumulation)
# What runs once per node of a plain backward (the formula node, the accumulation block) stays inline
# in the loop: a Python call per node per part measurably slowed small graphs (about 2% on a 5-op
# fwd+bwd); the parts that run once per backward, per leaf or only with hooks are functions.


def _discover(root_edges: Any, capture: Any) -> tuple[
        list[G.Node], dict[G.Node, int], set[G.Node] | None, dict[G.Node, list[tuple[int, int]]], list[Any]]:
    """Graph discovery: the roots, each reachable node's dependency count, and for a capture
    (``inputs=`` / ``autograd.grad``) the nodes on a path to a captured edge (else ``None``), the
    captured edges by node and the list their gradients are returned in."""
    roots = [e[0] for e in root_edges]
    deps = _graph_nodes(roots)
    needed = None
    captured: list[Any] = []
    capture_at: dict[G.Node, list[tuple[int, int]]] = {}
    if capture is not None:
        captured = [None] * len(capture)
        for k, (n, nr) in enumerate(capture):
            capture_at.setdefault(n, []).append((nr, k))
        needed, deps = _needed(roots, deps, set(capture_at))
    return roots, deps, needed, capture_at, captured


def _seed(root_edges: Any, root_grads: Any, roots: list[G.Node], deps: dict[G.Node, int],
          needed: set[G.Node] | None) -> tuple[dict[G.Node, list[Any]], list[tuple[int, G.Node]]]:
    """The ready queue's start: the roots' gradient buffers (node -> one slot per output) and the
    roots nothing else feeds, as a heap ordered by decreasing sequence number."""
    if len(roots) == 1:  # backward() of one output (the common call): one buffer, a one-item heap
        n = roots[0]
        if needed is not None and n not in needed:
            return {}, []
        nr = root_edges[0][1]
        b = [None] * (n._n_out if n._n_out > nr else nr + 1)
        b[nr] = root_grads[0]
        return {n: b}, ([(-n._seq, n)] if deps.get(n) == 0 else [])
    buffers: dict[G.Node, list[Any]] = {}
    for (n, nr), g in zip(root_edges, root_grads):
        if needed is not None and n not in needed:
            continue
        b = buffers.get(n)
        if b is None:
            b = buffers[n] = [None] * (n._n_out if n._n_out > nr else nr + 1)
        b[nr] = g if b[nr] is None else b[nr] + g
    ready = []
    for n in dict.fromkeys(roots):
        if deps.get(n) == 0 and (needed is None or n in needed):
            ready.append((-n._seq, n))
    heapq.heapify(ready)
    return buffers, ready


def _execute(root_edges: Any, root_grads: Any, keep_graph: bool, create_graph: bool, capture: Any,
             accumulate: bool) -> list[Any]:
    roots, deps, needed, capture_at, captured = _discover(root_edges, capture)
    buffers, ready = _seed(root_edges, root_grads, roots, deps, needed)
    anomaly = GLOBAL.anomaly
    plain = needed is None and not create_graph and not anomaly
    Acc = G.AccumulateGrad
    pop = heapq.heappop
    push = heapq.heappush
    # ``direct``: the one ready node while the heap is empty (a chain's next node), run without a heap
    # push and pop; the order is the heap's, since it would be the heap's only entry.
    direct = pop(ready)[1] if ready else None
    while direct is not None or ready:
        if direct is not None:
            n = direct
            direct = None
        else:
            n = pop(ready)[1]
        buf = buffers.pop(n, None)
        cls = n.__class__
        if cls is Acc:
            if buf is not None and buf[0] is not None:
                _run_leaf(n, buf, capture_at, captured, accumulate, create_graph)
            continue
        if buf is None:
            if not keep_graph:
                n._release()
            outs: Any = ()
        elif plain and cls._apply is _RULE_APPLY and n._hooks is None and cls._n_out == 1:
            # The common node (one output, a formula, no hooks; no capture, anomaly or create_graph):
            # _run_node without the checks that cannot apply, inlined as the per-node hot path.
            versions = n._versions
            if versions:
                args = n._saved
                if args is None:
                    raise RuntimeError(G.SECOND_BACKWARD)
                j = 0  # (an index, not zip(): this runs per node and zip's iterators cost more)
                for v in versions:
                    if v is not None and args[j]._storage.version != v:
                        n._unpack(False)  # raises the version error with its details
                    j += 1
                release = not keep_graph
            elif versions is None:  # packed by saved_tensors_hooks
                args = n._unpack(False)
                release = not keep_graph and n._saved
            else:  # metadata or numbers only: never released (see Node._release)
                args = n._saved
                release = False
            nxt = n._next
            k = len(nxt)  # (_needs, inlined)
            if k == 2:
                needs = (nxt[0] is not None, nxt[1] is not None)
            elif k == 1:
                needs = (nxt[0] is not None,)
            else:
                needs = tuple(e is not None for e in nxt)
            g = buf[0]
            fn = n._fn if g._dtype.is_complex else n._fn_real
            # Positional calls for the usual arities: ``fn(needs, g, *args)`` builds a list, then a tuple, and
            # calls through C instead of the interpreter's inlined call.
            k = len(args)
            if k == 2:
                outs = fn(needs, g, args[0], args[1])
            elif k == 1:
                outs = fn(needs, g, args[0])
            elif k == 0:
                outs = fn(needs, g)
            elif k == 3:
                outs = fn(needs, g, args[0], args[1], args[2])
            else:
                outs = fn(needs, g, *args)
            del args
            if release:  # Node._release, inlined (after the formula, which may raise)
                n._saved = None
            if outs.__class__ is not tuple and outs.__class__ is not list:
                outs = (outs,)
        else:
            outs = _run_node(n, buf, needed, keep_graph, create_graph, anomaly, capture_at, captured)
        del buf
        # Accumulation along n's edges: each gradient is validated against its producer's output
        # (shape reduced, dtype cast) and summed into that producer's buffer slot; a producer whose
        # dependency count reaches 0 joins the ready queue.  (Inline: it runs once per node.)
        n_outs = len(outs)
        i = -1
        for e in n._next:
            i += 1
            if e is None:
                continue
            m = e[0]
            if needed is not None and m not in needed:
                continue
            g = outs[i] if i < n_outs else None
            if g is not None and g is not False:
                nr = e[1]
                if nr == 0:
                    if g._data.shape != m._shape or g._dtype is not m._dtype:
                        g = _validate(g, m, 0, n, i)
                    b = buffers.get(m)
                    if b is None:
                        if m._n_out == 1:
                            buffers[m] = [g]
                        else:
                            b = buffers[m] = [None] * m._n_out
                            b[0] = g
                    else:
                        b[0] = g if b[0] is None else b[0] + g
                else:
                    shape, dtype = m._out_meta(nr)
                    if g._data.shape != shape or g._dtype is not dtype:
                        g = _validate(g, m, nr, n, i)
                    b = buffers.get(m)
                    if b is None:
                        b = buffers[m] = [None] * (m._n_out if m._n_out > nr else nr + 1)
                        b[nr] = g
                    else:
                        if nr >= len(b):
                            b.extend([None] * (nr + 1 - len(b)))
                        b[nr] = g if b[nr] is None else b[nr] + g
            c = deps[m] - 1
            deps[m] = c
            if c == 0:
                if direct is None and not ready:
                    direct = m
                else:
                    if direct is not None:
                        push(ready, (-direct._seq, direct))
                        direct = None
                    push(ready, (-m._seq, m))
        # Drop this node's gradients now: a leaf's accumulator may then steal them (see _stealable).
        outs = g = None
    return captured


def _run_leaf(n: G.AccumulateGrad, buf: list[Any], capture_at: dict[G.Node, list[tuple[int, int]]],
              captured: list[Any], accumulate: bool, create_graph: bool) -> None:
    """An ``AccumulateGrad`` node: the tensor's and the leaf's hooks, then capture or the node's pre hooks,
    ``.grad`` accumulation, the post-accumulate hooks and the node's hooks."""
    var = n.variable
    g = buf[0]
    buf[0] = None  # only this frame then holds g, so _accumulate may steal it (see _STEAL_REFS)
    hooks = n._hooks
    if hooks is not None:
        g = _run_tensor_hooks(hooks, 0, g)
    vd = var.__dict__
    if vd:
        g = _leaf_hooks(var, g)
    if capture_at and n in capture_at:
        for _, k in capture_at[n]:
            captured[k] = g
        return
    if accumulate:
        if hooks is not None and (hooks.pre or hooks.post):  # the node's own hooks (rare): the full sequence
            _accumulate_leaf(n, var, g, create_graph)
            return
        _accumulate(var, g, create_graph)  # (g held by this frame alone: _accumulate may steal it)
        if vd:
            post = vd.get("_post_acc_hooks")
            if post:
                for fn in list(post.values()):
                    fn(var)


def _accumulate_leaf(n: G.AccumulateGrad, var: Tensor, g: Any, create_graph: bool) -> None:
    """What an ``AccumulateGrad`` node does with its gradient, after the tensor hooks: the node's pre hooks,
    ``.grad`` accumulation, the tensor's post-accumulate hooks, then the node's hooks (PyTorch's order)."""
    hooks = n._hooks
    if hooks is not None and hooks.pre:
        for fn in list(hooks.pre.values()):
            new = fn((g,))
            if new is not None:
                g = new[0]
    if g is not None:  # a pre hook may answer None: nothing is accumulated, as in PyTorch
        _accumulate(var, g, create_graph)
    vd = var.__dict__
    if vd:
        post = vd.get("_post_acc_hooks")
        if post:
            for fn in list(post.values()):
                fn(var)
    if hooks is not None and hooks.post:  # no grad_inputs: a leaf's node has no edges
        for fn in list(hooks.post.values()):
            fn((), (g,))


def _run_node(n: G.Node, buf: list[Any], needed: set[G.Node] | None, keep_graph: bool, create_graph: bool,
              anomaly: bool, capture_at: dict[G.Node, list[tuple[int, int]]], captured: list[Any]) -> Any:
    """Any node: tensor hooks and retain_grad on its outputs' gradients, capture, pre hooks, zeros for
    unused outputs of a multi-output node, the backward (with anomaly mode's context and NaN check),
    post hooks, then the graph's release.  Returns the gradients for ``n._next`` (``()`` if none ran)."""
    hooks = n._hooks
    nxt = n._next
    outs: Any = ()
    if hooks is not None and (hooks.tensor_pre or hooks.retain):
        for nr in range(len(buf)):
            if buf[nr] is not None:
                buf[nr] = _run_tensor_hooks(hooks, nr, buf[nr])
    if capture_at and n in capture_at:
        for nr, k in capture_at[n]:
            captured[k] = buf[nr] if nr < len(buf) else None
    if needed is None:
        needs = _needs(nxt)
    else:
        needs = tuple(e is not None and e[0] in needed for e in nxt)
    if True in needs or (hooks is not None and hooks.post):
        if hooks is not None:
            for fn in list(hooks.pre.values()):
                new = fn(tuple(buf))
                if new is not None:
                    buf = list(new)
        if n._n_out > 1:
            if len(buf) < n._n_out:
                buf.extend([None] * (n._n_out - len(buf)))
            _materialize(n, buf)
        try:
            if type(n)._apply is _RULE_APPLY and n._versions is not None and not create_graph:
                # inline Node._apply for formula nodes (the common case)
                saved = n._saved
                if saved is None:
                    raise RuntimeError(G.SECOND_BACKWARD)
                versions = n._versions
                if versions:
                    for t, v in zip(saved, versions):
                        if v is not None and t._storage.version != v:
                            n._unpack(False)  # raises the version error with its details
                outs = n._fn(needs, buf[0] if n._n_out == 1 else tuple(buf), *saved)
            else:
                outs = n._apply(buf, needs, create_graph)
        except Exception as exc:
            if anomaly:
                _anomaly_context(n, exc)
            raise
        if outs.__class__ is not tuple and outs.__class__ is not list:
            outs = (outs,)
        if anomaly and GLOBAL.anomaly_check_nan:
            _check_nan(n, outs)
        if hooks is not None and hooks.post:
            for fn in list(hooks.post.values()):
                new = fn(tuple(o if isinstance(o, Tensor) else None for o in outs), tuple(buf))
                if new is not None:
                    outs = tuple(new)
    del buf
    if not keep_graph:
        n._release()
    return outs




def _materialize(n: G.Node, buf: list[Any]) -> None:
    """Multi-output nodes get zeros for outputs nobody used (PyTorch materializes them too)."""
    T = _T()
    diff = n._diff_outs
    device = next((b.device for b in buf if b is not None), None)  # the outputs' device: a gradient that arrived
    for nr in range(len(buf)):
        if buf[nr] is None and (diff is None or nr in diff):
            shape, dtype = n._out_meta(nr)
            if dtype is not None and (dtype.is_floating_point or dtype.is_complex):
                buf[nr] = T.zeros(list(shape), dtype=dtype, device=device)


# ---- public entry points ------------------------------------------------------------------------
def _as_list(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_grads(outputs: list[Tensor], grads: list[Any], is_grads_batched: bool = False) -> list[Any]:
    T = _T()
    if len(grads) == 0:
        grads = [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs" if not grads else
                           f"Mismatch in number of grad_outputs: got {len(grads)} but expected {len(outputs)}")
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not (o.dtype.is_floating_point or o.dtype.is_complex):
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {o.dtype}")
                g = T.ones_like(o)
            out.append(g)
            continue
        if not isinstance(g, Tensor):
            g = T.tensor(g, dtype=o.dtype, device=o.device)
        if tuple(g.shape) != tuple(o.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a shape of {o.shape}.")
        if g.dtype.is_floating_point != o.dtype.is_floating_point and not g.dtype.is_complex:
            raise RuntimeError(
                f"For complex Tensors, both grad_output and output are required to have the same dtype. Mismatch in dtype: "
                f"grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype of {o.dtype}.")
        out.append(g)
    return out


def _output_edges(outputs: list[Tensor]) -> list[tuple[G.Node, int]]:
    edges = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            raise TypeError(f"backward/grad expects Tensors as outputs, got {type(o).__name__}")
        if not o._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        edges.append(V.gradient_edge(o))
    return edges


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Any = None, inputs: Any = None) -> None:
    """Compute the gradients of ``tensors`` w.r.t. graph leaves and accumulate them into ``.grad``."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_list(tensors)
    if inputs is not None:
        inputs = _as_list(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _root_grads(outputs, _as_list(grad_tensors))
    if retain_graph is None:
        retain_graph = create_graph
    edges = _output_edges(outputs)
    if not create_graph:
        grads = [g.detach() if isinstance(g, Tensor) and g._requires_grad else g for g in grads]
    if inputs is None:
        run_backward(edges, grads, retain_graph, create_graph)
        return
    for t in inputs:
        if not isinstance(t, Tensor) or not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    capture = [V.gradient_edge(t) for t in inputs]
    got = run_backward(edges, grads, retain_graph, create_graph, capture=capture, accumulate=False)
    for t, g in zip(inputs, got):
        if g is None:
            continue
        if t._grad_fn is None:  # a leaf: its node's hooks and post-accumulate hooks run as in a plain backward
            _accumulate_leaf(G.grad_accumulator(t), t, g, create_graph)
        else:
            t._grad = g.detach().clone() if t._grad is None else t._grad + g


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """The gradients of ``outputs`` w.r.t. ``inputs`` (nothing is accumulated into ``.grad``)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outs, ins, _as_list(grad_outputs), retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _root_grads(outs, _as_list(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    edges = _output_edges(outs)
    capture = [V.gradient_edge(t) for t in ins]
    got = run_backward(edges, grads, retain_graph, create_graph, capture=capture, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(ins, got)):
        if g is None:
            if materialize_grads:
                g = _T().zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
                    "if this is the desired behavior.")
        elif not create_graph and g._requires_grad:
            g = g.detach()
        result.append(g)
    return tuple(result)


def _batched_grad(outs: list[Tensor], ins: list[Tensor], grad_outputs: list[Tensor], retain_graph: Any,
                  create_graph: bool, allow_unused: bool, materialize: bool) -> tuple[Any, ...]:
    T = _T()
    n = grad_outputs[0].shape[0]
    per: list[list[Any]] = [[] for _ in ins]
    for b in range(n):
        res = grad(outs, ins, [g[b] for g in grad_outputs], retain_graph=True, create_graph=create_graph,
                   allow_unused=allow_unused, materialize_grads=materialize)
        for k, r in enumerate(res):
            per[k].append(r)
    return tuple(None if any(r is None for r in rs) else T.stack(rs) for rs in per)


_ = math
