"""torchplug-meta: the ``meta`` device (shapes, dtypes and strides, no data).

This module holds only the plugin hooks.
"""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_backends", "torchplug_register_kernels"]


@hookimpl
def torchplug_register_backends(ctx: Any) -> None:
    from ._backend import make_backend

    backend = ctx.register_backend(make_backend())
    ctx.expose(backend.device_type, backend.device_module)  # torchplug.meta


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from .kernels import all_tables

    ctx.register_kernels(*all_tables())
