"""Autograd kernels: one per op, compiled from its schema and derivative rule.

The kernel of a differentiable op runs the op below autograd (the autograd keys excluded from
the TLS mask, PyTorch's AutoDispatchBelowAutograd), then, if an input requires grad, records a
node holding the rule's saved values and sets the outputs' history.  Kernels are generated
Python source (like the core's entry points) so the hot path has no loops or dict lookups.
That source is compiled on the kernel's first call (``lazy_function``): a process pays only for
the ops it differentiates, not for the ~450 kernels registered when the plugin loads.
"""

from __future__ import annotations

import keyword
import threading
import weakref
from collections.abc import Callable
from types import FunctionType
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.tls import tls
from torchplug._tensor.tensor import Tensor

from . import _graph as G
from . import _views as V
from ._node_names import OVERLOAD_NUMBERS, QUALIFIED_NAMES, VARIANTS, node_name
from ._rules import NON_DIFF_ARG_NAMES, Rule
from ._state import AUTOGRAD_BAND, FW, GLOBAL, STATE, set_grad_mode

__all__ = ["functional_kernel", "inplace_kernel", "out_kernel", "not_implemented_kernel", "decompose_kernel",
           "nondiff_kernel", "diff_arg_indices", "DIFF_DTYPES", "lazy_function", "materialize"]

DIFF_DTYPES = frozenset(d for d in D.ALL_DTYPES if d.is_floating_point or d.is_complex)
_NOAG = ~K.AUTOGRAD_BAND
_BELOW = K.AFTER_AUTOGRAD
_BB = K.BACKEND_BAND
_SH = K._AUTOGRAD_BASE


def _lazy_template(*args: Any) -> Any:
    return _tp_first_call(args)  # type: ignore[name-defined]  # noqa: F821  (the stub's own globals)


_LAZY_CODE = _lazy_template.__code__
_BUILD_LOCK = threading.RLock()


def lazy_function(build: Callable[[dict[str, Any]], Callable[..., Any]], name: str) -> Callable[..., Any]:
    """A function whose generated code is compiled on its first call.

    ``build(ns)`` compiles the real function with ``ns`` as its globals and returns it; the stub (the
    object registered with the dispatcher and cached by it) then takes over its code and attributes, so
    from the second call on the stub *is* the real function, without an extra frame.  Compiling every
    kernel eagerly cost most of the plugin's load time, and a script differentiates a handful of ops.
    """
    ns: dict[str, Any] = {}
    stub = FunctionType(_LAZY_CODE, ns, name)

    def first_call(args: tuple[Any, ...]) -> Any:
        materialize(stub)
        return stub(*args)

    ns["_tp_first_call"] = first_call
    stub.__torchplug_build__ = build  # type: ignore[attr-defined]
    return stub


