"""``custom_op`` and ``CustomOpDef``: Python functions as dispatcher operators, PyTorch-style.

A ``CustomOpDef`` holds what was declared (schema, kernels per device type, fake kernel,
autograd formula, autocast rules) separately from where it is installed, so the same object
works two ways:

- ``torchplug.library.custom_op(...)`` installs at once, like PyTorch (ordinary scripts);
- ``OpLibrary.custom_op(...)`` only collects; a plugin hook installs the whole library with
  ``OPS.register(ctx)``, so importing a plugin module never mutates the dispatcher and blocking
  or unloading the plugin removes its ops.

Every registration is checked against the schema when it is made.  Registering the same
thing twice is a no-op; a conflicting registration is an error naming both.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.dispatcher import DISPATCHER, Registration, describe_callable
from torchplug._dispatch.schema import FunctionSchema, parse_schema
from torchplug._dispatch.library import Library
from torchplug._library.autocast import make_autocast_kernel
from torchplug._library.autograd import make_autograd_kernel
from torchplug._library.fake import make_meta_kernel
from torchplug._library.infer_schema import UNKNOWN_MUTATES, infer_schema

__all__ = ["CustomOpDef", "OpLibrary", "custom_op", "register_kernel", "register_fake", "register_autograd",
           "register_vmap",
           "register_autocast", "lookup_custom_op", "resolve_op"]

# Installed custom ops (and adapters over Library-defined ops), by qualified name.
_CUSTOM_OPS: dict[str, CustomOpDef] = {}
# Device types whose dispatch key we can name before their backend registers (kernels for a
# device this machine lacks are legal, as in PyTorch).
_WELL_KNOWN_KEYS = {"cpu": "CPU", "cuda": "CUDA", "mps": "MPS", "meta": "Meta"}


# -- helpers ----------------------------------------------------------------------------------------
def _identity(fn: Any) -> tuple[Any, ...]:
    code = getattr(fn, "__code__", None)
    if code is None:
        return (id(fn),)
    return (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None), code.co_filename, code.co_firstlineno)


def _same(a: Any, b: Any) -> bool:
    """The same function, or the same source definition (a re-imported module's copy)."""
    return a is b or (a is not None and b is not None and _identity(a) == _identity(b))


def _describe(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return describe_callable(fn) + where


def device_key(device_type: str | None) -> str:
    """The dispatch key name a device type's kernels register at (None: every device)."""
    if device_type is None or device_type == "default":
        return "CompositeExplicitAutograd"
    from torchplug._runtime.backends import registered_backends

    backend = registered_backends().get(device_type)
    if backend is not None:
        return backend.key_name
    if device_type in _WELL_KNOWN_KEYS:
        return _WELL_KNOWN_KEYS[device_type]
    known = sorted(set(registered_backends()) | set(_WELL_KNOWN_KEYS))
    raise ValueError(
        f"Unknown device type {device_type!r}: no backend registers it. Known device types are {known}; install "
        "the backend that provides it first (custom op plugins load after every backend plugin)."
    )


def _normalize_device_types(device_types: str | Sequence[str | None] | None) -> tuple[str | None, ...]:
    if device_types is None or isinstance(device_types, str):
        return (device_types,)
    out = tuple(device_types)
    if not out:
        raise ValueError("device_types must be None, a device type string or a non-empty sequence of them")
    return out


def _split_name(qualname: str) -> tuple[str, str]:
    ns, sep, name = qualname.partition("::")
    if not sep or not ns.isidentifier() or not name.isidentifier():
        raise ValueError(
            f"custom op name must be of the form 'namespace::op_name' with identifiers on both sides "
            f"(e.g. 'mylib::my_linear'), got {qualname!r}."
        )
    return ns, name


def _mutated_names(schema: FunctionSchema) -> set[str]:
    return {a.name for a in schema.arguments if a.is_write}


def _ensure_plugins() -> None:
    # Backends arrive through plugins; a script's custom_op may run before anything loaded them.
    from torchplug._plugins import ensure_loaded

    ensure_loaded()


class CustomOpDef:
    """A custom operator: call it like a function; register more behaviour with its methods."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any] | None, *,
                 owner: str, tags: tuple[str, ...] = (), defines: bool = True) -> None:
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._schema_text = schema  # nameless: '(Tensor x) -> Tensor'
        self._parsed = parse_schema(f"{name}{schema}", namespace=namespace)
        self._init_fn = fn
        self._owner = owner
        self._tags = tags
        self._defines = defines  # False: an adapter over an op defined with Library.define
        self._kernels: dict[str | None, Callable[..., Any]] = {}
        self._fake_fn: Callable[..., Any] | None = None
        self._backward_fn: Callable[..., Any] | None = None
        self._setup_context_fn: Callable[..., Any] | None = None
        self._autocast: dict[str, Any] = {}
        # the vmap rule: read by the func plugin's Batched fallback, which runs it instead of its per-sample loop
        self._vmap_fn: Callable[..., Any] | None = None
        self._lib: Library | None = None
        self._owns_lib = False
        self._entry: Any = None
        self._regs: dict[str, Registration] = {}
        pos = self._parsed.positional_arguments
        self._n_pos = len(pos)
        self._kw_names = tuple(a.name for a in self._parsed.kwarg_only_arguments)
        if fn is not None:
            self._check_signature("The custom op function", fn)

    # -- calling -------------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Installed ops never get here: installation swaps in a class whose __call__ *is* the
        # generated entry point (no extra frame per call).
        raise RuntimeError(
            f"The custom op {self._qualname} is not registered: {self._owner} declared it, but it is not installed "
            "(its plugin is not loaded, was blocked with TORCHPLUG_BLOCK_PLUGINS, or the op was destroyed). "
            "See `python -m torchplug` for the plugin's status."
        )

    @property
    def _opoverload(self) -> Any:
        """The ``torchplug.ops.<ns>.<name>.default`` overload."""
        if self._entry is None:
            self(None)  # raises the not-installed error
        return self._entry.overload

    @property
    def _schema(self) -> FunctionSchema:
        return self._parsed

    def name(self) -> str:
        """The qualified name, ``'ns::op'``."""
        return self._qualname

    def __repr__(self) -> str:
        state = "" if self._entry is not None else ", not installed"
        return f"<CustomOpDef({self._qualname}{state})>"

    # -- argument plumbing --------------------------------------------------------------------------
    def _split_args(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Kernels receive schema-ordered positional values; user functions take kwonly ones by name."""
        n = self._n_pos
        return args[:n], dict(zip(self._kw_names, args[n:]))

    def _adapt(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if not self._kw_names:
            return fn  # the user's function is the kernel itself: no wrapper frame
        n, names = self._n_pos, self._kw_names

        def kernel(*args: Any) -> Any:
            return fn(*args[:n], **dict(zip(names, args[n:])))

        kernel.__qualname__ = getattr(fn, "__qualname__", "kernel")
        kernel.__module__ = getattr(fn, "__module__", None)
        return kernel

    def _check_signature(self, what: str, fn: Callable[..., Any]) -> None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return
        try:
            sig.bind(*range(self._n_pos), **{k: 0 for k in self._kw_names})
        except TypeError as exc:
            args = ", ".join(a.name for a in self._parsed.positional_arguments)
            kw = ", ".join(self._kw_names)
            expected = args + (f", *, {kw}" if kw else "")
            raise TypeError(
                f"{what} {_describe(fn)} cannot be called like {self._qualname}{self._schema_text}: {exc}. It must "
                f"accept the operator's arguments ({expected})."
            ) from None

    def _conflict(self, what: str, old: Any, new: Any) -> RuntimeError:
        return RuntimeError(
            f"{self._qualname} already has a {what}: {_describe(old)}; cannot also register {_describe(new)}. "
            "Re-registering the same function is a no-op; to replace it pass allow_override=True "
            "(or destroy the op first)."
        )

    # -- registration API ---------------------------------------------------------------------------
    def register_kernel(self, device_types: str | Sequence[str | None] | None, fn: Callable[..., Any] | None = None,
                        /, *, allow_override: bool = False) -> Any:
        """Register ``fn`` as the implementation for ``device_types`` (None: every device)."""
        if fn is None:
            def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
                self.register_kernel(device_types, f, allow_override=allow_override)
                return f

            return decorator
        self._check_signature("The kernel", fn)
        types = _normalize_device_types(device_types)
        keys = [device_key(dt) for dt in types] if self._entry is not None else []
        for dt in types:
            old = self._kernels.get(dt)
            if old is not None and not _same(old, fn) and not allow_override:
                raise self._conflict(f"kernel for device type {dt!r}", old, fn)
        for i, dt in enumerate(types):
            if _same(self._kernels.get(dt), fn) and (self._entry is None or keys[i] in self._regs):
                continue
            self._kernels[dt] = fn
            if self._entry is not None:
                self._register_key(keys[i], self._adapt(fn), allow_override=allow_override)
        return fn

    def register_fake(self, fn: Callable[..., Any] | None = None, /, *, allow_override: bool = False) -> Any:
        """Register the fake kernel: output metadata from input metadata, never data.

        It runs whenever the op is called with meta tensors (so ``memory_estimate`` and meta
        models work) and is compared with the real kernel by ``opcheck``."""
        if fn is None:
            return lambda f: self.register_fake(f, allow_override=allow_override)
        self._check_signature("The fake kernel", fn)
        if self._fake_fn is not None and not _same(self._fake_fn, fn) and not allow_override:
            raise self._conflict("fake kernel", self._fake_fn, fn)
        self._fake_fn = fn
        if self._entry is not None and "Meta" not in self._regs:
            self._register_key("Meta", make_meta_kernel(self), allow_override=allow_override)
        return fn

    def register_autograd(self, backward: Callable[..., Any], /, *, setup_context: Callable[..., Any] | None = None,
                          allow_override: bool = False) -> None:
        """Register the backward formula: ``backward(ctx, *grads)`` returns one gradient per
        positional input; ``setup_context(ctx, inputs, output)`` (plus ``keyword_only_inputs``
        when the op has keyword-only arguments) saves what backward needs."""
        schema = self._parsed
        if schema.is_mutable:
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self._qualname} with schema "
                f"{schema}. Please create a functional operator and register an autograd formula for that."
            )
        if not schema.returns:
            raise RuntimeError(f"Cannot register an autograd formula for {self._qualname}: it returns nothing.")
        for a in schema.kwarg_only_arguments:
            if a.type.base == "Tensor":
                raise NotImplementedError(
                    f"register_autograd with kwarg-only Tensor args. In the original definition of the op, please "
                    f"make {a.name} into a positional arg."
                )
        n_grads = len(schema.returns)
        try:
            inspect.signature(backward).bind(0, *range(n_grads))
        except TypeError as exc:
            raise TypeError(
                f"The backward {_describe(backward)} of {self._qualname} must accept (ctx, *grads) with one grad per "
                f"output ({n_grads}): {exc}."
            ) from None
        except ValueError:
            pass
        if setup_context is not None:
            names = ["ctx", "inputs"] + (["keyword_only_inputs"] if self._kw_names else []) + ["output"]
            try:
                inspect.signature(setup_context).bind(**dict.fromkeys(names, 0))
            except TypeError as exc:
                raise TypeError(
                    f"The setup_context {_describe(setup_context)} of {self._qualname} must accept "
                    f"({', '.join(names)}) (it is called with keywords): {exc}."
                ) from None
            except ValueError:
                pass
        old = (self._backward_fn, self._setup_context_fn)
        if old[0] is not None and not allow_override and not (_same(old[0], backward) and _same(old[1], setup_context)):
            raise self._conflict("autograd formula", old[0], backward)
        self._backward_fn, self._setup_context_fn = backward, setup_context
        if self._entry is not None and "Autograd" not in self._regs:
            self._register_key("Autograd", make_autograd_kernel(self), with_keyset=True, allow_override=allow_override)

    def register_vmap(self, func: Callable[..., Any] | None = None, /, *, allow_override: bool = False) -> Any:
        """Register how ``torch.vmap`` runs the op: ``func(info, in_dims, *args, **kwargs)`` gets the
        arguments without the mapped dim (``in_dims`` says where it was, None for an unmapped argument;
        ``info.batch_size``, ``info.randomness``) and returns ``(output, out_dims)``."""
        if func is None:
            return lambda f: self.register_vmap(f, allow_override=allow_override)
        for a in self._parsed.kwarg_only_arguments:
            if a.type.base == "Tensor":
                raise NotImplementedError(
                    f"register_vmap with kwarg-only Tensor args. In the original definition of the op, please make "
                    f"{a.name} into a positional arg.")
        try:
            inspect.signature(func).bind(0, 0, *range(len(self._parsed.positional_arguments)),
                                         **dict.fromkeys(self._kw_names, 0))
        except TypeError as exc:
            raise TypeError(f"The vmap rule {_describe(func)} of {self._qualname} must accept (info, in_dims, *args, "
                            f"**kwargs) with the op's arguments: {exc}.") from None
        except ValueError:
            pass
        if self._vmap_fn is not None and not _same(self._vmap_fn, func) and not allow_override:
            raise self._conflict("vmap rule", self._vmap_fn, func)
        self._vmap_fn = func
        return func

    def register_autocast(self, device_type: str, cast_inputs: Any, *, allow_override: bool = False) -> None:
        """Inside an autocast region of ``device_type``, cast floating inputs to ``cast_inputs``
        and run the op with autocast off (PyTorch's ``register_autocast``)."""
        from torchplug._base.dtype import dtype

        if not isinstance(cast_inputs, dtype) or not cast_inputs.is_floating_point:
            raise ValueError(f"register_autocast: cast_inputs must be a floating-point dtype, got {cast_inputs!r}.")
        if not isinstance(device_type, str):
            raise ValueError(f"register_autocast: device_type must be a string such as 'cpu', got {device_type!r}.")
        key = device_key(device_type)
        if key == "CompositeExplicitAutograd":
            raise ValueError("register_autocast needs a concrete device type, not None/'default'.")
        old = self._autocast.get(device_type)
        if old is not None and old is not cast_inputs and not allow_override:
            raise RuntimeError(
                f"{self._qualname} already casts to {old} under autocast on {device_type!r}; cannot also cast to "
                f"{cast_inputs}. Pass allow_override=True to replace it."
            )
        self._autocast[device_type] = cast_inputs
        if self._entry is not None:
            self._register_key("Autocast" + key, make_autocast_kernel(self._entry, device_type, cast_inputs),
                               with_keyset=True, allow_override=True)

    # -- installation -------------------------------------------------------------------------------
    def _install(self, lib: Library, *, owns_lib: bool) -> None:
        """Define the op through ``lib`` and register everything declared so far."""
        existing = lookup_custom_op(self._qualname)
        if existing is not None and existing is not self:
            raise _definition_conflict(existing, self)
        if self._defines:
            found = DISPATCHER.find(self._qualname)
            if found is not None:
                raise RuntimeError(
                    f"Cannot define custom op {self._qualname}: an operator of that name is already defined by "
                    f"{found.defined_by} as '{found.schema}'. Pick another name or namespace."
                )
            lib.define(f"{self._name}{self._schema_text}", tags=self._tags)
        self._entry = DISPATCHER.entry(self._qualname)
        self._lib, self._owns_lib = lib, owns_lib
        _CUSTOM_OPS[self._qualname] = self
        try:
            for dt, fn in self._kernels.items():
                self._register_key(device_key(dt), self._adapt(fn))
            if self._defines or self._fake_fn is not None:
                self._register_key("Meta", make_meta_kernel(self))
            if self._defines or self._backward_fn is not None:
                self._register_key("Autograd", make_autograd_kernel(self), with_keyset=True)
            if self._defines and self._parsed.is_mutable:
                from torchplug._ops.core_kernels import version_bump_kernel

                self._register_key("ADInplaceOrView", version_bump_kernel(self._entry), with_keyset=True)
            for dt, cast in self._autocast.items():
                self._register_key("Autocast" + device_key(dt), make_autocast_kernel(self._entry, dt, cast),
                                   with_keyset=True)
        except BaseException:
            self._uninstall()
            raise
        # Calls go straight to the generated entry point: a per-op class whose __call__ is it.
        call = self._entry.call
        self.__class__ = type(f"CustomOpDef[{self._qualname}]", (CustomOpDef,), {"__call__": staticmethod(call)})

    def _register_key(self, key_name: str, fn: Callable[..., Any], *, with_keyset: bool = False,
                      allow_override: bool = False) -> None:
        lib = self._lib
        assert lib is not None and self._entry is not None
        old = self._regs.pop(key_name, None)
        if old is not None:
            DISPATCHER.deregister(old)
        if key_name in K.KEYS or key_name in K.ALIAS_KEYS:
            reg = lib.impl(self._qualname, fn, key_name, with_keyset=with_keyset, allow_override=allow_override)
        else:
            # A device whose backend is not registered (yet): the dispatcher resolves kernels by
            # key name, so the kernel serves that backend as soon as it registers.
            reg = Registration(key_name, fn, self._qualname, with_keyset, lib.owner, describe_callable(fn))
            with DISPATCHER.lock:
                self._entry.kernels.setdefault(key_name, []).insert(0, reg)
                self._entry.cache.clear()
            lib._registrations.append(reg)
        self._regs[key_name] = reg

    def _uninstall(self) -> None:
        for reg in self._regs.values():
            DISPATCHER.deregister(reg)
        self._regs.clear()
        if self._owns_lib and self._lib is not None:
            self._lib.close()
        self._lib, self._entry, self._owns_lib = None, None, False
        if _CUSTOM_OPS.get(self._qualname) is self:
            del _CUSTOM_OPS[self._qualname]
        self.__class__ = CustomOpDef

    def _destroy(self) -> None:
        """Remove the op and all its registrations (PyTorch's private ``_destroy``; for tests)."""
        self._uninstall()


def _definition_conflict(old: CustomOpDef, new: CustomOpDef) -> RuntimeError:
    return RuntimeError(
        f"custom_op {new._qualname!r} is already defined by {old._owner} as '{old._schema_text}' "
        f"(function {_describe(old._init_fn)}); {new._owner} tried to define it as '{new._schema_text}' "
        f"(function {_describe(new._init_fn)}). Use a different name, or call _destroy() on the first definition."
    )


def _same_definition(a: CustomOpDef, b: CustomOpDef) -> bool:
    return a._schema_text == b._schema_text and _same(a._init_fn, b._init_fn) and set(a._kernels) == set(b._kernels)


def _make_def(name: str, fn: Callable[..., Any], mutates_args: Any, device_types: Any, schema: str | None,
              tags: Any, owner: str) -> CustomOpDef:
    ns, opname = _split_name(name)
    if schema is None:
        schema_text = infer_schema(fn, mutates_args=mutates_args)
    else:
        schema_text = schema.strip()
        if not schema_text.startswith("("):
            raise ValueError(f"custom_op schema must not include the operator name: expected '(...) -> ...', got {schema!r}.")
        parsed = parse_schema(f"{opname}{schema_text}", namespace=ns)
        if mutates_args != UNKNOWN_MUTATES:
            declared = _mutated_names(parsed)
            if declared != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}`. The "
                    f"schema suggests that the op mutates {sorted(declared)} which is different from what was "
                    f"provided to us in `mutates_args`. Please make these consistent."
                )
    tag_names = tuple(getattr(t, "name", t) for t in (tags or ()))
    opdef = CustomOpDef(ns, opname, schema_text, fn, owner=owner, tags=tag_names)
    for dt in _normalize_device_types(device_types):
        opdef._kernels[dt] = fn
    return opdef


def _owner_of(fn: Callable[..., Any], name: str) -> str:
    code = getattr(fn, "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    return f"custom_op({name!r}){where}"


def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: Iterable[str] | str,
              device_types: str | Sequence[str] | None = None, schema: str | None = None,
              tags: Any = None) -> Any:
    """Wrap ``fn`` as the operator ``name`` (``'ns::op'``) and register it now.

    Args:
        mutates_args: names of the arguments ``fn`` writes to (``()`` for none), or ``"unknown"``.
        device_types: where ``fn`` is the kernel: None (every device), ``"cpu"``, or a sequence.
        schema: the schema without its name (``"(Tensor x) -> Tensor"``); inferred from the type
            hints when omitted (see :func:`infer_schema`).

    Returns a :class:`CustomOpDef` (callable; reachable as ``torchplug.ops.<ns>.<op>`` too).
    Decorator use: ``@custom_op("mylib::f", mutates_args=())``.

    Unlike PyTorch, which silently replaces an op defined twice, an identical re-definition
    returns the existing op and a different one raises naming both.
    """
    def inner(f: Callable[..., Any]) -> CustomOpDef:
        opdef = _make_def(name, f, mutates_args, device_types, schema, tags, _owner_of(f, name))
        existing = lookup_custom_op(opdef._qualname)
        if existing is not None:
            if existing._defines and _same_definition(existing, opdef):
                return existing
            raise _definition_conflict(existing, opdef)
        _ensure_plugins()  # device types (and the meta key for fake kernels) come from backend plugins
        opdef._install(Library(opdef._namespace, "FRAGMENT", owner=opdef._owner), owns_lib=True)
        return opdef

    return inner if fn is None else inner(fn)


class OpLibrary:
    """Custom ops a plugin declares at import time and installs from its hook.

    Example::

        OPS = OpLibrary("fused")

        @OPS.custom_op("fused::scale", mutates_args=())
        def scale(x: Tensor, s: float) -> Tensor: ...

        @hookimpl
        def torchplug_register_ops(ctx):
            OPS.register(ctx)          # attributed to the plugin, undone when it unloads
    """

    def __init__(self, namespace: str) -> None:
        if not namespace.isidentifier():
            raise ValueError(f"Invalid namespace {namespace!r}: use letters, digits and underscores")
        self.namespace = namespace
        self.ops: dict[str, CustomOpDef] = {}

    def custom_op(self, name: str, fn: Callable[..., Any] | None = None, /, *, mutates_args: Iterable[str] | str,
                  device_types: str | Sequence[str] | None = None, schema: str | None = None,
                  tags: Any = None) -> Any:
        """Like :func:`custom_op`, but only declares the op; :meth:`register` installs it."""
        def inner(f: Callable[..., Any]) -> CustomOpDef:
            owner = f"OpLibrary({self.namespace!r}) (not registered yet)"
            opdef = _make_def(name, f, mutates_args, device_types, schema, tags, owner)
            if opdef._namespace != self.namespace:
                raise ValueError(f"OpLibrary({self.namespace!r}) cannot declare {name!r}: it is in another namespace.")
            old = self.ops.get(opdef._qualname)
            if old is not None:
                if _same_definition(old, opdef):
                    return old
                raise _definition_conflict(old, opdef)
            self.ops[opdef._qualname] = opdef
            return opdef

        return inner if fn is None else inner(fn)

    def register(self, target: Any) -> None:
        """Install every declared op through a plugin context (``ctx``) or a :class:`Library`."""
        if isinstance(target, Library):
            lib, owner = target, target.owner
        else:
            lib = target.library(self.namespace, "FRAGMENT")
            owner = lib.owner
            # Unloading the plugin closes its libraries; this makes the op objects say so too.
            target.record.libraries.append(_Uninstaller(list(self.ops.values())))
        installed = []
        try:
            for opdef in self.ops.values():
                opdef._owner = owner
                opdef._install(lib, owns_lib=False)
                installed.append(opdef)
        except BaseException:
            for opdef in installed:
                opdef._uninstall()
            raise

    def __iter__(self) -> Any:
        return iter(self.ops.values())

    def __repr__(self) -> str:
        return f"<OpLibrary {self.namespace!r}: {', '.join(self.ops) or 'no ops'}>"


class _Uninstaller:
    """Closed with a plugin's libraries: marks its op objects uninstalled."""

    def __init__(self, defs: list[CustomOpDef]) -> None:
        self.defs = defs

    def close(self) -> None:
        for opdef in self.defs:
            opdef._uninstall()


# -- functional API over any op ------------------------------------------------------------------------
def lookup_custom_op(name: str) -> CustomOpDef | None:
    """The installed :class:`CustomOpDef` of ``'ns::op'``, or None."""
    found = _CUSTOM_OPS.get(name)
    if found is not None and not _live(found):
        found._uninstall()  # its library was closed under it (an adapter's ``lib=``)
        return None
    return found


def _live(opdef: CustomOpDef) -> bool:
    return (opdef._entry is not None and DISPATCHER.ops.get(opdef._qualname) is opdef._entry
            and all(reg.active for reg in opdef._regs.values()))


def _op_name(op: Any) -> str:
    if isinstance(op, CustomOpDef):
        return op._qualname
    if hasattr(op, "name") and callable(op.name):
        return op.name()
    if hasattr(op, "_namespace") and hasattr(op, "_name"):  # an OpOverloadPacket
        return f"{op._namespace}::{op._name}"
    if isinstance(op, str):
        return op
    raise TypeError(f"Expected a custom op, an OpOverload or an 'ns::op' name, got {type(op).__name__}.")


def resolve_op(op: Any, lib: Library | None = None) -> CustomOpDef:
    """The :class:`CustomOpDef` for ``op``; an op defined with ``Library.define`` gets an adapter
    that registers through ``lib`` (or a library kept alive for the process, as PyTorch does)."""
    if isinstance(op, CustomOpDef):
        return op
    name = _op_name(op)
    found = lookup_custom_op(name)
    if found is not None:
        return found
    _ensure_plugins()
    entry = DISPATCHER.find(name)
    if entry is None:
        raise RuntimeError(f"Operator {name!r} is not defined. Define it first (custom_op or Library.define).")
    schema = entry.schema
    nameless = str(schema)[len(schema.full_name):]
    ns = schema.namespace
    full = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
    adapter = CustomOpDef(ns, full.replace(".", "_"), nameless, None, owner=entry.defined_by, defines=False)
    adapter._qualname, adapter._name, adapter._parsed = name, full, schema
    owner = lib if lib is not None else Library(ns, "IMPL", owner=f"torchplug.library registrations for {name}")
    adapter._install(owner, owns_lib=lib is None)
    return adapter


def register_kernel(op: Any, device_types: str | Sequence[str | None] | None, func: Callable[..., Any] | None = None,
                    /, *, lib: Library | None = None) -> Any:
    """Register ``func`` as the kernel of ``op`` on ``device_types`` (decorator without ``func``)."""
    return resolve_op(op, lib).register_kernel(device_types, func)


def register_fake(op: Any, func: Callable[..., Any] | None = None, /, *, lib: Library | None = None,
                  allow_override: bool = False) -> Any:
    """Register the fake (meta) kernel of ``op`` (decorator without ``func``)."""
    return resolve_op(op, lib).register_fake(func, allow_override=allow_override)


def register_autograd(op: Any, backward: Callable[..., Any], /, *, setup_context: Callable[..., Any] | None = None,
                      lib: Library | None = None) -> None:
    """Register the backward formula of ``op``; see :meth:`CustomOpDef.register_autograd`."""
    resolve_op(op, lib).register_autograd(backward, setup_context=setup_context)


def register_vmap(op: Any, func: Callable[..., Any] | None = None, /, *, lib: Library | None = None) -> Any:
    """Register the vmap rule of ``op`` (decorator without ``func``); see :meth:`CustomOpDef.register_vmap`."""
    return resolve_op(op, lib).register_vmap(func)


def register_autocast(op: Any, device_type: str, cast_inputs: Any, /, *, lib: Library | None = None) -> None:
    """Cast ``op``'s floating inputs to ``cast_inputs`` inside autocast regions of ``device_type``."""
    resolve_op(op, lib).register_autocast(device_type, cast_inputs)
