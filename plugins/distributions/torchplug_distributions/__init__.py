"""torchplug-distributions: the ``distributions`` core-layer plugin (``torchplug.distributions``).  Hooks only.

The public package is :mod:`torchplug_distributions.distributions`, PyTorch's ``torch.distributions``
(ported from PyTorch 2.13, BSD-3-Clause) written over torchplug's public tensor API.
"""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_configure"]


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    from . import distributions

    ctx.expose("distributions", distributions)
    # ``import torchplug.distributions.constraints`` gives the already-imported module, not a second copy
    real, public = distributions.__name__, "torchplug.distributions"
    for name, module in list(sys.modules.items()):
        if name.startswith(real + "."):
            sys.modules.setdefault(public + name[len(real):], module)
