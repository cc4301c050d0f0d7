"""The amp plugin's hooks: activate the policy registry and expose ``torchplug.amp`` / ``torchplug.autocast``."""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_configure", "TOP_LEVEL"]

# torchplug.<name> for these, as torch.<name> in PyTorch.
TOP_LEVEL = (
    "autocast",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
)


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    from .registry import REGISTRY

    amp = sys.modules["torchplug_amp"]
    REGISTRY.activate(ctx)
    ctx.expose("amp", amp)
    for name in TOP_LEVEL:
        ctx.expose(name, getattr(amp, name))
    from .legacy_toplevel import FUNCTIONS as legacy_functions

    for name, fn in legacy_functions.items():  # torch.is_autocast_cpu_enabled() and the other deprecated switches
        ctx.expose(name, fn)
    ctx.expose("GradScaler", amp.GradScaler)  # torch.GradScaler is torch.amp.GradScaler
    # ``import torchplug.amp.grad_scaler`` must give the loaded submodule, not a second copy that
    # the path finder would build from torchplug_amp's __path__ (with its own, empty registry).
    for name, module in list(sys.modules.items()):
        if name.startswith("torchplug_amp."):
            sys.modules.setdefault("torchplug.amp." + name.removeprefix("torchplug_amp."), module)