def materialize(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compile a ``lazy_function`` stub now (no-op for anything else); returns ``fn``."""
    if getattr(fn, "__code__", None) is not _LAZY_CODE:
        return fn
    with _BUILD_LOCK:  # two threads' first calls build once: one node class per op
        build = fn.__dict__.get("__torchplug_build__")
        if build is None:
            return fn
        real = build(fn.__globals__)
        for k, v in real.__dict__.items():
            fn.__dict__.setdefault(k, v)
        fn.__code__ = real.__code__
        del fn.__dict__["__torchplug_build__"]
    return fn


def _pyname(name: str) -> str:
    return name + "_" if keyword.iskeyword(name) else name


def redispatcher(entry: OperatorEntry) -> Callable[..., Any]:
    """Call ``entry`` at an explicit key set (the cache, then a lookup on a miss)."""
    cache_get = entry.cache.get

    def call(ks: int, *args: Any) -> Any:
        kernel = cache_get(ks)
        if kernel is None:
            kernel = DISPATCHER.lookup(entry, ks)
        return kernel(*args)

    return call


def diff_arg_indices(entry: OperatorEntry, rule: Rule | None) -> list[int]:
    """Schema positions of the differentiable tensor inputs, in order."""
    out = []
    for i, a in enumerate(entry.schema.arguments):
        if a.type.base != "Tensor" or a.is_write and not entry.schema.name.endswith("_"):
            continue
        if rule is not None and rule.inputs is not None:
            if a.name in rule.inputs:
                out.append(i)
        elif a.name not in NON_DIFF_ARG_NAMES and not (a.type.is_list and a.type.optional):
            out.append(i)
    return out


def edge(t: Any) -> Any:
    """The gradient edge of an input, or None if it does not require grad (numbers, None included)."""
    try:
        if not t._requires_grad:
            return None
    except AttributeError:
        return None
    return V.gradient_edge(t)


def _leaf_edge(t: Tensor) -> tuple[G.Node, int]:
    """The edge of a leaf whose accumulator is not alive (the kernels check for a live one first)."""
    if t._base is not None:
        return V.gradient_edge(t)  # a view made a leaf under no_grad, or one with its own accumulator
    return (G.new_accumulator(t), 0)


def _ver(x: Any) -> Any:
    st = getattr(x, "_storage", None)
    return None if st is None else st.version


def _geometry(t: Tensor) -> tuple[Any, ...]:
    return (tuple(t._data.shape), tuple(t.stride()), t.storage_offset())


def _record_anomaly(node: G.Node) -> None:
    import traceback

    node._extras()["trace"] = "".join(traceback.format_stack()[:-3])


def _pack(node: G.Node) -> None:
    """Apply the innermost saved_tensors_hooks to every saved tensor (no version checks then).

    Each entry keeps the gradient edge of a saved input that requires grad, so that under
    create_graph the unpacked tensor is reattached to it (PyTorch's SavedVariable keeps its
    grad_fn too): what the unpack hook returns carries no history of its own.
    """
    pack, unpack = STATE.saved_hooks[-1]
    out = []
    # PyTorch packs under no_grad: a hook such as ``lambda x: x * 4`` records nothing (and so does not
    # pack again, endlessly).
    prev, band = STATE.grad_enabled, tls.mask & AUTOGRAD_BAND
    set_grad_mode(False)
    try:
        for v in node._saved:
            if isinstance(v, Tensor):
                version = v._storage.version
                packed = pack(v)
                if v._storage.version != version:
                    raise RuntimeError(PACK_INPLACE)
                out.append((packed, unpack, V.gradient_edge(v) if v._requires_grad else None))
            else:
                out.append((v, None, None))
    finally:
        STATE.grad_enabled = prev
        tls.mask = (tls.mask & ~AUTOGRAD_BAND) | band
    node._saved = tuple(out)
    node._versions = None


PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook cannot be "
    "modified by in-place operations as this can lead to unexpected side-effects. Please open an issue if you "
    "need to perform in-place operations on the input to a pack hook."
)


def _undifferentiable_dtype(result: Tensor) -> None:
    # PyTorch's error when a differentiable op gives an integer/bool result of an input that requires
    # grad: the result cannot carry the history.
    from torchplug._ops.composites import scalar_type_name

    raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(result._dtype)}")


def _alias_saved(t: Tensor) -> Tensor:
    """The alias of an output saved for backward; it shares the output's tangents, so a backward
    formula run under forward AD (forward-over-reverse) sees them, as PyTorch's SavedVariable does."""
    a = G.alias_of(t)
    d = t.__dict__
    if d:
        fw = d.get("_fw")
        if fw:
            a.__dict__["_fw"] = fw
            a._keyset |= G.autograd_bit(a._keyset)
    return a


# Ops whose integer result simply does not require grad (casts and dtype views).
_DTYPE_CASTS = {"aten::_to_copy", "aten::view.dtype"}

_GLOBALS = {
    "_undiff_dtype": _undifferentiable_dtype,
    "_tls": tls, "_NOAG": _NOAG, "_BELOW": _BELOW, "_BB": _BB, "_SH": _SH, "_edge": V.gradient_edge,
    "_leaf_edge": _leaf_edge,
    "_edge_any": edge, "_ver": _ver, "_alias": G.alias_of, "_alias_fw": _alias_saved, "_geometry": _geometry,
    "_G": GLOBAL, "_S": STATE,
    "_anomaly": _record_anomaly, "_pack": _pack, "_DIFF": DIFF_DTYPES, "_new": object.__new__,
    "_next_seq": G.SEQ.__next__, "_Tensor": Tensor, "_FW": FW,
}


FORWARD_BUILT: set[str] = set()  # ops whose forward-AD function ran at least once (the coverage test reads it)


def forward_fn(entry: OperatorEntry, rule: Rule, source: OperatorEntry | None = None) -> Callable[..., Any]:
    """The op's forward-AD function (``_forward.make_forward``), built on its first call: most ops
    never see a dual tensor, so their strategies are not compiled at import.  ``source``: the
    functional op whose rule an in-place ``entry`` uses (the function then takes ``(args, orig, self)``)."""
    from ._forward import make_forward, make_forward_inplace
    from ._jvp import strategy_for

    box: list[Callable[..., Any]] = []
    inplace = entry.schema.is_mutable

    def fwd(*a: Any) -> None:
        if not box:
            src = source if source is not None else entry
            diff = diff_arg_indices(src, rule)
            strategy = strategy_for(src, rule, diff, _saver(src, rule))
            box.append((make_forward_inplace if inplace else make_forward)(src, strategy, diff))
            FORWARD_BUILT.add(entry.name)
        box[0](*a)

    fwd.__qualname__ = f"forward_ad[{entry.name}]"
    return fwd


def forward_label(entry: OperatorEntry, rule: Rule | None) -> str:
    """How the kernel computes tangents, for its name in ``explain()`` and ``kernels()``."""
    from ._jvp import strategy_kind

    if rule is None:
        return "no forward AD"
    return f"forward AD: {strategy_kind(entry, rule)}"


def _name_kernel(kernel: Callable[..., Any], name: str, forward: str) -> None:
    kernel.__module__ = "torchplug_autograd"
    kernel.__qualname__ = f"{name} ({forward})"


def _forward_refused(args: tuple[Any, ...], name: str) -> None:
    from ._forward import has_tangent, not_implemented_error

    if has_tangent(args):
        raise not_implemented_error(name)


def _save_exprs(entry: OperatorEntry, rule: Rule, names: list[str], self_override: str | None = None) -> tuple[list[str], list[str], list[int]]:
    """Python expressions for each saved item and its version (``None`` when not a tensor)."""
    args = {a.name: (i, a) for i, a in enumerate(entry.schema.arguments)}
    values, versions, result_slots = [], [], []
    for slot, spec in enumerate(rule.saves):
        base, _, attr = spec.partition(".")
        if base.startswith("result"):
            k = base[len("result"):]
            src = "result" if not k else f"result[{int(k)}]"
            if attr:
                values.append(_attr_expr(src, attr))
                versions.append("None")
            else:
                # (the tangent-sharing alias only while a forward-AD level exists: the plain one is leaner)
                values.append(f"(_alias_fw({src}) if _FW.live else _alias({src}))")
                versions.append(f"{src}._storage.version")
                result_slots.append(slot)
            continue
        if base not in args:
            raise ValueError(f"rule for {entry.name} saves {spec!r}, which is not an argument of {entry.schema}")
        i, a = args[base]
        local = names[i]
        if self_override is not None and i == 0:
            local = self_override
        if attr:
            values.append(_attr_expr(local, attr))
            versions.append("None")
        elif a.type.base == "Tensor" and not a.type.is_list:
            values.append(local)
            plain = not a.type.optional and not entry.wrapped_numbers
            # wrapped numbers may arrive as Python scalars: only they take the _ver call
            versions.append(f"{local}._storage.version" if plain else
                            f"({local}._storage.version if {local}.__class__ is _Tensor else _ver({local}))")
        else:
            values.append(local)
            versions.append("None")
    return values, versions, result_slots


def _attr_expr(local: str, attr: str) -> str:
    if attr == "shape":
        return f"{local}._data.shape"
    if attr == "dtype":
        return f"{local}._dtype"
    if attr == "device":
        return f"{local}._device"
    if attr == "shapes":
        return f"tuple(t._data.shape for t in {local})"
    if attr == "geometry":
        return f"_geometry({local})"
    if attr == "dim":
        return f"len({local}._data.shape)"
    raise ValueError(f"unknown saved attribute {attr!r}")


def node_class(rule: Rule, entry: OperatorEntry, result_slots: list[int], n_out: int) -> type[G.Node]:
    fn = rule.fn
    # an in-place op with its own derivatives.yaml entry has its own name (elu_: EluBackward1)
    name = node_name(entry.name) if entry.name.split("::")[-1] in OVERLOAD_NUMBERS else rule.name
    rets = entry.schema.returns
    view_op = bool(rets) and rets[0].alias is not None and not rets[0].alias.is_write
    return type(name, (G.Node,), {
        "_view_op": view_op,
        "__slots__": (), "_name": QUALIFIED_NAMES.get(name, name), "_fn": staticmethod(fn), "_saves": rule.saves,
        # a holomorphic rule's formula without its conjugating wrapper, which a real gradient does not need
        "_fn_real": staticmethod(getattr(fn, "holomorphic_of", fn)),
        "_result_slots": tuple(result_slots), "_n_out": n_out, "_op": entry.name,
        # outputs that never carry a gradient (e.g. nll_loss's total_weight) are not materialized
        "_diff_outs": frozenset(rule.outputs) if rule.outputs is not None else None,
    })


def _outputs(entry: OperatorEntry, rule: Rule | None) -> tuple[int, list[int]]:
    rets = entry.schema.returns
    n_out = len(rets)
    if n_out == 1 and rets[0].type.is_list:
        return -1, [0]
    diff = list(rule.outputs) if rule is not None and rule.outputs is not None else list(range(n_out))
    return n_out, diff


def functional_kernel(entry: OperatorEntry, rule: Rule) -> Callable[..., Any]:
    """The autograd kernel of a functional op with a derivative rule (generated source, compiled on the
    kernel's first call: see ``lazy_function``)."""
    if _outputs(entry, rule)[0] == -1:
        return list_output_kernel(entry, rule)
    kernel = lazy_function(lambda ns: _build_functional(entry, rule, ns), "kernel")
    _name_kernel(kernel, f"autograd[{entry.name}]", forward_label(entry, rule))
    return kernel


def _build_functional(entry: OperatorEntry, rule: Rule, ns: dict[str, Any]) -> Callable[..., Any]:
    """Compile ``functional_kernel``'s source into ``ns`` and return the function."""
    schema = entry.schema
    names = [_pyname(a.name) for a in schema.arguments]
    diff = diff_arg_indices(entry, rule)
    n_out, diff_outs = _outputs(entry, rule)
    values, versions, result_slots = _save_exprs(entry, rule, names)
    cls = node_class(rule, entry, result_slots, n_out)
    ns.update(_GLOBALS)
    ns["_get"] = entry.cache.get
    ns["_miss"] = lambda ks, _e=entry: DISPATCHER.lookup(_e, ks)
    ns["_Node"] = cls
    ns["_fwd"] = forward_fn(entry, rule)
    node_expr = _variant_expr(entry, cls, diff, ns)
    params = ", ".join(names)
    body = [_refuse_check(entry, rule, names, ns)] if rule.refuse else []
    body += [
        "_old = _tls.mask",  # generated locals start with '_': arguments (k, a, r...) keep their names
        "_tls.mask = _old & _NOAG",
        "try:",
        "    ks &= _BELOW",
        "    _k = _get(ks)",
        "    if _k is None:",
        "        _k = _miss(ks)",
        f"    result = _k({params})",
        "finally:",
        "    _tls.mask = _old",
        # forward AD (a dual level exists): tangents first; under no_grad only they are computed
        "if _FW.live:",
        "    if _FW.on:",
        f"        _fwd(({params},), result)",
        "    if not _S.grad_enabled:",
        "        return result",
    ]
    edge_names = []
    for j, i in enumerate(diff):
        a = schema.arguments[i]
        x = names[i]
        e = f"e{j}"
        if a.type.is_list:
            body.append(f"{e} = tuple(_edge_any(t) for t in {x})")
            edge_names.append(f"*{e}")
            continue
        body += [
            "try:",
            f"    if {x}._requires_grad:",
            f"        _f = {x}._grad_fn",
            "        if _f is None:",  # a leaf: its accumulator, weakly cached in _autograd_meta
            f"            _r = {x}._autograd_meta",
            "            _a = _r() if _r is not None else None",
            f"            {e} = (_a, 0) if _a is not None else _leaf_edge({x})",
            f"        elif {x}._base is None:",
            f"            {e} = (_f, {x}._autograd_meta)",
            "        else:",
            f"            {e} = _edge({x})",
            "    else:",
            f"        {e} = None",
            "except AttributeError:",
            f"    {e} = None",
        ]
        edge_names.append(e)
    checks = [f"{e[1:]} == (None,) * len({e[1:]})" if e.startswith("*") else f"{e} is None" for e in edge_names]
    body.append(f"if {' and '.join(checks) or 'True'}:\n    return result")
    outs = ["result"] if n_out == 1 else [f"result[{k}]" for k in range(n_out)]
    # Multi-output ops may leave outputs undefined (None: convolution_backward's output_mask).
    optional = n_out > 1 and (any(r.type.optional for r in schema.returns) or entry.name.endswith("_backward"))
    first = outs[diff_outs[0]] if diff_outs else "result"
    if optional:
        present = " or ".join(f"({o} is not None and {o}._dtype in _DIFF)" for o in (outs[k] for k in diff_outs))
        body.append(f"if not ({present or 'False'}):\n    return result")
    elif entry.name not in _DTYPE_CASTS:
        # an integer/bool result of an input that requires grad (sum(dtype=torch.int64), masked_fill of an
        # integer self with a value that requires grad): PyTorch refuses to record it
        body.append(f"if {first}._dtype not in _DIFF:\n    _undiff_dtype({first})")
    else:
        body.append(f"if {first}._dtype not in _DIFF:\n    return result")
    # Slots are filled directly (no __init__ call): this runs once per recorded op.
    body += [
        f"node = _new({node_expr})",
        f"node._next = ({', '.join(edge_names)},)",
        f"node._saved = ({', '.join(values)},)" if values else "node._saved = ()",
        f"node._versions = ({', '.join(versions)},)" if any(v != "None" for v in versions) else "node._versions = ()",
        (f"node._shape = {outs[0]}._data.shape if {outs[0]} is not None else ()" if optional
         else f"node._shape = {outs[0]}._data.shape"),
        (f"node._dtype = {outs[0]}._dtype if {outs[0]} is not None else None" if optional
         else f"node._dtype = {outs[0]}._dtype"),
        "node._seq = _next_seq()",
        "node._hooks = None",
    ]
    if n_out > 1:
        if optional:  # an undefined output has no metadata: nothing is materialized for it
            meta = ", ".join(f"{k}: (({o}._data.shape, {o}._dtype) if {o} is not None else ((), None))"
                             for k, o in ((k, outs[k]) for k in range(1, n_out)))
        else:
            meta = ", ".join(f"{k}: ({outs[k]}._data.shape, {outs[k]}._dtype)" for k in range(1, n_out))
        body.append(f"node._extra = {{'out_meta': {{{meta}}}}}")
    else:
        body.append("node._extra = None")
    body.append("if _G.anomaly:\n    _anomaly(node)")
    if values:
        body.append("if _G.saved_hooks_live and _S.saved_hooks:\n    _pack(node)")
    for k in diff_outs:
        o = outs[k]
        marks = [
            f"{o}._grad_fn = node",
            f"{o}._autograd_meta = {k}",
            f"{o}._requires_grad = True",
            f"{o}._keyset |= ({o}._keyset & _BB) << _SH",
        ]
        if optional:
            marks = [f"if {o} is not None:"] + ["    " + m for m in marks]
        body += marks
    rets = schema.returns
    if n_out == 1 and rets[0].alias is not None and not rets[0].alias.is_write:
        # A differentiable view: remember the version its history belongs to (see _views.refresh_view).
        body.append("if result._base is not None:\n    result.__dict__['_vv'] = result._storage.version")
    body.append("return result")
    src = f"def kernel(ks, {params}):\n" + "\n".join("    " + line for chunk in body for line in chunk.split("\n"))
    code = compile(src, f"<autograd kernel {entry.name}>", "exec")
    exec(code, ns)
    kernel = ns["kernel"]
    kernel.__torchplug_source__ = src
    kernel.node_class = cls
    return kernel


def list_output_kernel(entry: OperatorEntry, rule: Rule) -> Callable[..., Any]:
    """Autograd for an op returning a list of tensors (split, unbind): one node with an output per element.

    The formula receives a tuple of gradients (zeros for the elements nobody used).  When the outputs
    are views, each is marked as one of several views one function returned, which refuses in-place
    writes to them as PyTorch does (``_views.check_view_write``).
    """
    diff = diff_arg_indices(entry, rule)
    saver = _saver(entry, rule)
    base_cls = node_class(rule, entry, saver.result_slots, 1)
    classes: dict[int, type[G.Node]] = {}
    call = redispatcher(entry)
    views = entry.schema.returns[0].alias is not None
    fwd = forward_fn(entry, rule)
    mark = base_cls._name[:-len("Backward0")] if base_cls._name.endswith("Backward0") else base_cls._name

    def kernel(ks: int, *args: Any) -> Any:
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            result = call(ks & _BELOW, *args)
        finally:
            tls.mask = old
        if FW.live:
            if FW.on:
                fwd(args, result)
            if not STATE.grad_enabled:
                return result
        edges = tuple(edge(args[i]) for i in diff)
        if not result or all(e is None for e in edges) or result[0]._dtype not in DIFF_DTYPES:
            return result
        n = len(result)
        cls = classes.get(n)
        if cls is None:
            cls = classes[n] = type(base_cls.__name__, (base_cls,), {"__slots__": (), "_n_out": n})
        node = cls()
        node._next = edges
        node._saved, versions = saver(args[0], result, *args)
        if any(v is not None for v in versions):
            node._versions = versions
        node._shape = result[0]._data.shape
        node._dtype = result[0]._dtype
        node._extra = {"out_meta": {k: (r._data.shape, r._dtype) for k, r in enumerate(result) if k}}
        if GLOBAL.anomaly:
            _record_anomaly(node)
        if node._saved and GLOBAL.saved_hooks_live and STATE.saved_hooks:
            _pack(node)
        for k, r in enumerate(result):
            G.set_history(r, node, k)
            if views and r._base is not None:
                r.__dict__["_vv"] = r._storage.version
                r.__dict__["_multi_view"] = (mark, k)
        return result

    _name_kernel(kernel, f"autograd_list[{entry.name}]", forward_label(entry, rule))
    kernel.node_class = base_cls
    return kernel


def _refuse_check(entry: OperatorEntry, rule: Rule, names: list[str], ns: dict[str, Any]) -> str:
    """Source raising PyTorch's error when an input without a formula requires grad."""
    ns["_not_diff"] = _not_differentiable
    op = entry.name.split("::")[-1].split(".")[0]
    lines = []
    for i, a in enumerate(entry.schema.arguments):
        if a.name in rule.refuse:
            x = names[i]
            # (reached under no_grad only while a forward-AD level exists: no history, no refusal then)
            lines.append(f"if {x} is not None and {x}._requires_grad and _S.grad_enabled:\n"
                         f"    _not_diff({op!r}, {a.name!r})")
    return "\n".join(lines)


def _not_differentiable(op: str, arg: str) -> None:
    raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{arg}'. This input "
                       "cannot have requires_grad True.")


