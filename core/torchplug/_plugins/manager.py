"""Plugin discovery and loading: entry points, block list, kill switch, and failure records.

Loading is staged, so that a first op does not pay for every plugin: the backends and any plugin the core
cannot load on demand come first (:meth:`PluginManager.ensure_ready`, what a device lookup needs); the core-layer
plugins in :data:`ON_DEMAND` come when their trigger fires (:meth:`PluginManager.ensure_plugin`); and
:meth:`PluginManager.ensure_loaded` loads everything (the doctor, ``explain``, kernel introspection).
"""

from __future__ import annotations

import logging
import os
import threading
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from torchplug._runtime import backends as _backends
from torchplug._runtime import registration as _registration
from torchplug._plugins import exposure as _exposure
from torchplug._plugins.discovery import read_entry_points
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.keys import BACKEND_BAND
from torchplug._plugins.hookspecs import PROJECT_NAME, TorchplugHookSpecs
from torchplug._dispatch.library import KernelTable, Library

__all__ = [
    "PluginRecord", "PluginContext", "PluginManager", "MANAGER", "ENTRY_POINT_GROUPS",
    "AutocastPolicyContribution", "AUTOCAST_POLICIES", "AUTOCAST_POLICY_LISTENERS", "ON_DEMAND",
]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUPS = ("torchplug.backends", "torchplug.plugins")
# Core-layer plugins shipped with torchplug that load on their first use instead of with the backends:
# plugin name -> the package its entry point must name (a third-party plugin that reuses the name loads
# eagerly).  Everything each of them does is reached through a trigger the core sees first: a name it exposes
# (``torchplug.nn``, ``torchplug.no_grad``... : :func:`torchplug._plugins.lookup.resolve` loads the provider of
# the name), a tensor that requires grad or a Tensor autograd method (autograd, through the Tensor's
# ``autograd_hooks``), an autocast region or a batched tensor (only reachable through ``torchplug.amp`` /
# ``torchplug.autocast`` and ``torchplug.func`` / ``torchplug.vmap``), the profiler's key (in a thread's key
# sets only while ``torchplug.profiler`` records).  None of them defines operators or
# registers kernels at keys plain tensors reach.  Any other plugin may register kernels for any op on any key,
# so it loads with the backends, before the first op runs.
ON_DEMAND = {
    "autograd": "torchplug_autograd", "nn": "torchplug_nn", "amp": "torchplug_amp", "func": "torchplug_func",
    "distributed": "torchplug_distributed", "distributions": "torchplug_distributions",
    "profiler": "torchplug_profiler",
}
# Backends shipped with torchplug whose kernels register when a dispatch first reaches their device (see
# ``Dispatcher.pending_kernels``) instead of at plugin loading: plugin name -> the package its entry point must
# name.  Their devices exist from the start (``register_backends`` runs as for any plugin); only the ~900
# kernel registrations each wait, since their tables hold kernels for their own dispatch keys only and no
# tensor reaches those keys before one exists on the device.  Kernel introspection loads them first
# (``ensure_loaded``).
LAZY_KERNELS = {"meta": "torchplug_meta", "cuda": "torchplug_cuda", "mps": "torchplug_mps"}
_PHASES = (
    "torchplug_register_backends",
    "torchplug_register_ops",
    "torchplug_register_kernels",
    "torchplug_register_autocast_policy",
    "torchplug_configure",
)


@dataclass(eq=False)
class PluginRecord:
    """What the manager knows about one plugin: where it came from and what happened to it."""

    name: str
    group: str
    value: str  # 'module' or 'module:attr' from the entry point
    distribution: str = ""
    version: str = ""
    status: str = "discovered"  # discovered (not loaded yet) | loaded | blocked | disabled | failed
    reason: str = ""  # why blocked/failed
    error: BaseException | None = None
    traceback: str = ""
    device_types: list[str] = field(default_factory=list)
    # every device type the plugin ever registered, kept after a failure undid the registration so
    # that asking for such a device can name the plugin and what went wrong
    declared_device_types: list[str] = field(default_factory=list)
    libraries: list[Library] = field(default_factory=list)

    @property
    def label(self) -> str:
        dist = f"{self.distribution} {self.version}".strip()
        return f"plugin {self.name!r} ({dist})" if dist else f"plugin {self.name!r}"


