"""``torchplug.plugins``: what is installed, what loaded, and explicit registration.

Environment controls, read before any plugin is imported:

- ``TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry-point plugins (register them with
  :func:`load_plugin` instead).
- ``TORCHPLUG_BLOCK_PLUGINS=a,b``: never import the named plugins (entry-point or distribution names).
"""

from __future__ import annotations

from typing import Any

from torchplug._plugins.manager import ENTRY_POINT_GROUPS, MANAGER, PluginContext, PluginRecord

__all__ = ["PluginContext", "PluginRecord", "ENTRY_POINT_GROUPS", "report", "load_plugin", "unload_plugin", "get_plugin"]


def report() -> list[PluginRecord]:
    """Every discovered plugin with its status: loaded, blocked, disabled or failed (with reason)."""
    return MANAGER.report()


def get_plugin(name: str) -> PluginRecord | None:
    """The record of one plugin, or None."""
    MANAGER.ensure_loaded()
    return MANAGER.records.get(name)


def load_plugin(obj: Any, name: str, *, group: str = "torchplug.plugins", distribution: str = "") -> PluginRecord:
    """Register a plugin object (module or instance with hookimpls) by hand and run its hooks."""
    MANAGER.ensure_loaded()
    return MANAGER.load_plugin(obj, name, group=group, distribution=distribution)


def unload_plugin(name: str) -> None:
    """Undo every registration of a plugin."""
    MANAGER.unload_plugin(name)