def _variant_expr(entry: OperatorEntry, cls: type[G.Node], diff: list[int], ns: dict[str, Any]) -> str:
    """The expression choosing the node class of one call (PyTorch's name of the overload it stands for)."""
    variants = VARIANTS.get(entry.name)
    if not variants:
        return "_Node"
    diff_names = [entry.schema.arguments[i].name for i in diff]
    expr = "_Node"
    for k, (cond, name, hidden) in reversed(list(enumerate(variants))):  # conditions name schema arguments
        hidden_pos = tuple(diff_names.index(h) for h in hidden)
        ns[f"_V{k}"] = type(name, (cls,), {"__slots__": (), "_name": name, "_hidden": hidden_pos})
        expr = f"_V{k} if ({cond}) else {expr}"
    return expr


def _variant_chooser(entry: OperatorEntry, cls: type[G.Node], diff: list[int]) -> Callable[..., Any] | None:
    """``choose(*args) -> node class`` for the generic (in-place) kernels of ops with name variants."""
    if entry.name not in VARIANTS:
        return None

    def build(ns: dict[str, Any]) -> Callable[..., Any]:
        ns.update(_GLOBALS)
        ns["_Node"] = cls
        expr = _variant_expr(entry, cls, diff, ns)
        params = ", ".join(_pyname(a.name) for a in entry.schema.arguments)
        return eval(compile(f"lambda {params}: {expr}", f"<autograd variants {entry.name}>", "eval"), ns)

    return lazy_function(build, "choose")


