"""``torchplug.<name>`` provided by plugins: attribute access, ``import torchplug.<name>`` and clear errors.

A plugin calls ``ctx.expose("autograd", module)`` (or any object) from a hook; afterwards
``torchplug.autograd``, ``import torchplug.autograd`` and ``from torchplug.autograd.graph
import ...`` all resolve to the plugin's module and its submodules.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from .._backends import WELL_KNOWN_DEVICE_TYPES

__all__ = ["EXPOSED", "expose", "unexpose", "resolve", "install_finder", "PROVIDERS"]

# name -> (object, plugin name)
EXPOSED: dict[str, tuple[Any, str]] = {}
# Names the core-layer plugins provide, so a missing one can say which plugin to enable.
PROVIDERS = {
    "autograd": "autograd", "no_grad": "autograd", "enable_grad": "autograd", "set_grad_enabled": "autograd",
    "is_grad_enabled": "autograd", "inference_mode": "autograd", "is_inference_mode_enabled": "autograd",
    "nn": "nn", "optim": "nn", "save": "nn", "load": "nn", "amp": "amp", "autocast": "amp",
    "distributions": "distributions",
}


def expose(name: str, obj: Any, plugin: str) -> None:
    existing = EXPOSED.get(name)
    if existing is not None and existing[0] is not obj:
        raise RuntimeError(f"torchplug.{name} is already provided by plugin {existing[1]!r}; plugin {plugin!r} tried to provide it too.")
    EXPOSED[name] = (obj, plugin)
    if name in WELL_KNOWN_DEVICE_TYPES:  # a backend's device module replaces the placeholder
        from .._device_placeholder import attach_legacy_names, drop_cached

        drop_cached(name)
        if isinstance(obj, ModuleType):
            attach_legacy_names(obj, name)
    if isinstance(obj, ModuleType):
        from .._compat.missing import attach_loaded

        attach_loaded()  # after the legacy names: a missing name of the module says it is not supported yet


def unexpose_plugin(plugin: str) -> None:
    package = sys.modules.get("torchplug")
    for name in [n for n, (_, p) in EXPOSED.items() if p == plugin]:
        del EXPOSED[name]
        sys.modules.pop(f"torchplug.{name}", None)
        if package is not None:
            package.__dict__.pop(name, None)  # drop the cached attribute


def unexpose(name: str) -> None:
    EXPOSED.pop(name, None)


def resolve(name: str) -> Any:
    """The object behind ``torchplug.<name>``, loading plugins first; AttributeError explains a gap."""
    from .manager import MANAGER

    MANAGER.ensure_loaded()
    found = EXPOSED.get(name)
    if found is not None:
        return found[0]
    known = WELL_KNOWN_DEVICE_TYPES.get(name)
    if known is not None and known.module:
        return _device_module(name)
    plugin = PROVIDERS.get(name)
    if plugin is None:
        from .._compat.missing import missing_attribute

        raise missing_attribute("torch", name, "torchplug")  # "not supported yet" for a name PyTorch has
    record = MANAGER.records.get(plugin)
    state = "not installed" if record is None else (record.reason or record.status)
    raise AttributeError(
        f"torchplug.{name} is provided by the {plugin!r} plugin, which is {state}. It ships with torchplug: "
        "remove it from TORCHPLUG_BLOCK_PLUGINS, unset TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD, or load it with "
        f"torchplug.plugins.load_plugin(...). See `python -m torchplug`."
    )


def _device_module(device_type: str) -> ModuleType:
    """``torchplug.<well-known type>`` that no plugin exposed: the registered backend's device
    module, else the placeholder that explains how to get one."""
    from .._backends import registered_backends
    from .._compat.missing import attach_device_module
    from .._device_placeholder import attach_legacy_names, placeholder_module

    backend = registered_backends().get(device_type)
    if backend is not None and backend.device_module is not None:
        attach_legacy_names(backend.device_module, device_type)
        return attach_device_module(backend.device_module, device_type)
    return attach_device_module(placeholder_module(device_type), device_type)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        return None


class _ExposedFinder(importlib.abc.MetaPathFinder):
    """Makes ``import torchplug.<exposed>[.sub]`` find the plugin's module."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "torchplug" or parts[1].startswith("_"):
            return None
        package = sys.modules.get("torchplug")
        if package is None or importlib.machinery.PathFinder.find_spec(parts[1], package.__path__) is not None:
            return None  # a real core submodule
        try:
            target_obj = resolve(parts[1])
        except AttributeError:
            return None
        if not isinstance(target_obj, ModuleType):
            return None
        module: Any = target_obj
        for part in parts[2:]:  # submodules the exposed module holds as attributes (torchplug.cuda.amp)
            module = getattr(module, part, None)
            if not isinstance(module, ModuleType):
                break
        if not isinstance(module, ModuleType):
            if target_obj.__name__.partition(".")[0] == "torchplug":
                return None  # an alias module has no importable submodules behind it
            module = importlib.import_module(".".join([target_obj.__name__, *parts[2:]]))
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module))


_FINDER = _ExposedFinder()


def install_finder() -> None:
    # First in line: for ``torchplug.<exposed>.<sub>`` the ordinary path finder would otherwise
    # import a second copy of the plugin's submodule under the alias name.
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
