"""Generated per-op entry points: argument checks, key-set extraction and the cache hit.

Each operator gets a Python function compiled from its schema, so a call costs what a
hand-written wrapper would: CPython binds the arguments natively, each tensor argument
contributes its key set with one attribute read, cheap ``__class__`` guards check the rest,
and the kernel is one dict hit away.  Nothing is parsed or built per call.

The compile happens on an entry point's first call (:func:`build_entry` returns a stub with the final
signature that swaps the compiled code into itself), so ``import torchplug`` compiles none of them.

Where the optional C module ``_centry`` is built, an op whose schema starts with one or two plain tensors
gets a C ``Entry`` wrapping that function instead: armed when the function is compiled, it takes the calls
that pass just those tensors positionally (key set, TLS, cache hit and kernel call in C) and hands every
other call to the generated function, which stays the reference (``TORCHPLUG_PURE_PYTHON=1``: none).
"""

from __future__ import annotations

import importlib
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType
from typing import Any

from torchplug._base.env import pure_python
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.schema import NO_DEFAULT, Argument, FunctionSchema, SchemaType
from torchplug._dispatch.tls import tls

__all__ = ["ArgContext", "CONVERTERS", "IDENTIFIER_DEFAULTS", "register_converter", "build_entry", "entry_source", "python_name",
           "python_entry", "configure_c_entries", "observe_entry_frames", "C_ENTRIES"]


@dataclass(frozen=True, slots=True)
class ArgContext:
    """Where an argument sits, so conversion errors can name the op, the argument and the type."""

    op: str  # display name, e.g. 'add' or 'aten::add.Tensor'
    name: str
    position: int  # 1-based, like PyTorch's messages
    type: SchemaType

    def fail(self, value: Any, expected: str | None = None) -> TypeError:
        what = expected or str(self.type)
        return TypeError(
            f"{self.op}(): argument '{self.name}' (position {self.position}) must be {what}, "
            f"not {type(value).__name__}"
        )


# base type (or 'base[]' for lists) -> (guard expression with {x}, converter(value, ctx))
CONVERTERS: dict[str, tuple[str, Callable[[Any, ArgContext], Any]]] = {}
# schema identifier defaults (contiguous_format, Mean, long, ...) -> Python value
IDENTIFIER_DEFAULTS: dict[str, Any] = {"Mean": 1, "Sum": 2, "None": 0}
# names the guard expressions may use (e.g. _DTYPE, _DEVICE), set by the core
GUARD_GLOBALS: dict[str, Any] = {}


def register_converter(type_key: str, guard: str, convert: Callable[[Any, ArgContext], Any]) -> None:
    """Install the check for one schema type; ``guard`` is a fast expression over ``{x}``."""
    CONVERTERS[type_key] = (guard, convert)


def python_name(name: str) -> str:
    """Schema argument names that are Python keywords get a trailing underscore."""
    return name + "_" if keyword.iskeyword(name) else name


def _default_value(arg: Argument) -> Any:
    value = arg.default
    if isinstance(value, list):
        return tuple(value)
    name = getattr(value, "name", None)
    if name is not None and type(value).__name__ == "Identifier":
        return IDENTIFIER_DEFAULTS.get(name, name)
    return value


def _tensor_list_keyset(values: Any, ctx: ArgContext) -> int:
    ks = 0
    try:
        for v in values:
            if v is not None:
                ks |= v._keyset
    except (AttributeError, TypeError):
        raise ctx.fail(values, "tuple of Tensors") from None
    return ks


def _not_tensor(value: Any, ctx: ArgContext) -> int:
    raise ctx.fail(value, "Tensor")


_NUMBERS = (bool, int, float, complex)


def _number_key(value: Any) -> int | None:
    """0 for an operand a binary operator takes as a number, None for one it does not take (no tensor either)."""
    if isinstance(value, _NUMBERS):
        return 0
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return 0  # NumPy scalar
    return None


def _wrapped_number(value: Any, ctx: ArgContext) -> int:
    # Binary pointwise ops take Python numbers where a Tensor is expected; the kernel sees the
    # number itself (a "wrapped number" for type promotion) and it adds no key.
    key = _number_key(value)
    if key is None:
        raise ctx.fail(value, "Tensor or number")
    return key


