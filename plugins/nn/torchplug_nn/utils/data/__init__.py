"""``torchplug.utils.data``: datasets, samplers, collation and ``DataLoader``."""

from __future__ import annotations

from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
                      random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
    "random_split", "DataLoader", "default_collate", "default_convert", "get_worker_info", "Sampler",
    "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
    "DistributedSampler",
]
