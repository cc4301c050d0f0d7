"""Hand-written Python bindings, one module per op area.

Each module may define:

- ``HANDWRITTEN``: op base names whose function/method must not be generated from the schema;
- ``FUNCTIONS``: ``name -> callable`` published as ``torchplug.<name>``;
- ``METHODS``: ``name -> callable or property`` set on ``torchplug.Tensor``.

``torchplug._ops.bindings.install_bindings`` collects every module here at import.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["area_modules"]


def area_modules() -> list[ModuleType]:
    """Every binding module in this package, in name order."""
    return [importlib.import_module(f"{__name__}.{m.name}") for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)]
