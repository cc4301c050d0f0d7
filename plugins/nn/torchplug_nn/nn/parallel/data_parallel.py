"""``torchplug.nn.parallel.data_parallel``: PyTorch's module path of ``DataParallel``."""

from __future__ import annotations

from ..modules.data_parallel import DataParallel

__all__ = ["DataParallel"]
