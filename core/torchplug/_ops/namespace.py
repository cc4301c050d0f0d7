"""``torchplug.ops``: operator namespaces, overload packets and overloads over the dispatcher."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torchplug._dispatch import keys as K
from torchplug._dispatch.codegen import build_entry, python_name
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._dispatch.schema import FunctionSchema

__all__ = ["OpOverload", "OpOverloadPacket", "ops", "list_ops"]


class OpOverload:
    """One operator overload, e.g. ``torchplug.ops.aten.add.Tensor``; calling it dispatches."""

    __slots__ = ("_entry", "_name", "__weakref__")

    def __init__(self, entry: OperatorEntry) -> None:
        self._entry = entry
        self._name = entry.schema.full_name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self._entry.call
        assert call is not None
        return call(*args, **kwargs)

    @property
    def _schema(self) -> FunctionSchema:
        return self._entry.schema

    @property
    def namespace(self) -> str:
        return self._entry.schema.namespace

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        schema = self._entry.schema
        return getattr(getattr(ops, schema.namespace), schema.name)

    @property
    def tags(self) -> tuple[str, ...]:
        return self._entry.tags

    @property
    def is_view(self) -> bool:
        return self._entry.schema.view_of is not None

    def name(self) -> str:
        """Full name, e.g. ``'aten::add.Tensor'``."""
        return self._name

    def redispatch(self, keyset: int, *args: Any) -> Any:
        """Call the kernel selected by ``keyset`` with normalized positional arguments."""
        entry = self._entry
        kernel = entry.cache.get(keyset) or DISPATCHER.lookup(entry, keyset)
        return kernel(*args)

    def has_kernel_for_dispatch_key(self, key: str) -> bool:
        from torchplug._base.upcalls import ensure_plugins_loaded

        ensure_plugins_loaded()  # the autograd, autocast and batching kernels come from plugins loaded on demand
        return bool(self._entry.kernels.get(K.lookup_key(key).name))

    def kernels(self) -> dict[str, list[str]]:
        """Registered kernels per key, newest first, each as 'module:qualname [registered by ...]'."""
        from torchplug._base.upcalls import ensure_plugins_loaded

        ensure_plugins_loaded()  # as above: every plugin's kernels
        return {k: [r.describe() for r in regs] for k, regs in self._entry.kernels.items() if regs}

    @property
    def _opname(self) -> str:
        return self._entry.schema.name

    @property
    def _overloadname(self) -> str:
        return PYTORCH_OVERLOAD_NAMES.get(self._name) or self._entry.schema.overload_name or "default"

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return f"{self._opname}.{self._overloadname}"

    def __str__(self) -> str:
        return f"{self._entry.schema.namespace}.{self.__name__}"

    def __repr__(self) -> str:
        schema = self._entry.schema
        return f"<OpOverload(op='{schema.namespace}.{schema.name}', overload='{self._overloadname}')>"


class OpOverloadPacket:
    """All overloads of one operator name, e.g. ``torchplug.ops.aten.add``."""

    def __init__(self, namespace: str, name: str) -> None:
        self._namespace = namespace
        self._name = name

    def _overload_entries(self) -> dict[str, OperatorEntry]:
        return dict(_INDEX.get(self._namespace, {}).get(self._name, {}))

    def overloads(self) -> list[str]:
        return sorted(self._overload_entries())

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        entry = self._overload_entries().get(overload)
        if entry is None:
            raise AttributeError(
                f"The operator '{self._namespace}::{self._name}' has no overload {overload!r}. "
                f"Overloads: {self.overloads()}."
            )
        return entry.overload

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        entries = self._overload_entries()
        if len(entries) == 1:
            return next(iter(entries.values())).overload(*args, **kwargs)
        if "default" in entries:
            return entries["default"].overload(*args, **kwargs)
        errors = []
        # the Tensor overload first, as ATen registers it first (ops.aten.add(x, 2) is add.Tensor, not add.Scalar)
        for name, entry in sorted(entries.items(), key=lambda kv: (kv[0] != "Tensor", kv[0])):
            try:
                return entry.overload(*args, **kwargs)
            except TypeError as exc:
                errors.append(f"  {name}: {exc}")
        raise TypeError(
            f"No overload of '{self._namespace}::{self._name}' accepts these arguments:\n" + "\n".join(errors)
        )

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self._name

    @property
    def _qualified_op_name(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __str__(self) -> str:
        return f"{self._namespace}.{self._name}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._namespace}.{self._name}')>"


class _OpNamespace:
    """``torchplug.ops.<ns>``; iterating lists every defined op (not only the ones touched)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, op: str) -> OpOverloadPacket:
        if op.startswith("__"):
            raise AttributeError(op)
        if op not in self._ops():
            raise AttributeError(
                f"Namespace torchplug.ops.{self._name} has no operator {op!r}. "
                "Is the plugin that defines it installed and not blocked?"
            )
        return OpOverloadPacket(self._name, op)

    def _ops(self) -> dict[str, Any]:
        from torchplug._base.upcalls import ensure_backends_loaded

        # a plugin may define this namespace; those loaded on demand define no operators, only kernels
        ensure_backends_loaded()
        return _INDEX.get(self._name, {})

    def _op_names(self) -> set[str]:
        return set(self._ops())

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._op_names()))

    def __dir__(self) -> list[str]:
        return sorted(self._op_names())

    def __repr__(self) -> str:
        return f"<torchplug.ops.{self._name}>"


