"""meta kernel tables: every module here defines ``TABLE``; importing them registers nothing."""

from __future__ import annotations

import importlib
import pkgutil

from torchplug.library import KernelTable

__all__ = ["all_tables"]


def all_tables() -> list[KernelTable]:
    """The ``TABLE`` of every kernel module in this package (the plugin hook registers them)."""
    tables = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        table = getattr(module, "TABLE", None)
        if isinstance(table, KernelTable):
            tables.append(table)
    return tables
