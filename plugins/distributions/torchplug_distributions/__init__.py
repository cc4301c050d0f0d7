"""torchplug-distributions: the ``distributions`` core-layer plugin (``torchplug.distributions``).  Hooks only.

The public package is :mod:`torchplug_distributions.distributions`: probability distributions with PyTorch's
``torch.distributions`` interface, written over torchplug's public tensor API.
"""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_configure"]


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    # a stand-in that imports the real package on first use (see _lazy); ``import torchplug.distributions.x``
    # resolves through the exposure finder to the real package's already-imported submodule
    from . import _lazy

    ctx.expose("distributions", _lazy)
