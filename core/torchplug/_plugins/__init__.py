"""Plugins: discovery through entry points, the pluggy hooks and the context they register through, the
registry of what plugins expose as ``torchplug.<name>`` and its lookup (with the device modules' legacy
names), and introspection (``explain``, ``result_type``).  :mod:`torchplug.plugins` is the public face.

May import: every layer below (``_base`` ... ``_ops``).
"""

from __future__ import annotations

from torchplug._plugins.manager import ENTRY_POINT_GROUPS, MANAGER, PluginContext, PluginManager, PluginRecord

__all__ = ["ENTRY_POINT_GROUPS", "MANAGER", "PluginContext", "PluginManager", "PluginRecord", "ensure_loaded"]


def ensure_loaded() -> None:
    """Discover and load entry-point plugins (once)."""
    MANAGER.ensure_loaded()