def _saver(entry: OperatorEntry, rule: Rule) -> Callable[..., Any]:
    """``saver(orig_self, result, *args) -> (saved, versions)`` for the generic (in-place) kernels."""
    names = [_pyname(a.name) for a in entry.schema.arguments]
    values, versions, result_slots = _save_exprs(entry, rule, names, self_override="orig_self")
    src = (f"def saver(orig_self, result, {', '.join(names)}):\n"
           f"    return ({''.join(v + ', ' for v in values)}), ({''.join(v + ', ' for v in versions)})")

    def build(ns: dict[str, Any]) -> Callable[..., Any]:
        ns.update(_GLOBALS)
        exec(compile(src, f"<autograd saver {entry.name}>", "exec"), ns)
        return ns["saver"]

    saver = lazy_function(build, "saver")
    saver.result_slots = result_slots  # type: ignore[attr-defined]
    return saver


def _leaf_inplace_error() -> RuntimeError:
    return RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def check_inplace(t: Tensor) -> None:
    """PyTorch's checks before writing in place to a tensor that takes part in autograd (for a view,
    first the refusals of how it was made, as PyTorch's handle_view_on_rebase)."""
    base = t._base
    if base is None:
        if t._requires_grad and t._grad_fn is None:
            raise _leaf_inplace_error()
        return
    if STATE.grad_enabled:
        V.check_view_write(t)
    if base._requires_grad and base._grad_fn is None and t._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def inplace_kernel(entry: OperatorEntry, rule: Rule, functional: OperatorEntry | None) -> Callable[..., Any]:
    """Autograd for ``op_(self, ...)``: the functional op's formula, with self's history rebased."""
    from ._views import rebase_history

    source = functional if functional is not None else entry
    diff = diff_arg_indices(source, rule)
    saver = _saver(source, rule)
    n_out, _ = _outputs(source, rule)
    cls = node_class(rule, entry, saver.result_slots, 1)
    choose = _variant_chooser(source, cls, diff)
    needs_orig = any(s == "self" for s in rule.saves)
    call = redispatcher(entry)
    clone = DISPATCHER.entry("aten::clone").call
    name = entry.name

    fwd = forward_fn(entry, rule, source)

    def kernel(ks: int, *args: Any) -> Any:
        if FW.live:
            return _inplace_forward(ks, args)
        return backward_part(ks, *args)

    def backward_part(ks: int, *args: Any) -> Any:
        self = args[0]
        check_inplace(self)
        edges = []
        for i in diff:
            a = args[i]
            if isinstance(a, (list, tuple)):
                edges.extend(edge(t) for t in a)
            else:
                edges.append(edge(a))
        orig = self
        if needs_orig and self._requires_grad:
            # The formula reads self's value from before the write: clone it with autograd on (as
            # PyTorch's original_self), so create_graph differentiates through its history too.
            orig = clone(self)
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            if all(e is None for e in edges):
                return call(ks & _BELOW, *args)
            if needs_orig and orig is self:
                orig = clone(self)
            result = call(ks & _BELOW, *args)
        finally:
            tls.mask = old
        if self._dtype not in DIFF_DTYPES:
            return result
        node = cls() if choose is None else choose(*args)()
        node._next = tuple(edges)
        node._saved, versions = saver(orig, self, *args)
        if any(v is not None for v in versions):
            node._versions = versions
        node._shape = self._data.shape
        node._dtype = self._dtype
        if GLOBAL.anomaly:
            _record_anomaly(node)
        if node._saved and GLOBAL.saved_hooks_live and STATE.saved_hooks:
            _pack(node)
        rebase_history(self, node)
        return result

    def _inplace_forward(ks: int, args: tuple[Any, ...]) -> Any:
        # A dual level exists: the tangent needs self's value from before the write (when the rule
        # reads it), then the backward recording runs as usual (unless grad mode is off).
        from ._forward import has_tangent

        self = args[0]
        if not (FW.on and has_tangent(args)):
            if STATE.grad_enabled:
                return backward_part(ks, *args)
            return _below(ks, args)
        on = FW.on
        # the strategies read self's value from before the write; with nested levels an inner level's
        # formula must see its outer tangents too, so the clone carries them then
        FW.on = len(FW.levels) > 1
        try:
            orig = clone(self)
        finally:
            FW.on = on
        result = backward_part(ks, *args) if STATE.grad_enabled else _below(ks, args)
        fwd(args, orig, self)
        return result

    def _below(ks: int, args: tuple[Any, ...]) -> Any:  # grad mode off: no leaf checks, no history
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            return call(ks & _BELOW, *args)
        finally:
            tls.mask = old

    _name_kernel(kernel, f"autograd_inplace[{name}]", forward_label(source, rule))
    kernel.node_class = cls
    return kernel


