"""``DistributedSampler``: the slice of a dataset's indices that one of ``num_replicas`` processes reads.

Without ``num_replicas``/``rank`` it reads them from the default process group of ``torchplug.distributed``
(the distributed plugin), as PyTorch's does."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import torchplug

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _distributed(what: str) -> Any:
    """``torchplug.distributed`` (the distributed plugin's, looked up by name: this plugin does not import it)."""
    try:
        dist = torchplug.distributed
    except AttributeError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError(f"Requires distributed package to be available: torchplug.distributed (the torchplug-"
                           f"distributed plugin) is not installed to read {what} from; install it or pass "
                           "num_replicas= and rank= explicitly")
    return dist


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of the (shuffled, padded or trimmed) dataset order.

    With ``shuffle`` the order is ``randperm(len(dataset))`` drawn from a generator seeded with
    ``seed + epoch`` (call :meth:`set_epoch` each epoch), as PyTorch does; without ``drop_last`` the
    order is padded by repeating its start so every replica gets the same number of samples.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _distributed("the world size").get_world_size()
        if rank is None:
            rank = _distributed("the rank").get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            g = torchplug.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = torchplug.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        indices = indices[self.rank : self.total_size : self.num_replicas]
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the shuffle's seed, so each epoch has a different (but reproducible) order."""
        self.epoch = epoch
