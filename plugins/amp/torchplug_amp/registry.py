"""The autocast policy registry: merges contributed policies, registers kernels, explains membership.

Plugins contribute policies with ``ctx.register_autocast_policy`` (kept by the plugin manager);
users add their own with :func:`register_policy` or move single ops with
:func:`set_op_policy`.  For every device type the contributions are folded in order into one
table (op -> cast policy, with who put it there), and one autocast kernel is registered per
listed op that exists, at the device's ``Autocast<Backend>`` key.  Names of ops nobody has
defined yet stay in the table; the kernel is registered when the op is defined.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import torchplug
from torchplug._runtime.backends import registered_backends
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._plugins import manager as _manager
from torchplug.library import Library

from .kernel import make_autocast_kernel
from .policy import CAST_POLICIES, AutocastPolicy, normalize_op_name
from .state import DEFAULT_DTYPES

__all__ = [
    "REGISTRY",
    "Rule",
    "DeviceTable",
    "AutocastExplanation",
    "PolicyHandle",
]

USER = "user"


@dataclass
class Rule:
    """One op's place in one device's table."""

    name: str  # the listed name, normalized ('aten::prod.dim_int')
    policy: str | None  # a CAST_POLICIES entry, or None: removed (falls through)
    owner: str  # who put it there: a plugin label or 'user'
    message: str | None = None  # for banned ops


@dataclass
class DeviceTable:
    """The merged policy of one device type."""

    device_type: str
    default_dtype: Any = None
    supported_dtypes: tuple[Any, ...] = ()
    dtype_owner: str = ""
    rules: dict[str, Rule] = field(default_factory=dict)  # listed name -> rule
    problems: list[str] = field(default_factory=list)
    # registered op full name -> (rule, the Registration)
    kernels: dict[str, tuple[Rule, Any]] = field(default_factory=dict)
    libraries: dict[str, Library] = field(default_factory=dict)
    key: str | None = None  # the Autocast<Backend> key the kernels went to (None: no backend then)

    def lists(self) -> dict[str, list[str]]:
        """Cast policy -> listed names (removed names omitted)."""
        out: dict[str, list[str]] = {p: [] for p in CAST_POLICIES}
        for name, rule in self.rules.items():
            if rule.policy is not None:
                out[rule.policy].append(name)
        return out


@dataclass
class AutocastExplanation:
    """Where one op stands in one device's autocast policy."""

    device_type: str
    op: str
    policy: str | None = None
    listed_as: str | None = None
    owner: str | None = None
    target: str = ""
    defined: bool = False
    kernel: str | None = None
    note: str = ""

    def __str__(self) -> str:
        if self.policy is None:
            head = f"{self.op} on {self.device_type!r}: on no autocast list (runs in its inputs' dtypes)"
        else:
            head = f"{self.op} on {self.device_type!r}: {self.policy}"
            if self.target:
                head += f" ({self.target})"
        lines = [head]
        if self.listed_as is not None:
            lines.append(f"  listed as {self.listed_as!r} by {self.owner}")
        elif self.owner is not None:
            lines.append(f"  removed from its list by {self.owner}")
        if self.kernel:
            lines.append(f"  kernel: {self.kernel}")
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)


class PolicyHandle:
    """Returned by :func:`register_policy`; ``remove()`` (or leaving a ``with`` block) takes it back."""

    def __init__(self, registry: _Registry, policy: AutocastPolicy, owner: str) -> None:
        self._registry = registry
        self.policy = policy
        self.owner = owner

    def remove(self) -> None:
        self._registry.remove_user_policy(self)

    def __enter__(self) -> PolicyHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _describe_target(policy: str, dtype: Any) -> str:
    return {
        "lower_precision_fp": f"runs in the autocast dtype, {dtype} by default",
        "fp32": "runs in float32",
        "fp32_set_opt_dtype": "dtype=float32 unless the caller passes dtype=",
        "promote": "runs in the widest floating dtype of its inputs",
        "banned": "raises under autocast",
    }.get(policy, "")


