"""Define operators and register kernels, scoped and attributed (public as ``torchplug.library``).

Registrations live until :meth:`Library.close` (or the end of a ``with`` block), never until
garbage collection.  Kernels receive the op's arguments positionally, in schema order, with
defaults filled in.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from types import FunctionType
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, Registration, RegistrationError, fallthrough_kernel
from torchplug._dispatch.schema import FunctionSchema, SchemaError, parse_schema

__all__ = [
    "Library", "KernelTable", "fallthrough_kernel", "RegistrationError", "SchemaError", "get_kernel", "collect_tables",
]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_DEF_NAMESPACES: dict[str, Library] = {}


def _caller_location(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Library:
    """A scoped set of definitions and registrations in one namespace.

    Args:
        ns: the operator namespace (``'aten'``, ``'myops'``); ``'_'`` for fallbacks only.
        kind: ``'DEF'`` (owns the namespace), ``'FRAGMENT'`` (adds definitions to it) or
            ``'IMPL'`` (kernels only).
        dispatch_key: default key for :meth:`impl` when none is given.
        owner: who registers (plugins get their name here); defaults to the caller's location.

    Example:
        >>> with Library("demo", "DEF") as lib:
        ...     lib.define("twice(Tensor x) -> Tensor")
        ...     lib.impl("twice", lambda x: x * 2, "CompositeImplicitAutograd")
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "", *, owner: str | None = None) -> None:
        if kind not in _KINDS:
            raise ValueError(f"Library kind must be one of {_KINDS}, got {kind!r}")
        if not ns.replace("_", "a").isalnum():
            raise ValueError(f"Invalid namespace {ns!r}: use letters, digits and underscores")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self.owner = owner or f"Library({ns!r}, {kind!r}) at {_caller_location()}"
        self._registrations: list[Registration] = []
        self._defined: list[str] = []
        self._closed = False
        if kind == "DEF":
            other = _DEF_NAMESPACES.get(ns)
            if other is not None and not other._closed:
                raise RegistrationError(
                    f"Only one Library of kind 'DEF' may own namespace {ns!r}; it is owned by {other.owner}. "
                    "Use kind 'FRAGMENT' to add definitions to it."
                )
            _DEF_NAMESPACES[ns] = self

    # -- definitions ------------------------------------------------------------------------------
    def define(self, schema: str, alias_analysis: str = "", *, tags: tuple[str, ...] = (), wrapped_numbers: bool = False) -> str:
        """Define an operator from a schema string; returns its full name (``'ns::op.overload'``)."""
        self._check_open()
        if self.kind == "IMPL":
            raise RegistrationError(f"{self.owner} is an 'IMPL' library and cannot define operators; use 'DEF' or 'FRAGMENT'.")
        parsed = parse_schema(schema, namespace=self.ns)
        if parsed.namespace != self.ns:
            raise RegistrationError(
                f"Schema {schema!r} names namespace {parsed.namespace!r} but this library's namespace is {self.ns!r}."
            )
        entry = DISPATCHER.define(parsed, owner=self.owner, tags=tuple(tags), wrapped_numbers=wrapped_numbers)
        self._defined.append(entry.name)
        return entry.name

    # -- kernels ----------------------------------------------------------------------------------
    def impl(
        self,
        op_name: Any,
        fn: Callable[..., Any] | None = None,
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = False,
    ) -> Any:
        """Register ``fn`` for ``op_name`` at ``dispatch_key``; without ``fn`` returns a decorator."""
        if fn is None:
            def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
                self.impl(op_name, f, dispatch_key, with_keyset=with_keyset, allow_override=allow_override)
                return f

            return decorator
        self._check_open()
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        entry = DISPATCHER.entry(self._qualify(op_name))
        full = entry.name  # (PyTorch's spelling of an overload the table names differently resolves to the table's)
        if fn is not fallthrough_kernel:
            check_kernel_signature(entry.schema, fn, with_keyset=with_keyset)
        reg = DISPATCHER.register_kernel(full, key, fn, owner=self.owner, with_keyset=with_keyset, allow_override=allow_override)
        self._registrations.append(reg)
        return reg

    def fallback(self, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = False, allow_override: bool = False) -> Registration:
        """Register a boxed fallback for every op at ``dispatch_key``: ``fn(op, *args)``."""
        self._check_open()
        key = dispatch_key or self.dispatch_key
        if not key:
            raise ValueError("fallback() needs a dispatch key")
        reg = DISPATCHER.register_fallback(key, fn, owner=self.owner, with_keyset=with_keyset, allow_override=allow_override)
        self._registrations.append(reg)
        return reg

    # -- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Undo every registration and definition made through this library (newest first)."""
        if self._closed:
            return
        self._closed = True
        for reg in reversed(self._registrations):
            DISPATCHER.deregister(reg)
        for name in reversed(self._defined):
            DISPATCHER.undefine(name)
        self._registrations.clear()
        self._defined.clear()
        if _DEF_NAMESPACES.get(self.ns) is self:
            del _DEF_NAMESPACES[self.ns]

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._defined)} defs, {len(self._registrations)} kernels"
        return f"<Library {self.ns!r} {self.kind} ({state}) owner={self.owner}>"

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self.owner} is closed; create a new Library to register more.")

    def _qualify(self, op_name: Any) -> str:
        if hasattr(op_name, "name") and callable(op_name.name):
            return op_name.name()
        name = str(op_name)
        if "::" not in name:
            name = f"{self.ns}::{name}"
        return name


