"""Hook specifications every torchplug plugin may implement (pluggy, project name ``torchplug``).

A plugin is a module (or object) listed under the entry-point group ``torchplug.backends`` or
``torchplug.plugins``.  Its hooks receive a :class:`torchplug.plugins.PluginContext` that knows
which plugin is registering, so every backend, kernel and fallback is attributed to it in
``python -m torchplug`` and in ``explain()``.  Hooks are called once, at load time, never per op.
"""

from __future__ import annotations

from typing import Any

import pluggy

__all__ = ["hookspec", "hookimpl", "PROJECT_NAME", "TorchplugHookSpecs"]

PROJECT_NAME = "torchplug"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


class TorchplugHookSpecs:
    """The hooks, in the order the manager calls them for each plugin."""

    @hookspec
    def torchplug_register_backends(self, ctx: Any) -> None:
        """Register device types: ``ctx.register_backend(Backend(...))``."""

    @hookspec
    def torchplug_register_ops(self, ctx: Any) -> None:
        """Define operators: ``ctx.library('myns', 'DEF').define(...)``."""

    @hookspec
    def torchplug_register_kernels(self, ctx: Any) -> None:
        """Register kernels and fallbacks: ``ctx.register_kernels(table)`` or ``ctx.library(...)``."""

    @hookspec
    def torchplug_register_autocast_policy(self, ctx: Any) -> None:
        """Contribute autocast policies as data: ``ctx.register_autocast_policy("cpu", policy)``.

        A policy names the device's default and supported lower-precision dtypes and the ops
        on each cast list (lower-precision, fp32, fp32-with-dtype, promote, banned); see
        ``torchplug.amp.AutocastPolicy``.  Called after every plugin registered its kernels."""

    @hookspec
    def torchplug_configure(self, ctx: Any) -> None:
        """Last step: anything that needs every backend and kernel in place (e.g. autograd wiring)."""
