"""Hook specifications every torchplug plugin may implement (pluggy, project name ``torchplug``).

The specifications live with the plugin manager (:mod:`torchplug._plugins.hookspecs`); plugins import
``hookimpl`` from here.
"""

from __future__ import annotations

from torchplug._plugins.hookspecs import PROJECT_NAME, TorchplugHookSpecs, hookimpl, hookspec

__all__ = ["hookspec", "hookimpl", "PROJECT_NAME", "TorchplugHookSpecs"]