_CO_VARARGS = inspect.CO_VARARGS


def _plainly_takes(fn: Callable[..., Any], n: int) -> bool:
    """True if ``fn`` is a plain Python function that can be called with ``n`` positional arguments, read from
    its code object: ``inspect.signature`` costs ~25 µs a kernel, a third of registering the backends at start-up.
    ``functools.wraps`` chains are followed to the innermost function, as ``inspect.signature`` follows them.
    False means "not proven" (a partial, a ``__signature__``, a mismatch): the caller then asks ``inspect``."""
    while type(fn) is FunctionType and fn.__dict__:
        if "__signature__" in fn.__dict__:
            return False
        if "__wrapped__" not in fn.__dict__:
            break
        fn = fn.__dict__["__wrapped__"]
    if type(fn) is not FunctionType:
        return False
    code = fn.__code__
    required = code.co_argcount - len(fn.__defaults__ or ())
    if n < required or (n > code.co_argcount and not code.co_flags & _CO_VARARGS):
        return False
    return code.co_kwonlyargcount == len(fn.__kwdefaults__ or ())  # no required keyword-only argument


def check_kernel_signature(schema: FunctionSchema, fn: Callable[..., Any], *, with_keyset: bool = False) -> None:
    """Raise TypeError now (not at the first call) if ``fn`` cannot take the schema's arguments."""
    n = len(schema.arguments) + (1 if with_keyset else 0)
    if _plainly_takes(fn, n):
        return
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins / C functions: nothing to check
    try:
        sig.bind(*range(n))
    except TypeError as exc:
        expected = ", ".join(a.name for a in schema.arguments)
        raise TypeError(
            f"Kernel {getattr(fn, '__qualname__', fn)!r} for {schema.full_name!r} cannot be called with the "
            f"schema's {n} positional arguments ({'keyset, ' if with_keyset else ''}{expected}): {exc}. "
            "Kernels receive every argument positionally in schema order."
        ) from None


class KernelTable:
    """Collects kernels with decorators; registering the table is a separate, explicit step.

    Importing a module full of ``@table.impl(...)`` therefore changes nothing until a plugin
    hook calls ``ctx.register_kernels(table)``.
    """

    def __init__(self, dispatch_key: str) -> None:
        self.dispatch_key = dispatch_key
        self.kernels: list[tuple[str, Callable[..., Any], str, bool]] = []

    def impl(self, *op_names: str, key: str | None = None, with_keyset: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: record ``fn`` as the kernel of each op name (``'aten::add.Tensor'``)."""

        def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
            for name in op_names:
                self.kernels.append((name, fn, key or self.dispatch_key, with_keyset))
            return fn

        return decorator

    def add(self, op_name: str, fn: Callable[..., Any], *, key: str | None = None, with_keyset: bool = False) -> None:
        """Record a kernel without a decorator."""
        self.kernels.append((op_name, fn, key or self.dispatch_key, with_keyset))

    def op_names(self) -> list[str]:
        return sorted({name for name, *_ in self.kernels})

    def register(self, lib: Library) -> None:
        """Register every collected kernel through ``lib``."""
        for name, fn, key, with_keyset in self.kernels:
            lib.impl(name, fn, key, with_keyset=with_keyset)


def get_kernel(op: Any, dispatch_key: str) -> Callable[..., Any]:
    """The callable the dispatcher would run for ``op`` at ``dispatch_key`` (for testing/debugging)."""
    name = op.name() if hasattr(op, "name") and callable(op.name) else str(op)
    entry = DISPATCHER.entry(name)
    key = K.lookup_key(dispatch_key)
    if not isinstance(key, K.DispatchKey):
        raise ValueError("get_kernel needs a runtime key")
    return DISPATCHER.lookup(entry, key.mask)


def collect_tables(package: str) -> list[KernelTable]:
    """The ``TABLE`` of every module in ``package`` (a backend's kernel folder), in name order.

    Importing the modules only fills the tables; registering them is the plugin hook's job.
    """
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    tables = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        table = getattr(module, "TABLE", None)
        if isinstance(table, KernelTable):
            tables.append(table)
    return tables
