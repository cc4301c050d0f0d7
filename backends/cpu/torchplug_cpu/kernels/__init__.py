"""cpu kernel tables; importing them registers nothing (the plugin hook does)."""

from __future__ import annotations

from torchplug.library import KernelTable

__all__ = ["all_tables"]


def all_tables() -> list[KernelTable]:
    from . import core

    return [core.TABLE]