class _Registry:
    """All device tables; rebuilt when contributions change, extended when ops are defined."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.tables: dict[str, DeviceTable] = {}
        self.user_policies: list[PolicyHandle] = []
        self.overrides: dict[tuple[str, str], Rule] = {}  # (device, name) -> rule
        self.ctx: Any = None  # the amp plugin's PluginContext, once configured
        self.active = False

    # -- lifecycle ----------------------------------------------------------------------------------
    def activate(self, ctx: Any) -> None:
        """Called from the amp plugin's configure hook: read every policy, register kernels."""
        with self.lock:
            self.ctx = ctx
            self.active = True
            if self._on_change not in _manager.AUTOCAST_POLICY_LISTENERS:
                _manager.AUTOCAST_POLICY_LISTENERS.append(self._on_change)
            if self._on_define not in DISPATCHER.on_define:
                DISPATCHER.on_define.append(self._on_define)
                DISPATCHER.on_undefine.append(self._on_undefine)
            self.rebuild()

    def deactivate(self) -> None:
        with self.lock:
            self.active = False
            for table in self.tables.values():
                self._close(table)
            if self._on_change in _manager.AUTOCAST_POLICY_LISTENERS:
                _manager.AUTOCAST_POLICY_LISTENERS.remove(self._on_change)
            if self._on_define in DISPATCHER.on_define:
                DISPATCHER.on_define.remove(self._on_define)
                DISPATCHER.on_undefine.remove(self._on_undefine)
            self.tables.clear()
            DEFAULT_DTYPES.clear()

    def ensure_kernels(self, device_type: str) -> None:
        """Register a table's kernels if its backend appeared after the policy did."""
        table = self.tables.get(device_type)
        if self.active and table is not None and table.key is None and self._key_name(device_type) is not None:
            self.rebuild()

    def _alive(self) -> bool:
        ctx = self.ctx
        if not self.active or ctx is None:
            return False
        record = ctx.record
        return _manager.MANAGER.records.get(record.name) is record and record.status != "failed"

    def _on_change(self) -> None:
        if not self._alive():
            self.deactivate()
            return
        self.rebuild()

    # -- merging ------------------------------------------------------------------------------------
    def _contributions(self) -> list[tuple[AutocastPolicy | None, str, str]]:
        """(policy, owner, problem) in merge order: plugins, then user policies."""
        out: list[tuple[AutocastPolicy | None, str, str]] = []
        for c in list(_manager.AUTOCAST_POLICIES):
            try:
                out.append((AutocastPolicy.from_data(c.policy, c.device_type), c.owner, ""))
            except (TypeError, ValueError) as exc:
                out.append((None, c.owner, f"{c.device_type}: invalid policy from {c.owner}: {exc}"))
        out.extend((h.policy, h.owner, "") for h in self.user_policies)
        return out

    def rebuild(self) -> None:
        """Re-merge every contribution and re-register every autocast kernel."""
        with self.lock:
            for table in self.tables.values():
                self._close(table)
            tables: dict[str, DeviceTable] = {}
            problems: list[str] = []
            for policy, owner, problem in self._contributions():
                if policy is None:
                    problems.append(problem)
                    continue
                table = tables.setdefault(policy.device_type, DeviceTable(policy.device_type))
                if policy.default_dtype is not None:
                    table.default_dtype = policy.default_dtype
                    table.dtype_owner = owner
                if policy.supported_dtypes is not None:
                    table.supported_dtypes = tuple(policy.supported_dtypes)
                for name, kind, message in policy.entries():
                    table.rules[name] = Rule(name, kind, owner, message)
            for (device_type, name), rule in self.overrides.items():
                table = tables.setdefault(device_type, DeviceTable(device_type))
                table.rules[name] = rule
            for table in tables.values():
                if table.default_dtype is None:
                    table.default_dtype = torchplug.float16
                if not table.supported_dtypes:
                    table.supported_dtypes = (torchplug.bfloat16, torchplug.float16)
            for problem in problems:
                device = problem.split(":", 1)[0]
                tables.setdefault(device, DeviceTable(device)).problems.append(problem)
            self.tables = tables
            DEFAULT_DTYPES.clear()
            DEFAULT_DTYPES.update({d: t.default_dtype for d, t in tables.items()})
            if self.active:
                for table in tables.values():
                    self._register_all(table)

    # -- kernels ------------------------------------------------------------------------------------
    def _close(self, table: DeviceTable) -> None:
        for lib in table.libraries.values():
            lib.close()
            if self.ctx is not None and lib in self.ctx.record.libraries:
                self.ctx.record.libraries.remove(lib)
        table.libraries.clear()
        table.kernels.clear()
        table.key = None

    def _key_name(self, device_type: str) -> str | None:
        backend = registered_backends().get(device_type)
        return None if backend is None else "Autocast" + backend.key_name

    def _register_all(self, table: DeviceTable) -> None:
        table.key = self._key_name(table.device_type)
        if table.key is None:
            return
        chosen: dict[str, Rule] = {}
        exact: set[str] = set()
        for name, rule in table.rules.items():
            entry, is_exact = resolve(name)
            if entry is None or rule.policy is None or entry.schema.is_mutable:
                continue
            if entry.name in exact and not is_exact:
                continue  # an exact listing beats a name folded onto the same op
            chosen[entry.name] = rule
            if is_exact:
                exact.add(entry.name)
        for op, rule in chosen.items():
            self._register(table, DISPATCHER.ops[op], rule)

    def _register(self, table: DeviceTable, entry: OperatorEntry, rule: Rule) -> None:
        key = self._key_name(table.device_type)
        if key is None or rule.policy is None:
            return
        ns = entry.schema.namespace
        lib = table.libraries.get(ns)
        if lib is None:
            lib = self.ctx.library(ns, "IMPL") if self.ctx is not None else Library(ns, "IMPL", owner="amp")
            table.libraries[ns] = lib
        fn = make_autocast_kernel(entry, table.device_type, rule.policy, rule.message)
        reg = lib.impl(entry.name, fn, key, with_keyset=True, allow_override=True)
        table.kernels[entry.name] = (rule, reg)

    def _on_define(self, entry: OperatorEntry) -> None:
        if not self.active:
            return
        full = entry.name
        base = entry.schema.qualified_name
        for table in self.tables.values():
            rule = table.rules.get(full)
            if rule is None and base == full:
                # a table that folds overloads into one op: 'prod.dim_int' listed, 'prod' defined
                rule = next((r for n, r in table.rules.items() if n.split(".")[0] == base), None)
            if rule is not None and rule.policy is not None and not entry.schema.is_mutable:
                self._register(table, entry, rule)

    def _on_undefine(self, entry: OperatorEntry) -> None:
        for table in self.tables.values():
            table.kernels.pop(entry.name, None)

    # -- user edits -----------------------------------------------------------------------------------
    def add_user_policy(self, policy: AutocastPolicy, owner: str) -> PolicyHandle:
        handle = PolicyHandle(self, policy, owner)
        with self.lock:
            self.user_policies.append(handle)
            self.rebuild()
        return handle

    def remove_user_policy(self, handle: PolicyHandle) -> None:
        with self.lock:
            if handle in self.user_policies:
                self.user_policies.remove(handle)
                self.rebuild()

    def set_override(self, device_type: str, op: Any, policy: str | None, owner: str, message: str | None) -> None:
        if policy is not None and policy not in CAST_POLICIES:
            raise ValueError(f"Unknown cast policy {policy!r}; expected one of {CAST_POLICIES} or None.")
        name = normalize_op_name(op)
        with self.lock:
            self.overrides[(device_type, name)] = Rule(name, policy, owner, message)
            self.rebuild()

    def reset_override(self, device_type: str, op: Any) -> None:
        name = normalize_op_name(op)
        with self.lock:
            if self.overrides.pop((device_type, name), None) is not None:
                self.rebuild()

    # -- introspection ------------------------------------------------------------------------------
    def explain(self, device_type: str, op: Any) -> AutocastExplanation:
        name = normalize_op_name(op)
        table = self.tables.get(device_type)
        entry, _ = resolve(name)
        report = AutocastExplanation(device_type, entry.name if entry is not None else name, defined=entry is not None)
        if table is None:
            report.note = f"no autocast policy is registered for {device_type!r}"
            return report
        rule = table.rules.get(name)
        if rule is None and entry is not None:
            rule = table.rules.get(entry.name)
            if rule is None:
                registered = table.kernels.get(entry.name)
                rule = registered[0] if registered else None
        if rule is None:
            return report
        report.policy = rule.policy
        report.owner = rule.owner
        if rule.policy is not None:
            report.listed_as = rule.name
            report.target = _describe_target(rule.policy, table.default_dtype)
        if entry is None:
            report.note = "no plugin defines this op yet; its kernel is registered when one does"
        elif entry.schema.is_mutable:
            report.note = "mutates its arguments: autocast leaves in-place and out= overloads alone"
        elif entry.name in table.kernels:
            key = self._key_name(device_type)
            report.kernel = f"{key}: {table.kernels[entry.name][1].describe()}"
        elif self._key_name(device_type) is None:
            report.note = f"device type {device_type!r} is not registered, so no kernel is"
        return report

    def unknown_names(self, device_type: str) -> list[str]:
        table = self.tables.get(device_type)
        if table is None:
            return []
        return sorted(n for n, r in table.rules.items() if r.policy is not None and resolve(n)[0] is None)


def resolve(name: str) -> tuple[OperatorEntry | None, bool]:
    """The op a listed name means, and whether the match is exact.

    torchplug folds some of PyTorch's overloads into one op with optional arguments
    (``sum.dim_IntList`` into ``sum``), so a listed overload that is not defined maps to the
    op's default overload when that exists.
    """
    entry = DISPATCHER.find(name)
    if entry is not None:
        return entry, True
    base, dot, _ = name.partition(".")
    if dot:
        folded = DISPATCHER.find(base)
        if folded is not None:
            return folded, False
    return None, False


REGISTRY = _Registry()
