"""``torchplug.nn.parallel``: ``DataParallel`` (see :mod:`torchplug.nn.modules.data_parallel`)."""

from __future__ import annotations

from . import data_parallel  # noqa: F401
from .data_parallel import DataParallel

__all__ = ["DataParallel", "data_parallel"]