@dataclass(eq=False)
class AutocastPolicyContribution:
    """One autocast policy a plugin contributed: plain data, interpreted by the amp plugin."""

    device_type: str
    policy: Any  # a mapping or an object with the fields of torchplug.amp.AutocastPolicy
    plugin: str  # the contributing plugin's name
    owner: str  # its label, for introspection


# Policies from ``ctx.register_autocast_policy``, in registration order.  The core never reads
# them; the amp plugin does, and subscribes to changes (a plugin loaded or unloaded later).
AUTOCAST_POLICIES: list[AutocastPolicyContribution] = []
AUTOCAST_POLICY_LISTENERS: list[Any] = []  # callables, called with no arguments after a change


def _autocast_policies_changed() -> None:
    for listener in list(AUTOCAST_POLICY_LISTENERS):
        try:
            listener()
        except Exception:  # noqa: BLE001 - a listener's bug must not fail the contributing plugin
            log.warning("autocast policy listener %r failed", listener, exc_info=True)


class PluginContext:
    """Handed to every hook of one plugin; everything registered through it is attributed to,
    and undone with, that plugin."""

    def __init__(self, manager: PluginManager, record: PluginRecord) -> None:
        self.manager = manager
        self.record = record
        self.plugin = record.name
        self.distribution = record.distribution

    def register_backend(self, backend: _backends.Backend) -> _backends.Backend:
        """Register a device type (see :class:`torchplug.backends.Backend`)."""
        backend.plugin = backend.plugin or self.record.name
        backend.distribution = backend.distribution or self.record.distribution
        _registration.register_backend(backend)
        self.record.device_types.append(backend.device_type)
        if backend.device_type not in self.record.declared_device_types:
            self.record.declared_device_types.append(backend.device_type)
        return backend

    def library(self, ns: str, kind: str = "IMPL", dispatch_key: str = "") -> Library:
        """A Library owned by this plugin, closed when the plugin is unloaded."""
        lib = Library(ns, kind, dispatch_key, owner=self.record.label)
        self.record.libraries.append(lib)
        return lib

    def expose(self, name: str, obj: Any) -> None:
        """Make ``obj`` available as ``torchplug.<name>`` (and importable if it is a module)."""
        _exposure.expose(name, obj, self.record.name)

    def register_autocast_policy(self, device_type: str, policy: Any) -> None:
        """Contribute the autocast policy (cast lists, default dtype) of ``device_type``; see
        ``torchplug.amp.AutocastPolicy`` for the fields.  Removed when the plugin is unloaded."""
        AUTOCAST_POLICIES.append(AutocastPolicyContribution(device_type, policy, self.record.name, self.record.label))
        _autocast_policies_changed()

    def subscribe_memory_events(self, callback: Any, device_type: str | None = None) -> Any:
        """Call ``callback(torchplug._runtime.allocator.MemoryEvent)`` on every alloc/free of ``device_type``
        (every device type registered so far when None); removed when the plugin is unloaded."""
        from torchplug._runtime.allocator import subscribe

        sub = subscribe(callback, device_type)
        self.record.libraries.append(sub)  # anything with close() is undone with the plugin
        return sub

    def register_kernels(self, *tables: KernelTable) -> None:
        """Register every kernel collected in ``tables``."""
        for table in tables:
            by_ns: dict[str, list[tuple[str, Any, str, bool]]] = {}
            for name, fn, key, with_keyset in table.kernels:
                by_ns.setdefault(name.split("::")[0] if "::" in name else "aten", []).append((name, fn, key, with_keyset))
            for ns, kernels in by_ns.items():
                lib = self.library(ns, "IMPL")
                for name, fn, key, with_keyset in kernels:
                    lib.impl(name, fn, key, with_keyset=with_keyset)


