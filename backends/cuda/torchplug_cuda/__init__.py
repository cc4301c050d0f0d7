"""torchplug-cuda: the ``cuda`` device type on CuPy (NumPy emulation with ``TORCHPLUG_CUDA_EMULATE=1``).

This module holds only the plugin hooks.  Registering never imports CuPy or touches a GPU, so
plugin discovery and ``import torchplug`` stay fast and fork-safe; CuPy is imported the first
time the device is used or asked about (``is_available()``, which choosing the current
accelerator asks, as ``torch.cuda.is_available()`` counts devices).
"""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_backends", "torchplug_register_kernels", "torchplug_register_autocast_policy"]


@hookimpl
def torchplug_register_backends(ctx: Any) -> None:
    from ._backend import make_backend
    from .device_module import build

    backend = ctx.register_backend(make_backend())
    ctx.expose(backend.device_type, build(backend))  # torchplug.cuda: the surface plus torch.cuda's own names


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from ._kernels import cuda_tables

    ctx.register_kernels(*cuda_tables())


@hookimpl
def torchplug_register_autocast_policy(ctx: Any) -> None:
    from .autocast_policy import POLICY

    ctx.register_autocast_policy("cuda", POLICY)