def _invalid_combination(op: str, signature: str, args: tuple[Any, ...]) -> None:
    # PyTorch's words when no overload of a function takes these argument types (a number where only
    # a Scalar overload of another argument would take one).
    got = ", ".join("Tensor" if hasattr(a, "_keyset") else type(a).__name__ for a in args)
    raise TypeError(f"{op}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    f" * ({signature})")


def _empty_tensor_list(op: str) -> None:
    if op == "stack":  # PyTorch's words differ per op
        raise RuntimeError("stack expects a non-empty TensorList")
    raise ValueError(f"torchplug.{op}(): expected a non-empty list of Tensors")


def _no_tensor_given(op: str) -> None:
    raise TypeError(f"{op}(): expected at least one argument to be a Tensor, but all were numbers")


def _stub_template():  # the body of every entry point until its first call (see build_entry)
    return _tp_first_call(_tp_locals())


_STUB_CODE = _stub_template.__code__


def _load_centry() -> Any:
    """The optional C entry points (``_centry.c``), or None: not built, or ``TORCHPLUG_PURE_PYTHON`` set."""
    if pure_python():
        return None
    try:
        return importlib.import_module("torchplug._dispatch._centry")
    except ImportError:  # not built (no compiler at install time): the Python entry points serve every call
        return None


_CENTRY = _load_centry()
C_ENTRIES = _CENTRY is not None  # whether entry points with a C-eligible signature dispatch in C
_C_MAX_TENSORS = 2
_C_MAX_ARGS = 8


_FRAME_OBSERVERS: set[Any] = set()


def observe_entry_frames(owner: Any, observing: bool) -> None:
    """Make every call run its Python entry point while some ``owner`` reads the entry's frame from the stack
    (the allocator's ``current_op`` while it records memory history or has subscribers); C entries otherwise."""
    if observing:
        _FRAME_OBSERVERS.add(owner)
    else:
        _FRAME_OBSERVERS.discard(owner)
    if _CENTRY is not None:
        _CENTRY.set_enabled(not _FRAME_OBSERVERS)


def configure_c_entries(tensor_class: type) -> None:
    """Tell the C entry points which class carries ``_keyset`` (called by the tensor layer)."""
    if _CENTRY is not None:
        _CENTRY.configure(tensor_class)


def _c_candidate(schema: FunctionSchema) -> bool:
    """Whether the C path could take this schema's calls: 1-2 leading Tensor arguments, every other one defaulted."""
    args = schema.arguments
    n = 0
    while n < len(args) and _plain_tensor(args[n]):
        n += 1
    return 1 <= n <= _C_MAX_TENSORS and len(args) <= _C_MAX_ARGS and all(a.has_default for a in args[n:])


def _plain_tensor(arg: Argument) -> bool:
    t = arg.type
    return t.base == "Tensor" and not t.is_list and not t.optional and not arg.has_default and not arg.kwarg_only


def build_entry(
    entry: OperatorEntry,
    *,
    display: str | None = None,
    first_name: str | None = None,
    out_entry: OperatorEntry | None = None,
    func_name: str | None = None,
    numbers: Any = None,
    combination_errors: Any = (),
    method: bool = False,
    binary_operator: bool = False,
) -> Callable[..., Any]:
    """The entry point for ``entry``: a function with the schema's signature, compiled on its first call.

    Compiling ~1500 entry points up front costs a large part of ``import torchplug``, and a program
    calls few of them, so this returns a stub with the final signature (names, defaults, keyword-only
    arguments: ``inspect.signature`` and argument errors are already right) whose body compiles the real
    entry point (:func:`_compile_entry`) and then *replaces its own code* with it: ``__code__``,
    ``__defaults__`` and ``__kwdefaults__`` are swapped in place and the globals are the very namespace
    the real code was compiled in.  Every reference to the stub (``torchplug.add``, ``Tensor.__add__``,
    ``entry.call``, ``A.add``) therefore calls exactly the code an eager build would have produced; only
    the first call pays for the compile.  The keyword arguments are those of :func:`_compile_entry`.
    """
    schema: FunctionSchema = entry.schema
    names = [python_name(a.name) for a in schema.arguments]
    if first_name and names:
        names[0] = first_name
    positional: list[str] = []
    keyword_only: list[str] = []
    defaults: list[Any] = []
    kwdefaults: dict[str, Any] = {}
    for arg, local in zip(schema.arguments, names):
        if arg.kwarg_only:
            keyword_only.append(local)
            if arg.has_default:
                kwdefaults[local] = _default_value(arg)
        else:
            positional.append(local)
            if arg.has_default:
                defaults.append(_default_value(arg))
    if out_entry is not None:
        keyword_only.append("out")
        kwdefaults["out"] = None
    fname = func_name or schema.name
    if not fname.isidentifier() or keyword.iskeyword(fname):
        fname = "op"
    varnames = (*positional, *keyword_only)
    code = _STUB_CODE.replace(
        co_argcount=len(positional), co_kwonlyargcount=len(keyword_only), co_nlocals=len(varnames),
        co_varnames=varnames, co_name=fname, co_qualname=fname, co_filename=f"<torchplug entry {schema.full_name}>",
    )
    ns: dict[str, Any] = {"_tp_locals": locals}
    stub = FunctionType(code, ns, fname, tuple(defaults) or None)
    stub.__kwdefaults__ = kwdefaults or None
    options = {"display": display, "first_name": first_name, "out_entry": out_entry, "func_name": func_name,
               "numbers": numbers, "combination_errors": combination_errors, "method": method,
               "binary_operator": binary_operator}

    # The C entry point (when built) wraps the stub and takes the common calls once armed at materialization.
    centry = _CENTRY.Entry(stub) if _CENTRY is not None and _c_candidate(schema) else None

    def first_call(arguments: dict[str, Any]) -> Any:
        materialize(stub, entry, options, centry)
        return stub(**arguments)  # every parameter is positional-or-keyword or keyword-only

    ns["_tp_first_call"] = first_call
    stub.__torchplug_materialize__ = lambda: materialize(stub, entry, options, centry)
    return stub if centry is None else centry


def materialize(stub: Callable[..., Any], entry: OperatorEntry, options: dict[str, Any], centry: Any = None) -> None:
    """Compile ``stub``'s entry point into its namespace and make the stub run it (idempotent); arm ``centry``,
    the C entry point wrapping the stub, when the compiled entry's common calls can take the C path."""
    if "__torchplug_materialize__" not in stub.__dict__:
        return  # already compiled (by another thread, or a second reference)
    real = _compile_entry(entry, stub.__globals__, **options)
    stub.__code__ = real.__code__
    stub.__defaults__ = real.__defaults__
    stub.__kwdefaults__ = real.__kwdefaults__
    stub.__torchplug_source__ = real.__torchplug_source__  # type: ignore[attr-defined]
    stub.__dict__.pop("__torchplug_materialize__", None)
    spec = real.__torchplug_cspec__  # type: ignore[attr-defined]
    if centry is not None and spec is not None:
        centry.arm(entry.cache, tls, *spec)


def python_entry(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The generated Python entry point behind ``fn`` (``fn`` itself unless it is a C entry point)."""
    return getattr(fn, "__torchplug_python_entry__", fn)


def entry_source(fn: Callable[..., Any]) -> str:
    """The generated source of an entry point (compiling it now if it has not run yet)."""
    compile_now = getattr(fn, "__torchplug_materialize__", None)
    if compile_now is not None:
        compile_now()
    return getattr(fn, "__torchplug_source__", "")


def _compile_entry(
    entry: OperatorEntry,
    ns: dict[str, Any],
    *,
    display: str | None = None,
    first_name: str | None = None,
    out_entry: OperatorEntry | None = None,
    func_name: str | None = None,
    numbers: Any = None,
    combination_errors: Any = (),
    method: bool = False,
    binary_operator: bool = False,
) -> Callable[..., Any]:
    """Compile the entry point for ``entry`` into ``ns`` (the stub's globals) and return the function.

    Args:
        display: name used in error messages (defaults to the op's full name).
        first_name: rename the first argument (``self`` -> ``input`` for torch.* functions).
        out_entry: if given, the function gains ``out=None`` and routes to this overload when set.
        func_name: ``__name__`` of the generated function.
        numbers: schema names of the Tensor arguments that take a Python number (PyTorch's Python API
            takes one only where the op has a Scalar overload); None: all of them for an op defined
            with wrapped numbers.
        combination_errors: Tensor arguments refusing a number with PyTorch's "invalid combination of
            arguments" (another overload takes a number, just not there) instead of "must be Tensor".
        method: a ``Tensor`` method: error messages count positions after ``self``, like PyTorch's.
        binary_operator: a Python operator (``__add__``, ``__iadd__``...): an operand after ``self`` that is no
            tensor (nor number, where the op takes one) answers NotImplemented, as torch's operators do, so
            Python tries the other operand's reflected method or raises its own "unsupported operand" error.
            Only the failure branch differs: the call path is the same code.
    """
    schema: FunctionSchema = entry.schema
    display = display or schema.full_name
    ns.update({
        "_tls": tls,
        "_get": entry.cache.get,
        "_miss": lambda ks, _e=entry: DISPATCHER.lookup(_e, ks),
        "_not_tensor": _not_tensor,
        "_wrapped": _wrapped_number,
        "_number_key": _number_key,
        "_tlist": _tensor_list_keyset,
        "_no_tensor": _no_tensor_given,
        "_combination": _invalid_combination,
        "_NO_DEFAULT": NO_DEFAULT,
        **GUARD_GLOBALS,
    })
    params: list[str] = []
    body: list[str] = []
    call_args: list[str] = []
    kw_started = False
    tensor_terms: list[str] = []
    names = [python_name(a.name) for a in schema.arguments]
    if first_name and names:
        names[0] = first_name
    # the C path's arming (see _centry.c): tensors it takes, which of them may be numbers, the values passed after
    c_tensors = 0
    c_numbers = 0
    c_defaults: list[Any] | None = [] if _CENTRY is not None and _c_candidate(schema) else None
    for idx, (arg, local) in enumerate(zip(schema.arguments, names)):
        if c_defaults is not None:
            if _plain_tensor(arg) and idx == c_tensors:
                c_tensors += 1
                if entry.wrapped_numbers and (numbers is None or arg.name in numbers):
                    c_numbers |= 1 << idx
            else:
                c_defaults.append(_default_value(arg))  # replaced by the namespace's own object below
                if arg.type.base == "Tensor" and not (arg.type.optional and not arg.type.is_list and arg.default is None):
                    c_defaults = None  # only an absent optional tensor (None) is passed without a key
        if arg.kwarg_only and not kw_started:
            params.append("*")
            kw_started = True
        if arg.has_default:
            ns[f"_d{idx}"] = _default_value(arg)
            params.append(f"{local}=_d{idx}")
            if c_defaults is not None and idx >= c_tensors:
                c_defaults[idx - c_tensors] = ns[f"_d{idx}"]
        else:
            params.append(local)
        call_args.append(local)
        ctx = ArgContext(display, local, idx if method else idx + 1, arg.type)
        ns[f"_c{idx}"] = ctx
        t = arg.type
        if t.base == "Tensor":
            var = f"_k{idx}"
            tensor_terms.append(var)
            if t.is_list:
                body.append(f"{var} = _tlist({local}, _c{idx})")
            elif t.optional:
                body.append(f"try:\n    {var} = 0 if {local} is None else {local}._keyset")
                body.append(f"except AttributeError:\n    {var} = _not_tensor({local}, _c{idx})")
            elif binary_operator and idx > 0:
                body.append(f"{var} = getattr({local}, '_keyset', None)")
                take_number = entry.wrapped_numbers and (numbers is None or arg.name in numbers)
                if take_number:
                    body.append(f"if {var} is None:\n    {var} = _number_key({local})")
                body.append(f"if {var} is None:\n    return NotImplemented")
            elif entry.wrapped_numbers and (numbers is None or arg.name in numbers):
                body.append(f"{var} = getattr({local}, '_keyset', None)")
                body.append(f"if {var} is None:\n    {var} = _wrapped({local}, _c{idx})")
            elif arg.name in combination_errors:
                given = [n for i, (a, n) in enumerate(zip(schema.arguments, names)) if not a.kwarg_only and not (method and i == 0)]
                signature = ", ".join(f"{a.type} {n}" for i, (a, n) in enumerate(zip(schema.arguments, names))
                                      if not (method and i == 0))
                body.append(f"try:\n    {var} = {local}._keyset")
                body.append(f"except AttributeError:\n    _combination({display!r}, {signature!r}, ({', '.join(given)},))")
            else:
                body.append(f"try:\n    {var} = {local}._keyset")
                body.append(f"except AttributeError:\n    {var} = _not_tensor({local}, _c{idx})")
            continue
        type_key = t.base + ("[]" if t.is_list else "")
        conv = CONVERTERS.get(type_key)
        if conv is None:
            continue
        guard, fn = conv
        ns[f"_v{idx}"] = fn
        check = guard.format(x=local)
        if t.optional or (arg.has_default and arg.default is None):
            check = f"{local} is None or {check}"
        body.append(f"if not ({check}):\n    {local} = _v{idx}({local}, _c{idx})")
        if c_defaults is not None and idx >= c_tensors and not eval(check, ns, {local: ns[f"_d{idx}"]}):
            c_defaults = None  # a default the converter rewrites: the Python entry passes what it makes of it

    if tensor_terms:
        body.append("ks = " + " | ".join(tensor_terms))
        if entry.wrapped_numbers:
            body.append(f"if not ks:\n    _no_tensor({display!r})")
        tensor_args = [a for a in schema.arguments if a.type.base == "Tensor"]
        if len(tensor_args) == 1 and tensor_args[0].type.is_list and not tensor_args[0].type.optional:
            # An op dispatched only by a tensor list (cat, stack) cannot pick a backend from [].
            ns["_empty_list"] = _empty_tensor_list
            body.append(f"if not ks:\n    _empty_list({display!r})")
        body.append("ks = (ks | _tls.include) & _tls.mask")
    else:
        body.append("ks = _tls.include & _tls.mask")
    body.append("_kernel = _get(ks)")  # (a local no schema argument is named: topk has an argument `k`)
    body.append("if _kernel is None:\n    _kernel = _miss(ks)")
    body.append(f"return _kernel({', '.join(call_args)})")

    if out_entry is not None:
        ns["_out_call"] = _out_router(schema, out_entry)
        if not kw_started:
            params.append("*")
        params.append("out=None")
        body.insert(0, f"if out is not None:\n    return _out_call(({', '.join(call_args)},), out)")

    fname = func_name or schema.name
    if not fname.isidentifier() or keyword.iskeyword(fname):
        fname = "op"
    src = f"def {fname}({', '.join(params)}):\n" + "\n".join(
        "    " + line for chunk in body for line in chunk.split("\n")
    )
    code = compile(src, f"<torchplug entry {schema.full_name}>", "exec")
    exec(code, ns)
    fn = ns[fname]
    fn.__torchplug_source__ = src  # for explain()/debugging
    fn.__torchplug_cspec__ = None if c_defaults is None else (c_tensors, c_numbers, tuple(c_defaults))
    return fn


def _out_router(functional: FunctionSchema, out_entry: OperatorEntry) -> Callable[[tuple[Any, ...], Any], Any]:
    """Call an ``.out`` overload with the functional arguments plus ``out`` (a tensor or tuple)."""
    out_schema = out_entry.schema
    index = {a.name: i for i, a in enumerate(functional.arguments)}
    missing = [a.name for a in out_schema.arguments if not a.is_write and a.name not in index]
    if missing:
        raise ValueError(f"{out_schema.full_name} has arguments {missing} that {functional.full_name} lacks")
    positional = [index[a.name] for a in out_schema.arguments if not a.kwarg_only]
    keyword_args = [(a.name, index[a.name]) for a in out_schema.arguments if a.kwarg_only and not a.is_write]
    out_names = [a.name for a in out_schema.arguments if a.is_write and a.kwarg_only]
    n_out = len(out_names)

    def route(args: tuple[Any, ...], out: Any) -> Any:
        call = out_entry.call
        assert call is not None
        kwargs = {name: args[i] for name, i in keyword_args}
        if n_out == 1:
            kwargs[out_names[0]] = out
        else:
            if not isinstance(out, (tuple, list)) or len(out) != n_out:
                raise TypeError(f"{functional.name}(): out must be a tuple of {n_out} Tensors")
            kwargs.update(zip(out_names, out))
        return call(*[args[i] for i in positional], **kwargs)

    return route
