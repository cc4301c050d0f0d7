"""torchplug-distributed: the ``distributed`` core-layer plugin (``torchplug.distributed``).  Hooks only.

Also provides ``torchplug.nn.parallel.DistributedDataParallel`` and the process-group side of
``torchplug.utils.data.distributed.DistributedSampler``: the nn plugin reaches both through the public
``torchplug.distributed`` namespace, so neither plugin imports the other.
"""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_configure"]


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    from . import _finder, distributed

    ctx.expose("distributed", distributed)
    for name, module in list(sys.modules.items()):  # the submodules already loaded, under their public names
        if name.startswith("torchplug_distributed.distributed."):
            sys.modules.setdefault("torchplug.distributed." + name.removeprefix("torchplug_distributed.distributed."),
                                   module)
    _finder.install()