def _run_below(call: Callable[..., Any], ks: int, args: tuple[Any, ...]) -> Any:
    old = tls.mask
    tls.mask = old & _NOAG
    try:
        return call(ks & _BELOW, *args)
    finally:
        tls.mask = old


def out_kernel(entry: OperatorEntry) -> Callable[..., Any]:
    """``op.out(...)``: PyTorch refuses to differentiate through ``out=``."""
    call = redispatcher(entry)
    written = set(entry.schema.mutated_argument_indices)
    inputs = [i for i, a in enumerate(entry.schema.arguments) if a.type.base == "Tensor" and i not in written]
    fname = entry.schema.name

    out_name = f"{fname}_out"  # PyTorch's name in its forward-AD refusal: add_out, mm_out

    def kernel(ks: int, *args: Any) -> Any:
        if FW.live:
            if FW.on:
                from ._forward import has_tangent

                if has_tangent(tuple(args[i] for i in inputs)):
                    raise NotImplementedError(f"Trying to use forward AD with {out_name} that does not support it "
                                              "because it is an out= function")
            if not STATE.grad_enabled:  # reached under no_grad only for forward AD's sake
                return _run_below(call, ks, args)
        for i in inputs:
            a = args[i]
            items = a if isinstance(a, (list, tuple)) else (a,)
            if any(getattr(t, "_requires_grad", False) for t in items):
                raise RuntimeError(
                    f"{fname}(): functions with out=... arguments don't support automatic differentiation, but one of "
                    "the arguments requires grad."
                )
        for i in written:
            t = args[i]
            if t is not None and not isinstance(t, (list, tuple)):
                check_inplace(t)
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            return call(ks & _BELOW, *args)
        finally:
            tls.mask = old

    _name_kernel(kernel, f"autograd_out[{entry.name}]", "out=: no forward AD")
    return kernel


