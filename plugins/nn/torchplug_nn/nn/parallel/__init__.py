"""``torchplug.nn.parallel``: ``DataParallel`` (see :mod:`torchplug.nn.modules.data_parallel`) and
``DistributedDataParallel``, which the ``distributed`` plugin provides (looked up on first use through the
public ``torchplug.distributed`` namespace, so this plugin does not import that one)."""

from __future__ import annotations

from typing import Any

from . import data_parallel  # noqa: F401
from .data_parallel import DataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def _distributed_module() -> Any:
    import torchplug

    try:
        return torchplug.distributed._ddp
    except AttributeError as exc:
        raise AttributeError(f"torch.nn.parallel.DistributedDataParallel is provided by the torchplug 'distributed' "
                             f"plugin (pip install plugins/distributed, i.e. torchplug-distributed): {exc}") from None


def __getattr__(name: str) -> Any:
    if name == "DistributedDataParallel":
        return _distributed_module().DistributedDataParallel
    if name == "distributed":  # torch.nn.parallel.distributed, the module DistributedDataParallel lives in
        return _distributed_module()
    raise AttributeError(f"module 'torchplug.nn.parallel' has no attribute {name!r}")
