"""``torchplug.distributions`` until first use: a stand-in module forwarding every attribute to the real
package, :mod:`torchplug_distributions.distributions`, which it imports on the first access.

Importing the real package defines some fifty classes and registers the KL table (about 80 ms); the
plugin is configured on a script's first tensor operation, so a script that never touches
distributions would pay that at start.  This module is what the plugin exposes instead.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = []  # replaced by the real package's on first access (see __getattr__)

_REAL = "torchplug_distributions.distributions"


def _real() -> Any:
    return importlib.import_module(_REAL)


def __getattr__(name: str) -> Any:
    """Any attribute this stand-in lacks (``Normal``, ``constraints``, ``__path__``...) is the real package's."""
    return getattr(_real(), name)


def __dir__() -> list[str]:
    return dir(_real())


del globals()["__all__"]  # so ``from torchplug.distributions import *`` asks __getattr__ for the real list
