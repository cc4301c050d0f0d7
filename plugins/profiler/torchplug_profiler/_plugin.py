"""The profiler plugin's hooks: the boxed fallback at the ``Profiler`` key and ``torchplug.profiler``."""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_kernels", "torchplug_configure"]


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from ._recorder import profiler_fallback

    # Every op, custom ops included; reached only while a profile records (the key is in no tensor's set).
    ctx.library("aten", "IMPL").fallback(profiler_fallback, "Profiler", with_keyset=True)


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    import torchplug_profiler  # noqa: F401  (the public module)

    ctx.expose("profiler", sys.modules["torchplug_profiler"])
