"""``torchplug.nn.parallel``: ``DataParallel`` (see :mod:`torchplug.nn.modules.data_parallel`)."""

from __future__ import annotations

from .modules.data_parallel import DataParallel

__all__ = ["DataParallel"]
