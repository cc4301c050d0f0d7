"""``import torchplug.distributed.<sub>`` and ``python -m torchplug.distributed.run`` for this plugin's modules.

The core's exposure finder aliases ``torchplug.distributed.<sub>`` to the loaded module, but its loader has
no code to give ``runpy``; this finder, ahead of it for ``torchplug.distributed.*`` only, returns a loader
that aliases the same module *and* hands ``runpy`` the module's code, so the launcher runs with ``-m``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any

__all__ = ["install"]

_PUBLIC = "torchplug.distributed."
_REAL = "torchplug_distributed.distributed."


class _Loader(importlib.abc.Loader):
    def __init__(self, real: str) -> None:
        self.real = real

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(self.real)

    def exec_module(self, module: Any) -> None:
        return None

    def get_code(self, fullname: str) -> Any:
        spec = importlib.util.find_spec(self.real)
        return spec.loader.get_code(self.real)

    def is_package(self, fullname: str) -> bool:
        spec = importlib.util.find_spec(self.real)
        return spec.submodule_search_locations is not None


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(_PUBLIC):
            return None
        real = _REAL + fullname[len(_PUBLIC):]
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Loader(real), is_package=found.submodule_search_locations
                                               is not None)


_FINDER = _Finder()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
