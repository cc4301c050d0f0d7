"""``torchplug.storage``: the storage classes under PyTorch's module path (``torch.storage.UntypedStorage``,
``torch.storage.TypedStorage``), the same classes as ``torchplug.UntypedStorage``/``TypedStorage``."""

from __future__ import annotations

from torchplug._ops.torch_namespace import TORCH

__all__ = ["TypedStorage", "UntypedStorage"]

TypedStorage = TORCH.TypedStorage
UntypedStorage = TORCH.UntypedStorage
