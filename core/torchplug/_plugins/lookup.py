"""``torchplug.<name>`` for what the core itself does not define: plugins' exposed objects, the device modules
(a backend's, else a placeholder) with PyTorch's legacy names, ``import torchplug.<exposed>[.sub]``, and clear
errors for the rest.

The top of the plugin layer: it loads plugins on demand (the manager) and reads the registry (exposure).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

from torchplug._plugins.exposure import EXPOSED, PROVIDERS, SEPARATE_DISTRIBUTIONS
from torchplug._plugins.manager import MANAGER
from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, repository_root
from torchplug._tensor.legacy_types import TENSOR_TYPE_NAMES, tensor_type

__all__ = ["resolve", "install_finder", "attach_legacy_names", "after_expose"]


def resolve(name: str) -> Any:
    """The object behind ``torchplug.<name>``, loading plugins first; AttributeError explains a gap.

    Loads no more than the name needs: the backends (a device module), else the core-layer plugin that
    provides the name (``PROVIDERS``), else every plugin (any of them may expose it)."""
    MANAGER.ensure_ready()
    found = EXPOSED.get(name)
    if found is None and name in PROVIDERS:
        MANAGER.ensure_plugin(PROVIDERS[name])
        found = EXPOSED.get(name)
    if found is not None:
        return found[0]
    known = WELL_KNOWN_DEVICE_TYPES.get(name)
    if known is not None and known.module:
        return _device_module(name)
    MANAGER.ensure_loaded()
    found = EXPOSED.get(name)
    if found is not None:
        return found[0]
    plugin = PROVIDERS.get(name)
    if plugin is None:
        from torchplug._compat.missing import missing_attribute

        raise missing_attribute("torch", name, "torchplug")  # "not supported yet" for a name PyTorch has
    record = MANAGER.records.get(plugin)
    folder = SEPARATE_DISTRIBUTIONS.get(plugin)
    if record is None and folder is not None:  # its own distribution, not installed
        root = repository_root()
        where = str(root / folder) if root is not None and (root / folder / "pyproject.toml").is_file() else folder
        raise AttributeError(
            f"torchplug.{name} is provided by the {plugin!r} plugin, which is not installed. It is a distribution "
            f"of its own in the torchplug repository: pip install -e {where}"
            + ("" if root is not None else " (from a checkout of the torchplug repository)") + ". See `python -m torchplug`."
        )
    state = "not installed" if record is None else (record.reason or record.status)
    raise AttributeError(
        f"torchplug.{name} is provided by the {plugin!r} plugin, which is {state}. It ships with torchplug: "
        "remove it from TORCHPLUG_BLOCK_PLUGINS, unset TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD, or load it with "
        f"torchplug.plugins.load_plugin(...). See `python -m torchplug`."
    )


def _device_module(device_type: str) -> ModuleType:
    """``torchplug.<well-known type>`` that no plugin exposed: the registered backend's device
    module, else the placeholder that explains how to get one."""
    from torchplug._runtime.backends import registered_backends
    from torchplug._compat.missing import attach_device_module
    from torchplug._runtime.device_placeholder import placeholder_module

    backend = registered_backends().get(device_type)
    if backend is not None and backend.device_module is not None:
        attach_legacy_names(backend.device_module, device_type)
        return attach_device_module(backend.device_module, device_type)
    placeholder = placeholder_module(device_type)
    attach_legacy_names(placeholder, device_type)
    return attach_device_module(placeholder, device_type)


class _AliasLoader:  # a Loader (not importlib.abc's: importing that module costs tempfile, shutil, lzma...)
    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        return None


class _ExposedFinder:  # a MetaPathFinder (duck-typed, as the import system needs)
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


_LEGACY_CACHE: dict[tuple[str, str], Any] = {}


def attach_legacy_names(module: ModuleType, device_type: str) -> None:
    """Give a well-known device module PyTorch's legacy attributes (``amp``, ``FloatTensor``...),
    resolved on first use; other names still raise AttributeError."""
    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    if known is None or not (known.amp or known.tensor_types) or "__getattr__" in vars(module):
        return

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # the import system probes __path__, __file__...
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
        key = (device_type, attr)
        found = _LEGACY_CACHE.get(key)
        if found is not None:
            return found
        if attr == "amp" and known.amp:
            return resolve("amp").device_amp_module(device_type)  # the amp plugin owns these aliases
        if known.tensor_types:
            if attr in TENSOR_TYPE_NAMES:
                return _LEGACY_CACHE.setdefault(key, tensor_type(attr, device_type))
        raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    if not hasattr(module, "__path__"):
        # A package path (empty) lets ``import torchplug.cuda.amp`` reach the alias finder, which
        # resolves submodules through these attributes.
        module.__path__ = []  # type: ignore[attr-defined]


def after_expose(name: str, obj: Any) -> None:
    """A backend's device module exposed as ``torchplug.<type>`` gets PyTorch's legacy names too."""
    if name in WELL_KNOWN_DEVICE_TYPES and isinstance(obj, ModuleType):
        attach_legacy_names(obj, name)
