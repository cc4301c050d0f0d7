"""torchplug-cpu: the NumPy backend.  This module holds only the plugin hooks."""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_backends", "torchplug_register_kernels", "torchplug_register_autocast_policy"]


@hookimpl
def torchplug_register_backends(ctx: Any) -> None:
    from ._backend import make_backend

    backend = ctx.register_backend(make_backend())
    ctx.expose(backend.device_type, backend.device_module)  # torchplug.cpu


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from .kernels import all_tables

    ctx.register_kernels(*all_tables())


@hookimpl
def torchplug_register_autocast_policy(ctx: Any) -> None:
    from .autocast_policy import POLICY

    ctx.register_autocast_policy("cpu", POLICY)