def __getattr__(name: str) -> Any:
    # ``importlib.metadata`` (the standard library's; the backport costs ~20 ms more) is imported only when used:
    # with its email parser it costs ~30 ms, a tenth of a first op, and read_entry_points usually does without.
    if name == "importlib_metadata":
        import importlib.metadata

        return importlib.metadata
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _env_list(name: str) -> set[str]:
    return {item.strip() for item in os.environ.get(name, "").split(",") if item.strip()}


class PluginManager:
    """Discovers plugins once (lazily), loads them in phases, and records every outcome."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(TorchplugHookSpecs)
        self.records: dict[str, PluginRecord] = {}
        self._lock = threading.RLock()
        self._ready = False  # the backends and the eager plugins are loaded (ensure_ready)
        self._loaded = False  # every plugin is loaded (ensure_loaded)
        self._loading = False  # ensure_ready or ensure_loaded is running
        self._deferred: dict[str, PluginRecord] = {}  # ON_DEMAND plugins discovered and not loaded yet
        self._pending_kernels: dict[str, Any] = {}  # LAZY_KERNELS plugin -> its deferred kernel registration

    # -- discovery --------------------------------------------------------------------------------
    def discover(self) -> list[PluginRecord]:
        """Read the entry points of both groups (without importing anything).

        One scan of the installed distributions serves both groups, and each distribution's metadata is
        parsed once (``dist.metadata`` re-reads the file on every access)."""
        read = read_entry_points(ENTRY_POINT_GROUPS)
        if read is not None:
            return [PluginRecord(name=name, group=group, value=value, distribution=dist, version=version)
                    for wanted in ENTRY_POINT_GROUPS for group, name, value, dist, version in read if group == wanted]
        import importlib.metadata as importlib_metadata

        found = []
        metadata: dict[int, tuple[str, str]] = {}
        points = importlib_metadata.entry_points()
        for group in ENTRY_POINT_GROUPS:
            for ep in points.select(group=group):
                dist = getattr(ep, "dist", None)
                if dist is None:
                    name, version = "", ""
                else:
                    known = metadata.get(id(dist))
                    if known is None:
                        meta = dist.metadata
                        known = metadata[id(dist)] = (meta["Name"], meta["Version"])
                    name, version = known
                found.append(PluginRecord(name=ep.name, group=group, value=ep.value, distribution=name, version=version))
        return found

    def ensure_ready(self) -> None:
        """Load the backends and every plugin that is not in :data:`ON_DEMAND`, once: what running an op needs.
        Never raises because of a plugin.  The ON_DEMAND plugins are discovered (and blocked where the block
        list says so) but load on their trigger (:meth:`ensure_plugin`) or with :meth:`ensure_loaded`.

        Thread-safe: a thread that arrives while another one loads waits for it (the lock is held
        for the whole load), so no thread ever runs with half the backends.  Re-entrant: a plugin
        that uses torchplug while being loaded sees what is registered so far instead of deadlocking.
        """
        if self._ready:  # the hot path: one attribute load, no lock
            return
        with self._lock:
            if self._ready or self._loading:  # done meanwhile, or re-entered by the loading thread
                return
            self._loading = True
            try:
                records = self._discover_once()
                self._load_records(records, self._import_records(records))
            finally:
                self._ready = True
                self._loading = False

    def ensure_plugin(self, name: str) -> None:
        """Load the ON_DEMAND plugin ``name`` now if it was deferred (after the backends); otherwise nothing.
        Never raises because of a plugin: a failure is recorded as for any plugin."""
        if self._loaded:
            return
        self.ensure_ready()
        with self._lock:
            record = self._deferred.pop(name, None)
            if record is not None:
                self._load_records([record], self._import_records([record]))

    def ensure_loaded(self) -> None:
        """Discover and load every entry-point plugin, once.  Never raises because of a plugin.

        Thread-safety and re-entrancy as :meth:`ensure_ready`.  The deferred plugins load together, their
        hooks in phases across all of them, as the eager ones do.
        """
        if self._loaded:  # the hot path: one attribute load, no lock
            return
        self.ensure_ready()
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                deferred = list(self._deferred.values())
                self._deferred.clear()
                self._load_records(deferred, self._import_records(deferred))
                for load in list(self._pending_kernels.values()):
                    load()
            finally:
                self._loaded = True
                self._loading = False

    def _discover_once(self) -> list[PluginRecord]:
        """Record every plugin (the blocked ones as such) and return those to load now; the ON_DEMAND ones wait
        in ``_deferred``.  Runs once per process, in :meth:`ensure_ready`."""
        if os.environ.get("TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD", "") in ("1", "true", "True"):
            log.debug("plugin autoload disabled by TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD")
            return []
        blocked = _env_list("TORCHPLUG_BLOCK_PLUGINS")
        records = []
        for record in self.discover():
            if record.name in self.records:
                continue
            self.records[record.name] = record
            if record.name in blocked or record.distribution in blocked:
                record.status = "blocked"
                record.reason = "blocked by TORCHPLUG_BLOCK_PLUGINS"
                continue
            if ON_DEMAND.get(record.name) == record.value.partition(":")[0].partition(".")[0]:
                self._deferred[record.name] = record
                continue
            records.append(record)
        return records

    def _import_records(self, records: Iterable[PluginRecord]) -> dict[str, Any]:
        objs = {}
        for record in records:
            try:
                module_name, _, attr = record.value.partition(":")
                obj: Any = __import__(module_name, fromlist=["_"])
                for part in filter(None, attr.split(".")):
                    obj = getattr(obj, part)
                objs[record.name] = obj
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - SystemExit included: a plugin must never end the process
                self._fail(record, exc, "failed to import")
        return objs

    def _load_records(self, records: list[PluginRecord], objs: dict[str, Any]) -> None:
        live = []
        for record in records:
            obj = objs.get(record.name)
            if obj is None:
                continue
            try:
                self.pm.register(obj, name=record.name)
                live.append(record)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001
                self._fail(record, exc, "failed to register with pluggy")
        contexts = {r.name: PluginContext(self, r) for r in live}
        # Phases run across all plugins so every backend exists before any kernel registers.
        for phase in _PHASES:
            for record in live:
                if record.status == "failed":
                    continue
                for impl in getattr(self.pm.hook, phase).get_hookimpls():
                    if impl.plugin_name != record.name:
                        continue
                    if phase == "torchplug_register_kernels" and self._defer_kernels(record, impl.function, contexts[record.name]):
                        continue
                    try:
                        impl.function(ctx=contexts[record.name])
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:  # noqa: BLE001 - SystemExit too: recorded, never fatal
                        self._fail(record, exc, f"failed in {phase}")
                        self._undo(record)
        for record in live:
            if record.status != "failed":
                record.status = "loaded"
                log.debug("loaded %s", record.label)

    def _defer_kernels(self, record: PluginRecord, hook: Any, ctx: PluginContext) -> bool:
        """For a LAZY_KERNELS backend: leave its kernel hook to the first dispatch that reaches one of its devices."""
        if LAZY_KERNELS.get(record.name) != record.value.partition(":")[0].partition(".")[0] or not record.device_types:
            return False
        bits = [_backends.registered_backends()[t].keyset & BACKEND_BAND for t in record.device_types]

        def load() -> None:
            with self._lock:
                if self._pending_kernels.pop(record.name, None) is None:
                    return  # loaded meanwhile, or the plugin was unloaded
                for bit in bits:
                    DISPATCHER.pending_kernels.pop(bit, None)
                try:
                    hook(ctx=ctx)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:  # noqa: BLE001 - recorded, never fatal, as at loading
                    self._fail(record, exc, "failed in torchplug_register_kernels")
                    self._undo(record)

        self._pending_kernels[record.name] = load
        for bit in bits:
            DISPATCHER.pending_kernels[bit] = load
        return True

    def _fail(self, record: PluginRecord, exc: BaseException, what: str) -> None:
        record.status = "failed"
        record.error = exc
        record.reason = f"{what}: {type(exc).__name__}: {exc}"
        record.traceback = "".join(traceback.format_exception(exc))
        log.info("%s %s", record.label, record.reason)

    def _undo(self, record: PluginRecord) -> None:
        load = self._pending_kernels.pop(record.name, None)
        if load is not None:  # kernels never registered: nothing to undo but the pending registration
            for bit in [b for b, f in DISPATCHER.pending_kernels.items() if f is load]:
                del DISPATCHER.pending_kernels[bit]
        _exposure.unexpose_plugin(record.name)
        if any(c.plugin == record.name for c in AUTOCAST_POLICIES):
            AUTOCAST_POLICIES[:] = [c for c in AUTOCAST_POLICIES if c.plugin != record.name]
            _autocast_policies_changed()
        for lib in reversed(record.libraries):
            lib.close()
        record.libraries.clear()
        for device_type in record.device_types:
            _registration.unregister_backend(device_type)
        record.device_types.clear()
        if self.pm.is_registered(self.pm.get_plugin(record.name)):
            self.pm.unregister(name=record.name)

    # -- explicit registration (tests, notebooks, autoload disabled) ------------------------------
    def load_plugin(self, obj: ModuleType | Any, name: str, *, group: str = "torchplug.plugins", distribution: str = "") -> PluginRecord:
        """Register and load a plugin object directly; returns its record (check ``status``)."""
        with self._lock:
            existing = self.records.get(name)
            if existing is not None and existing.status == "loaded":
                raise RuntimeError(f"A plugin named {name!r} is already loaded ({existing.label}). Unload it first.")
            record = PluginRecord(name=name, group=group, value=getattr(obj, "__name__", repr(obj)), distribution=distribution)
            self.records[name] = record
            self._deferred.pop(name, None)  # loaded by hand: no longer waiting for its trigger
            self._load_records([record], {name: obj})
            return record

    def unload_plugin(self, name: str) -> None:
        """Undo everything a plugin registered and forget it."""
        with self._lock:
            record = self.records.pop(name, None)
            self._deferred.pop(name, None)
            if record is not None:
                self._undo(record)

    # -- reporting --------------------------------------------------------------------------------
    def report(self) -> list[PluginRecord]:
        self.ensure_loaded()
        return sorted(self.records.values(), key=lambda r: (r.group, r.name))

    def reason_for_device(self, device_type: str) -> str:
        """Explain a missing device type from the plugin records ('' if nothing is known)."""
        candidates = [r for r in self.records.values() if device_type in r.declared_device_types]
        named = self.records.get(device_type)
        if named is not None and named not in candidates:
            candidates.append(named)
        for record in candidates:
            if record.status == "blocked":
                return f"The {record.label} provides it but is {record.reason}."
            if record.status == "failed":
                return f"The {record.label} provides it but {record.reason}."
        return ""


MANAGER = PluginManager()


def _load_on_unknown_device(device_type: str) -> _backends.Backend | None:
    MANAGER.ensure_ready()
    return _backends.registered_backends().get(device_type)


def _missing_kernel_context() -> str:
    installed = ", ".join(sorted(_backends.registered_backends())) or "none"
    text = f"Installed backends: {installed}."
    broken = [r for r in MANAGER.records.values() if r.status in ("failed", "blocked") and r.group == "torchplug.backends"]
    if broken:
        text += " " + " ".join(f"The {r.label} is {r.status} ({r.reason})." for r in broken)
    return text


_backends.unknown_device_hook.append(_load_on_unknown_device)
DISPATCHER.missing_kernel_context = _missing_kernel_context
_backends.missing_device_reason.append(MANAGER.reason_for_device)
