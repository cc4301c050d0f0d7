"""torchplug-mps: the ``mps`` device type (a stub; NumPy emulation with ``TORCHPLUG_MPS_EMULATE=1``).

This module holds only the plugin hooks.  Registering never touches Metal, and availability is
read from the environment, so plugin discovery and ``torchplug.accelerator.current_accelerator()``
stay fork-safe.
"""

from __future__ import annotations

import importlib
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = [
    "torchplug_register_backends", "torchplug_register_kernels", "torchplug_register_autocast_policy",
    "AUTOCAST_POLICY_MODULE",
]

# Where the mps autocast policy data lives (a module defining ``POLICY``); the amp work provides it.
AUTOCAST_POLICY_MODULE = f"{__name__}.autocast_policy"


@hookimpl
def torchplug_register_backends(ctx: Any) -> None:
    from ._backend import make_backend
    from .device_module import build

    backend = ctx.register_backend(make_backend())
    ctx.expose(backend.device_type, build(backend))  # torchplug.mps: the surface plus torch.mps's own names


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from ._emulation import emulated_tables

    ctx.register_kernels(*emulated_tables())


@hookimpl
def torchplug_register_autocast_policy(ctx: Any) -> None:
    try:
        module = importlib.import_module(AUTOCAST_POLICY_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != AUTOCAST_POLICY_MODULE:
            raise
        return  # no policy data yet: autocast on mps falls through
    register = getattr(ctx, "register_autocast_policy", None)
    if register is not None and getattr(module, "POLICY", None) is not None:
        register("mps", module.POLICY)