def nondiff_kernel(entry: OperatorEntry, detach: bool = False) -> Callable[..., Any]:
    """Run below autograd; outputs never require grad (``detach`` also drops the view link)."""
    call = redispatcher(entry)

    def kernel(ks: int, *args: Any) -> Any:
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            result = call(ks & _BELOW, *args)
        finally:
            tls.mask = old
        if detach:
            result._base = None
        return result

    _name_kernel(kernel, f"autograd_nondiff[{entry.name}]", "forward AD: no tangent")
    return kernel


class NotImplementedNode(G.Node):
    __slots__ = ()
    _name = "torch::autograd::NotImplemented"  # PyTorch's name(); the type name is NotImplemented

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        raise NotImplementedError(
            f"the derivative for '{self._extra['op']}' is not implemented. Add a rule for it in "  # type: ignore[index]
            "torchplug_autograd/_formulas.py (one @rule function)."
        )


NotImplementedNode.__name__ = "NotImplemented"  # PyTorch's type name of such nodes


def not_implemented_kernel(entry: OperatorEntry) -> Callable[..., Any]:
    """Ops without a rule: outputs get a node that fails loudly at backward, naming the op."""
    call = redispatcher(entry)
    inputs = [i for i, a in enumerate(entry.schema.arguments) if a.type.base == "Tensor"]
    name = entry.name
    short = name.split("::")[-1].split(".")[0]
    mutated = entry.schema.mutated_argument_indices

    def kernel(ks: int, *args: Any) -> Any:
        if FW.live:
            if FW.on:
                _forward_refused(args, name)
            if not STATE.grad_enabled:
                return _run_below(call, ks, args)
        edges = []
        for i in inputs:
            a = args[i]
            if isinstance(a, (list, tuple)):
                edges.extend(edge(t) for t in a)
            elif a is None or isinstance(a, Tensor):  # a number stands for PyTorch's Scalar overload: no edge
                edges.append(edge(a))
        for i in mutated:
            t = args[i]
            if isinstance(t, Tensor):
                check_inplace(t)
        old = tls.mask
        tls.mask = old & _NOAG
        try:
            result = call(ks & _BELOW, *args)
        finally:
            tls.mask = old
        if all(e is None for e in edges):
            return result
        outs = result if isinstance(result, (list, tuple)) else (result,)
        diff_outs = [(k, o) for k, o in enumerate(outs) if isinstance(o, Tensor) and o._dtype in DIFF_DTYPES]
        if not diff_outs:
            return result
        node = NotImplementedNode()
        # PyTorch's autograd-not-implemented fallback collects the edges of the inputs that require grad only
        node._next = tuple(e for e in edges if e is not None)
        node._extra = {"op": short, "out_meta": {k: (o._data.shape, o._dtype) for k, o in enumerate(outs)
                                                    if isinstance(o, Tensor)}}
        node._shape, node._dtype = node._extra["out_meta"].get(0, ((), None))
        for k, o in diff_outs:
            G.set_history(o, node, k)
        return result

    _name_kernel(kernel, f"autograd_not_implemented[{name}]", "forward AD: refused, no formula")
    return kernel


def decompose_kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A CompositeImplicitAutograd op whose backend has its own kernel: differentiate the decomposition."""

    def kernel(ks: int, *args: Any) -> Any:
        return fn(*args)

    _name_kernel(kernel, f"autograd_decompose[{getattr(fn, '__qualname__', fn)}]",
                 "forward AD: through the decomposition")
    return kernel


_ = weakref  # (kept for type checkers of grad accumulators)
