"""torchplug-nn: the ``nn`` core-layer plugin (torchplug.nn, optim, utils.data, save/load).  Hooks only."""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_configure"]


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    from . import nn, optim, serialization
    from .nn import _aten_losses, _aten_spatial
    from .utils import data

    ctx.expose("nn", nn)
    ctx.expose("optim", optim)
    ctx.expose("save", serialization.save)
    ctx.expose("load", serialization.load)
    ctx.expose("serialization", serialization)
    ctx.expose("utils.data", data)  # re-exported by core/torchplug/utils/data.py
    for module in (_aten_losses, _aten_spatial):  # torch.cosine_embedding_loss, torch.grid_sampler & co.
        for name in module.__all__:
            ctx.expose(name, getattr(module, name))
    _alias_submodules("torchplug_nn.nn", "torchplug.nn")
    _alias_submodules("torchplug_nn.optim", "torchplug.optim")


def _alias_submodules(real: str, public: str) -> None:
    """Make ``import torchplug.optim.lr_scheduler`` (etc.) give the already-imported canonical module.

    The exposure finder runs after Python's path finder, which would otherwise load a second copy of
    a submodule from the plugin package's ``__path__`` under the public name.
    """
    for name, module in list(sys.modules.items()):
        if name.startswith(real + "."):
            sys.modules.setdefault(public + name[len(real):], module)
