"""utils.data: datasets, samplers, collation, DataLoader ordering (seeded, and with worker processes)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import torchplug as tp
from torchplug.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                                  SequentialSampler, Subset, TensorDataset, default_collate, get_worker_info,
                                  random_split)

from nn_helpers import to_np


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": tp.tensor([float(i), float(i * i)]), "y": i, "name": f"s{i}"}


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def _seen(loader):
    return [int(v) for batch in loader for v in to_np(batch[0] if isinstance(batch, list) else batch).reshape(-1)]


def test_tensor_dataset_subset_concat_split():
    ds = TensorDataset(tp.arange(10), tp.arange(10) * 2)
    assert len(ds) == 10 and [int(v) for v in ds[3]] == [3, 6]
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(tp.arange(3), tp.arange(4))
    sub = Subset(ds, [5, 1])
    assert int(sub[0][0]) == 5 and len(sub) == 2
    cat = ConcatDataset([ds, sub])
    assert len(cat) == 12 and int(cat[11][0]) == 1 and int((ds + sub)[10][0]) == 5
    a, b = random_split(ds, [0.7, 0.3], generator=tp.Generator().manual_seed(1))
    assert len(a) == 7 and len(b) == 3 and sorted(a.indices + b.indices) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=tp.Generator().manual_seed(1))
    assert a2.indices == a.indices
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


def test_default_collate():
    batch = default_collate([Squares()[i] for i in range(3)])
    assert to_np(batch["x"]).tolist() == [[0, 0], [1, 1], [2, 4]]
    assert batch["y"].dtype == tp.int64 and batch["name"] == ["s0", "s1", "s2"]
    pair = default_collate([(tp.ones(2), 1.5), (tp.zeros(2), 2.5)])
    assert isinstance(pair, list) and pair[1].dtype == tp.float64
    P = namedtuple("P", "a b")
    nt = default_collate([P(1, np.ones(2)), P(2, np.zeros(2))])
    assert isinstance(nt, P) and to_np(nt.a).tolist() == [1, 2] and nt.b.shape == (2, 2)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])


def test_loader_sequential_batches_and_drop_last():
    ds = TensorDataset(tp.arange(10))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3 and [b[0].shape[0] for b in loader] == [4, 4, 2]
    loader = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(loader) == 2 and _seen(loader) == list(range(8))
    assert [to_np(b).tolist() for b in DataLoader(tp.arange(3), batch_size=None)] == [0, 1, 2]


def test_loader_shuffle_with_generator_is_reproducible():
    ds = TensorDataset(tp.arange(50))
    a = _seen(DataLoader(ds, batch_size=8, shuffle=True, generator=tp.Generator().manual_seed(7)))
    b = _seen(DataLoader(ds, batch_size=8, shuffle=True, generator=tp.Generator().manual_seed(7)))
    c = _seen(DataLoader(ds, batch_size=8, shuffle=True, generator=tp.Generator().manual_seed(8)))
    assert a == b and a != c and sorted(a) == list(range(50)) and a != list(range(50))
    # Two epochs of one loader draw different orders from the same generator.
    loader = DataLoader(ds, batch_size=50, shuffle=True, generator=tp.Generator().manual_seed(7))
    assert _seen(loader) != _seen(loader)


def test_samplers_and_errors():
    ds = TensorDataset(tp.arange(6))
    bs = BatchSampler(SequentialSampler(ds), 4, False)
    assert list(bs) == [[0, 1, 2, 3], [4, 5]]
    assert _seen(DataLoader(ds, batch_sampler=bs)) == list(range(6))
    rs = RandomSampler(ds, generator=tp.Generator().manual_seed(0))
    assert sorted(rs) == list(range(6))
    assert len(list(RandomSampler(ds, replacement=True, num_samples=40))) == 40
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=rs, shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=bs, batch_size=2)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(ds, 0, False)


def test_iterable_dataset_single_process():
    assert _seen(DataLoader(Stream(7), batch_size=3)) == list(range(7))
    assert _seen(DataLoader(Stream(7), batch_size=3, drop_last=True)) == list(range(6))


def _init_fn(worker_id):
    info = get_worker_info()
    assert info is not None and info.id == worker_id and info.num_workers == 2


def test_workers_preserve_order_and_match_single_process():
    ds = TensorDataset(tp.arange(40).to(tp.float32), tp.arange(40))
    kw = dict(batch_size=6, shuffle=True)
    single = [[to_np(t).tolist() for t in b] for b in DataLoader(ds, generator=tp.Generator().manual_seed(3), **kw)]
    multi_loader = DataLoader(ds, num_workers=2, worker_init_fn=_init_fn, generator=tp.Generator().manual_seed(3),
                              pin_memory=True, **kw)
    with pytest.warns(UserWarning, match="no accelerator is found"):  # as torch warns without CUDA
        multi = [[to_np(t).tolist() for t in b] for b in multi_loader]
    assert single == multi
    dicts = list(DataLoader(Squares(), batch_size=4, num_workers=2))
    assert [d["y"].tolist() for d in dicts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert get_worker_info() is None


def test_workers_iterable_and_persistent():
    got = sorted(_seen(DataLoader(Stream(11), batch_size=2, num_workers=2)))
    assert got == list(range(11))
    loader = DataLoader(TensorDataset(tp.arange(9)), batch_size=4, num_workers=2, persistent_workers=True)
    assert _seen(loader) == list(range(9)) and _seen(loader) == list(range(9))
    loader._iterator._shutdown_workers()


class Broken(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise KeyError("bad sample")
        return tp.tensor(i)


def test_worker_exception_is_reraised():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process"):
        list(DataLoader(Broken(), batch_size=1, num_workers=2))
