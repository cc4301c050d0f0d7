"""cpu kernel tables: every module here defines ``TABLE``; importing them registers nothing."""

from __future__ import annotations

from torchplug.library import KernelTable, collect_tables

__all__ = ["all_tables"]


def all_tables() -> list[KernelTable]:
    """The ``TABLE`` of every kernel module in this package (the plugin hook registers them)."""
    return collect_tables(__name__)
