"""Plugin manager internals (see :mod:`torchplug.plugins` for the public face)."""

from __future__ import annotations

from .manager import ENTRY_POINT_GROUPS, MANAGER, PluginContext, PluginManager, PluginRecord

__all__ = ["ENTRY_POINT_GROUPS", "MANAGER", "PluginContext", "PluginManager", "PluginRecord", "ensure_loaded"]


def ensure_loaded() -> None:
    """Discover and load entry-point plugins (once)."""
    MANAGER.ensure_loaded()
