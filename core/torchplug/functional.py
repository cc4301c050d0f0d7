"""``torchplug.functional``: the functions PyTorch defines in ``torch.functional`` (``stft``, ``einsum``,
``meshgrid``, ``unique``...), the same objects as ``torchplug.<name>``."""

from __future__ import annotations

from torchplug._ops.torch_namespace import TORCH

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod",
           "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split",
           "stft", "svd_lowrank", "tensordot", "unique", "unique_consecutive", "unravel_index"]

globals().update({name: getattr(TORCH, name) for name in __all__})
