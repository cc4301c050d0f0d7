"""The operator registry: schemas, kernels per key, fallbacks, and the per-op call cache."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.schema import FunctionSchema, parse_schema

__all__ = [
    "Registration",
    "OperatorEntry",
    "Dispatcher",
    "DISPATCHER",
    "fallthrough_kernel",
    "RegistrationError",
]


def fallthrough_kernel(*args: Any, **kwargs: Any) -> Any:
    """Marker kernel: registering it at a key makes the dispatcher skip that key."""
    raise AssertionError("fallthrough_kernel is a marker and must never be called")


class RegistrationError(RuntimeError):
    """A definition or kernel registration conflicts with an existing one."""


def describe_callable(fn: Callable[..., Any] | None) -> str:
    """'module:qualname' of a kernel, for introspection and error messages."""
    if fn is None:
        return "<none>"
    target = getattr(fn, "func", fn)  # functools.partial
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or type(target).__name__
    return f"{module}:{qualname}"


@dataclass(eq=False, slots=True)
class Registration:
    """One kernel (or fallback) registered at one key, with who registered it."""

    key: str  # runtime or alias key name
    fn: Callable[..., Any]
    op: str | None  # None for a backend fallback
    with_keyset: bool = False
    owner: str = "<unknown>"  # e.g. "plugin 'cpu' (torchplug-cpu)" or "Library('myns', 'IMPL')"
    source: str = ""
    active: bool = True

    @property
    def is_fallthrough(self) -> bool:
        return self.fn is fallthrough_kernel

    def describe(self) -> str:
        what = "fallthrough" if self.is_fallthrough else self.source
        return f"{what} [registered by {self.owner}]"


# A pseudo-registration used when a functionality key has no kernel and no fallback: such
# keys fall through by default, so a new backend never needs autocast/autograd fallbacks.
_DEFAULT_FALLTHROUGH = Registration("<default>", fallthrough_kernel, None, owner="core default")


@dataclass(eq=False)
class OperatorEntry:
    """Everything the dispatcher knows about one operator overload."""

    schema: FunctionSchema
    defined_by: str
    tags: tuple[str, ...] = ()
    wrapped_numbers: bool = False  # Tensor arguments accept Python numbers (binary pointwise ops)
    kernels: dict[str, list[Registration]] = field(default_factory=dict)
    # keyset -> ready-to-call kernel.  The generated entry point captures ``cache.get``, so this
    # dict is cleared in place, never replaced.
    cache: dict[int, Callable[..., Any]] = field(default_factory=dict)
    define_count: int = 1
    overload: Any = None  # the public OpOverload, set by torchplug._ops.namespace
    call: Callable[..., Any] | None = None  # the generated entry point

    @property
    def name(self) -> str:
        return self.schema.full_name

    # -- table computation (PyTorch's computeDispatchTableEntry, in Python) -------------------
    def _first(self, key_name: str) -> Registration | None:
        regs = self.kernels.get(key_name)
        return regs[0] if regs else None

    def resolve_key(self, key: K.DispatchKey, fallbacks: dict[str, list[Registration]]) -> tuple[Registration | None, str]:
        """The registration that serves ``key`` and why: direct, alias, fallback or missing."""
        direct = self._first(key.name)
        if direct is not None:
            return direct, "kernel"
        if key.kind == "backend":
            cea = self._first("CompositeExplicitAutograd")
            if cea is not None:
                return cea, "CompositeExplicitAutograd"
            cia = self._first("CompositeImplicitAutograd")
            if cia is not None:
                return cia, "CompositeImplicitAutograd"
        elif key.kind == "autograd":
            backend_has_kernel = (
                self._first(key.backend or "") is not None
                or self._first("CompositeExplicitAutograd") is not None
            )
            cia = self._first("CompositeImplicitAutograd")
            if cia is not None and not backend_has_kernel:
                return cia, "CompositeImplicitAutograd"
            alias = self._first("Autograd")
            if alias is not None:
                return alias, "Autograd"
        fb = fallbacks.get(key.name)
        if fb:
            return fb[0], "fallback"
        if key.kind in ("autograd", "autocast", "functionality"):
            return _DEFAULT_FALLTHROUGH, "default fallthrough"
        return None, "missing"


class Dispatcher:
    """Holds every operator entry and backend fallback; thread-safe registration."""

    def __init__(self) -> None:
        self.ops: dict[str, OperatorEntry] = {}
        # PyTorch's full name -> the table's, where the table names an overload differently (``aten::mul.Tensor``
        # -> ``aten::mul``): read only when a name is not an op itself, so lookups by either spelling work.
        self.aliases: dict[str, str] = {}
        self.fallbacks: dict[str, list[Registration]] = {}
        self.lock = threading.RLock()
        # Hooks set by the core so the dispatcher itself stays free of Tensor/plugin imports.
        self.on_define: list[Callable[[OperatorEntry], None]] = []
        self.on_undefine: list[Callable[[OperatorEntry], None]] = []
        self.missing_kernel_context: Callable[[], str] = lambda: ""
        # backend key bit -> a callable that registers that backend's kernels, for backends whose kernels load
        # when a dispatch first reaches them (set by the plugin layer).  Checked on the cache-miss path only.
        self.pending_kernels: dict[int, Callable[[], None]] = {}

    # -- definitions ----------------------------------------------------------------------------
    def define(
        self,
        schema: str | FunctionSchema,
        *,
        owner: str,
        namespace: str | None = None,
        tags: tuple[str, ...] = (),
        wrapped_numbers: bool = False,
    ) -> OperatorEntry:
        """Define an operator; an identical re-definition is a no-op, a different one an error."""
        parsed = schema if isinstance(schema, FunctionSchema) else parse_schema(schema, namespace=namespace)
        if not parsed.namespace:
            raise RegistrationError(
                f"Schema {str(parsed)!r} has no namespace. Write it as 'ns::{parsed.name}(...)' "
                "or define it through a Library, which supplies its namespace."
            )
        with self.lock:
            existing = self.ops.get(parsed.full_name)
            if existing is not None:
                if str(existing.schema) == str(parsed):
                    existing.define_count += 1
                    return existing
                raise RegistrationError(
                    f"Operator {parsed.full_name!r} is already defined by {existing.defined_by} as "
                    f"'{existing.schema}'; {owner} tried to define it as '{parsed}'. Use a different "
                    "overload name or namespace."
                )
            entry = OperatorEntry(parsed, owner, tuple(tags), wrapped_numbers)
            self.ops[parsed.full_name] = entry
            for hook in self.on_define:
                hook(entry)
            return entry

    def undefine(self, name: str) -> None:
        """Drop one definition reference; the operator disappears when none remain."""
        with self.lock:
            entry = self.ops.get(name)
            if entry is None:
                return
            entry.define_count -= 1
            if entry.define_count <= 0:
                del self.ops[name]
                entry.cache.clear()
                for hook in self.on_undefine:
                    hook(entry)

    def find(self, name: str) -> OperatorEntry | None:
        found = self.ops.get(name)
        if found is None and name in self.aliases:
            found = self.ops.get(self.aliases[name])
        return found

    def entry(self, name: str) -> OperatorEntry:
        found = self.find(name)
        if found is None:
            raise RuntimeError(
                f"Operator {name!r} is not defined. Define it with Library.define() or check the "
                "spelling ('ns::op.overload')."
            )
        return found

    # -- kernels --------------------------------------------------------------------------------
    def register_kernel(
        self,
        op: str,
        key: str | K.DispatchKey | K.AliasKey,
        fn: Callable[..., Any],
        *,
        owner: str,
        with_keyset: bool = False,
        allow_override: bool = False,
    ) -> Registration:
        """Register ``fn`` for ``op`` at ``key``. A second, different kernel raises unless
        ``allow_override`` is given, in which case the new one shadows the old until closed."""
        resolved = K.lookup_key(key)
        with self.lock:
            entry = self.entry(op)
            regs = entry.kernels.setdefault(resolved.name, [])
            if regs:
                current = regs[0]
                if current.fn is fn and current.with_keyset == with_keyset:
                    return current  # idempotent
                if not allow_override:
                    raise RegistrationError(
                        f"Kernel for {op!r} at key {resolved.name!r} is already registered by "
                        f"{current.owner} ({current.source}); {owner} tried to register "
                        f"{describe_callable(fn)}. Pass allow_override=True to shadow it."
                    )
            reg = Registration(resolved.name, fn, op, with_keyset, owner, describe_callable(fn))
            regs.insert(0, reg)
            entry.cache.clear()
            return reg

    def register_fallback(
        self,
        key: str | K.DispatchKey,
        fn: Callable[..., Any],
        *,
        owner: str,
        with_keyset: bool = False,
        allow_override: bool = False,
    ) -> Registration:
        """Register a boxed fallback ``fn(op, *args)`` (or ``fn(keyset, op, *args)``) for all ops at ``key``."""
        resolved = K.lookup_key(key)
        if not isinstance(resolved, K.DispatchKey):
            raise RegistrationError(f"Fallbacks must be registered at a runtime key, not the alias {resolved!r}.")
        with self.lock:
            regs = self.fallbacks.setdefault(resolved.name, [])
            if regs and regs[0].fn is not fn and not allow_override:
                raise RegistrationError(
                    f"A fallback for key {resolved.name!r} is already registered by {regs[0].owner} "
                    f"({regs[0].source}); {owner} tried to register {describe_callable(fn)}."
                )
            reg = Registration(resolved.name, fn, None, with_keyset, owner, describe_callable(fn))
            regs.insert(0, reg)
            self.invalidate_all()
            return reg

    def deregister(self, reg: Registration) -> None:
        """Remove one registration; the previous kernel (if any) is restored."""
        with self.lock:
            if not reg.active:
                return
            reg.active = False
            if reg.op is None:
                regs = self.fallbacks.get(reg.key, [])
                if reg in regs:
                    regs.remove(reg)
                self.invalidate_all()
                return
            entry = self.ops.get(reg.op)
            if entry is None:
                return
            regs = entry.kernels.get(reg.key, [])
            if reg in regs:
                regs.remove(reg)
            if not regs:
                entry.kernels.pop(reg.key, None)
            entry.cache.clear()

    def invalidate_all(self) -> None:
        """Clear every op's call cache (new keys, fallbacks or TLS semantics changed)."""
        with self.lock:
            for entry in self.ops.values():
                entry.cache.clear()

    # -- lookup (the cache-miss path) -----------------------------------------------------------
    def resolve(self, entry: OperatorEntry, keyset: int) -> tuple[K.DispatchKey | None, Registration | None, int, list[str]]:
        """Walk ``keyset`` from its highest key, skipping fallthroughs.

        Returns the chosen key, its registration, the keyset at that key and a trace of the
        keys skipped (for ``explain``)."""
        if self.pending_kernels:
            for bit in [b for b in self.pending_kernels if keyset & b]:
                load = self.pending_kernels.pop(bit, None)
                if load is not None:
                    load()  # registers the backend's kernels (clearing the caches they change)
        trace: list[str] = []
        remaining = keyset
        while remaining > 0:
            bit = remaining.bit_length() - 1
            key = K.key_for_bit(bit)
            if key is None:
                remaining &= ~(1 << bit)
                continue
            reg, why = entry.resolve_key(key, self.fallbacks)
            if reg is not None and reg.is_fallthrough:
                trace.append(f"{key.name}: fallthrough ({why})")
                remaining &= ~(1 << bit)
                continue
            if reg is None:
                trace.append(f"{key.name}: no kernel")
                return key, None, remaining, trace
            trace.append(f"{key.name}: {why} -> {reg.describe()}")
            return key, reg, remaining, trace
        return None, None, 0, trace

    def lookup(self, entry: OperatorEntry, keyset: int) -> Callable[..., Any]:
        """Resolve and cache the callable for ``keyset``."""
        key, reg, at_keyset, _ = self.resolve(entry, keyset)
        if reg is None:
            kernel = partial(self._raise_missing, entry, key, keyset)
        elif reg.op is None:  # boxed fallback: receives the op object
            kernel = partial(reg.fn, at_keyset, entry.overload) if reg.with_keyset else partial(reg.fn, entry.overload)
        elif reg.with_keyset:
            kernel = partial(reg.fn, at_keyset)
        else:
            kernel = reg.fn
        backends = keyset & K.BACKEND_BAND
        if reg is not None and key is not None and key.kind == "backend" and backends & (backends - 1):
            # tensors of several backends: PyTorch's same-device check, paid only by these key sets
            from torchplug._dispatch.device_check import wrap_mixed_device_kernel

            kernel = wrap_mixed_device_kernel(entry, kernel)
        entry.cache[keyset] = kernel
        return kernel

    def _raise_missing(self, entry: OperatorEntry, key: K.DispatchKey | None, keyset: int, *args: Any, **kwargs: Any) -> Any:
        registered = sorted(k for k, regs in entry.kernels.items() if regs)
        if key is None:
            raise RuntimeError(
                f"Could not run {entry.name!r}: none of its arguments selects a backend (no tensor "
                "arguments and no device). Pass a tensor or a device= argument."
            )
        context = self.missing_kernel_context()
        raise NotImplementedError(
            f"Could not run {entry.name!r} with arguments from the {key.name!r} backend. "
            f"Kernels are registered for: {', '.join(registered) or 'no key'}. {context}".rstrip()
            + f" Register a kernel for {entry.name!r} at {key.name!r} (torchplug.library.Library"
            f"({entry.schema.namespace!r}, 'IMPL').impl(...)), or move the tensors to a device that has one."
        )


DISPATCHER = Dispatcher()