class _Ops:
    """``torchplug.ops``: attribute access gives a namespace."""

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _OpNamespace(ns)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({full.split("::")[0] for full in list(DISPATCHER.ops)}))

    def __dir__(self) -> list[str]:
        return list(self)


ops = _Ops()


def list_ops(namespace: str | None = None) -> list[str]:
    """Full names of every defined operator overload, optionally within one namespace."""
    from torchplug._base.upcalls import ensure_backends_loaded

    ensure_backends_loaded()  # the plugins that define operators (those loaded on demand define none)
    names = sorted(DISPATCHER.ops)
    if namespace is not None:
        names = [n for n in names if n.startswith(namespace + "::")]
    return names


# namespace -> operator name -> overload name ('default' for none) -> entry, kept in step with the
# dispatcher's definitions so ``torchplug.ops.<ns>.<op>`` never scans every operator.
_INDEX: dict[str, dict[str, dict[str, OperatorEntry]]] = {}


def _pytorch_names() -> dict[str, str]:
    """Table op -> the overload name PyTorch gives it, where the table's differs: the table keeps one overload
    per kernel (``mul`` takes numbers for ``other`` too) while ATen names it ``mul.Tensor``."""
    names = {"aten::mul": "Tensor", "aten::mul_": "Tensor", "aten::floor_divide_": "Tensor",
             "aten::pow_.Tensor_Tensor": "Tensor", "aten::ldexp_.Tensor": "default", "aten::lerp.out": "Tensor_out",
             "aten::xlogy.out": "OutTensor", "aten::conv_transpose2d": "input", "aten::conv_transpose3d": "input"}
    for op in ("remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
               "bitwise_right_shift"):
        names.update({f"aten::{op}": "Tensor", f"aten::{op}.out": "Tensor_out", f"aten::{op}_": "Tensor"})
    names.update({f"aten::{op}.out": "Tensor_out" for op in ("eq", "ne", "lt", "le", "gt", "ge")})
    return names


PYTORCH_OVERLOAD_NAMES = _pytorch_names()


def _index_key(entry: OperatorEntry) -> tuple[str, str, str]:
    ns, _, rest = entry.name.partition("::")
    name, _, overload = rest.partition(".")
    return ns, name, PYTORCH_OVERLOAD_NAMES.get(entry.name) or overload or "default"


def _on_define(entry: OperatorEntry) -> None:
    schema = entry.schema
    entry.call = build_entry(entry, func_name=python_name(schema.name))
    overload = OpOverload(entry)
    entry.overload = overload
    ns, name, over = _index_key(entry)
    _INDEX.setdefault(ns, {}).setdefault(name, {})[over] = entry
    if entry.name in PYTORCH_OVERLOAD_NAMES:
        DISPATCHER.aliases[_pytorch_full_name(ns, name, over)] = entry.name


def _pytorch_full_name(ns: str, name: str, overload: str) -> str:
    return f"{ns}::{name}" if overload == "default" else f"{ns}::{name}.{overload}"


def _on_undefine(entry: OperatorEntry) -> None:
    ns, name, over = _index_key(entry)
    if DISPATCHER.aliases.get(_pytorch_full_name(ns, name, over)) == entry.name:
        del DISPATCHER.aliases[_pytorch_full_name(ns, name, over)]
    ops = _INDEX.get(ns, {})
    overloads = ops.get(name, {})
    if overloads.get(over) is entry:
        del overloads[over]
        if not overloads:
            del ops[name]
        if not ops:
            _INDEX.pop(ns, None)


DISPATCHER.on_define.append(_on_define)
DISPATCHER.on_undefine.append(_on_undefine)
