"""Instantiate the cpu backend's kernel modules for another array namespace (no copy of the code).

The cpu kernels (``torchplug_cpu.kernels.*``) are written against two module-level names: ``np``
(``import numpy as np``) and ``C`` (``from .. import _common as C``), the helpers that stamp the
device, key set and allocator statistics on results.  :class:`KernelFamily` runs the *compiled
code objects* of those modules again, in fresh module objects, with:

- imports of ``numpy`` (and ``numpy.lib.stride_tricks``, ``scipy``, ``scipy.special``, ``scipy.fft``) answered
  from a mapping given by the caller, through a per-family ``__import__`` in the modules'
  ``__builtins__``, so ``import numpy as np`` binds the family's array namespace (CuPy-backed
  on a GPU, NumPy itself in emulation) and function-level imports see it too;
- relative imports resolved inside the family: ``from .. import _common`` gets the family's own
  instance of ``torchplug_cpu._common`` (the same code, with its ``CPU``/``KEYSET``/``STATS``
  bound to the cuda device), ``from .core import fresh`` the family's ``core``;
- ``overrides``: functions replaced right after a module runs, before any sibling imports it,
  for the few places where device arrays differ from NumPy's (raw addresses, the
  ``ndarray(shape, dtype, buffer, offset, strides)`` constructor).  They are the documented
  list of where semantics are *not* identical.

The cpu modules themselves are never modified or re-imported, so cpu hot paths are untouched.
Instantiated modules live only in their family (not in ``sys.modules``); each family is
independent, so an emulated and a CuPy family can coexist in one process.
"""

from __future__ import annotations

import builtins
import importlib.util
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KernelFamily", "CPU_KERNELS", "CPU_COMMON"]

CPU_KERNELS = "torchplug_cpu.kernels"
CPU_COMMON = "torchplug_cpu._common"


class KernelFamily:
    """The cpu kernel modules re-executed against ``namespaces`` (see the module docstring).

    Args:
        name: a label for the family, used in the modules' names (``<cuda:cupy>.core``).
        namespaces: absolute module names to replace (``{"numpy": xp}``); exact names only, so
            ``numpy._core...`` imports (NumPy internals the helpers use) still get NumPy.
        overrides: ``{"core": {"fresh": fn}, "_common": {...}}``, applied after each module runs;
            a value may be a callable ``(module) -> dict`` to build replacements from the module.
        common_hook: called with the family's ``_common`` module once it exists (to bind state).
    """

    def __init__(self, name: str, namespaces: Mapping[str, Any],
                 overrides: Mapping[str, Mapping[str, Any] | Callable[[types.ModuleType], Mapping[str, Any]]] | None = None,
                 common_hook: Callable[[types.ModuleType], None] | None = None) -> None:
        self.name = name
        self.namespaces = dict(namespaces)
        self.overrides = dict(overrides or {})
        self.common_hook = common_hook
        self.modules: dict[str, types.ModuleType] = {}
        self._lock = threading.RLock()
        self._pkg = f"<{name}>"
        self._builtins = dict(vars(builtins), __import__=self._import)

    # -- public -----------------------------------------------------------------------------------
    def common(self) -> types.ModuleType:
        """The family's instance of ``torchplug_cpu._common``."""
        return self._module("_common", CPU_COMMON)

    def kernels(self, short: str) -> types.ModuleType:
        """The family's instance of ``torchplug_cpu.kernels.<short>``."""
        return self._module(short, f"{CPU_KERNELS}.{short}")

    def all_kernel_modules(self) -> list[types.ModuleType]:
        """Every cpu kernel module, instantiated, in name order (like ``collect_tables``)."""
        import pkgutil

        pkg = importlib.import_module(CPU_KERNELS)
        return [self.kernels(info.name) for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)]

    # -- instantiation ------------------------------------------------------------------------------
    def _module(self, short: str, source: str) -> types.ModuleType:
        found = self.modules.get(short)
        if found is not None:
            return found
        with self._lock:
            found = self.modules.get(short)
            if found is not None:
                return found
            spec = importlib.util.find_spec(source)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot instantiate {source!r} for {self.name}: module not found")
            code = spec.loader.get_code(source)  # type: ignore[attr-defined]
            mod = types.ModuleType(f"{self._pkg}.{short}", f"{source} instantiated for {self.name}")
            mod.__dict__.update({
                "__builtins__": self._builtins,
                # Relative imports resolve against this package name; _import maps them back here.
                "__package__": f"{self._pkg}.kernels" if short != "_common" else self._pkg,
                "__file__": spec.origin,
                "__spec__": None,
                "__loader__": None,
                "__torchplug_source__": source,
            })
            # Registered before running, so import cycles inside the family resolve like Python's.
            self.modules[short] = mod
            try:
                exec(code, mod.__dict__)  # noqa: S102 - the cpu backend's own compiled code
                self._apply_overrides(short, mod)
                if short == "_common" and self.common_hook is not None:
                    self.common_hook(mod)
            except BaseException:
                self.modules.pop(short, None)
                raise
            return mod

    def _apply_overrides(self, short: str, mod: types.ModuleType) -> None:
        spec = self.overrides.get(short)
        if spec is None:
            return
        replacements = spec(mod) if callable(spec) else spec
        for attr, value in replacements.items():
            if not hasattr(mod, attr):
                # An override of a name the cpu module no longer has is a stale override: say so.
                raise AttributeError(f"{self.name}: override {short}.{attr} names nothing in {mod.__torchplug_source__}")
            setattr(mod, attr, value)

    def _import(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0:
            if fromlist and name == CPU_COMMON:  # ``from torchplug_cpu._common import ...``: still the family's
                return self.common()
            if fromlist and name.startswith(CPU_KERNELS + "."):
                return self.kernels(name[len(CPU_KERNELS) + 1:])
            ns = self.namespaces.get(name)
            if ns is not None:
                if fromlist or "." not in name:
                    return ns
                # ``import numpy.lib.stride_tricks`` binds the top-level name.
                return self.namespaces.get(name.split(".", 1)[0], ns)
            return builtins.__import__(name, globals, locals, fromlist, level)
        package = (globals or {}).get("__package__", "")
        if not package.startswith(self._pkg):
            return builtins.__import__(name, globals, locals, fromlist, level)
        # Inside the family: ``<pkg>.kernels`` is the kernels package, ``<pkg>`` the backend package.
        parts = package.split(".")
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        base = ".".join(parts)
        target = f"{base}.{name}" if name else base
        if target == self._pkg or target == f"{self._pkg}.kernels":
            # ``from .. import _common`` / ``from . import core``: a package-like view of the family.
            return _FamilyPackage(self, target == f"{self._pkg}.kernels")
        rel = target[len(self._pkg) + 1:]
        if rel == "_common":
            return self.common()
        if rel.startswith("kernels."):
            return self.kernels(rel.split(".", 1)[1])
        raise ImportError(f"{self.name}: relative import of {target!r} is outside the cpu kernels")


class _FamilyPackage:
    """What ``from .. import _common`` sees: attribute access instantiates family modules."""

    def __init__(self, family: KernelFamily, kernels: bool) -> None:
        self._family = family
        self._kernels = kernels

    def __getattr__(self, attr: str) -> Any:
        if self._kernels:
            return self._family.kernels(attr)
        if attr == "_common":
            return self._family.common()
        if attr == "kernels":
            return _FamilyPackage(self._family, True)
        raise AttributeError(f"{self._family.name}: the cpu backend package has no shared module {attr!r}")
