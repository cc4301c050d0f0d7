"""``DataLoader``: batching, shuffling with a Generator, samplers, and real worker processes."""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import warnings
from typing import Any

import torchplug

from . import _worker
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler:
    def __iter__(self) -> Any:
        while True:
            yield None


class DataLoader:
    """Iterate over a dataset in (optionally shuffled) batches, in this process or in ``num_workers`` workers."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None, sampler: Any = None,
                 batch_sampler: Any = None, num_workers: int = 0, collate_fn: Any = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 multiprocessing_context: Any = None, generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._iterator: Any = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil

                length = length // self.batch_size if self.drop_last else ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self) -> Any:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    def _shared_seed(self) -> int:
        # torch's base seed: random_() on an int64 scalar, from the loader's generator
        return int(torchplug.empty((), dtype=torchplug.int64).random_(generator=self.generator).item())


def _pin(data: Any, device: str = "") -> Any:
    """Tensors of a batch (in any nesting of the default collate's containers) in page-locked memory
    of the accelerator, as PyTorch's pin_memory thread does."""
    from torchplug import Tensor

    if isinstance(data, Tensor):
        return data.pin_memory(device or None)
    if isinstance(data, dict):
        return type(data)({k: _pin(v, device) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(v, device) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(v, device) for v in data)
    return data


def _pinning(loader: Any) -> bool:
    """Whether batches get pinned: asked for, and an accelerator that can pin is available."""
    if not loader.pin_memory:
        return False
    from torchplug import accelerator

    dev = loader.pin_memory_device or accelerator.current_accelerator(check_available=True)
    if not dev:
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                      "won't be used.", stacklevel=3)
        return False
    return True


class _SingleProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self.loader = loader
        self._pin = _pinning(loader)
        self._sampler_iter = iter(loader._index_sampler)
        # Drawn (as torch does) in every iterator, so one generator gives the same order with or without workers.
        self._base_seed = loader._shared_seed()
        self._dataset_iter = iter(loader.dataset) if loader._is_iterable else None
        self._ended = False

    def __iter__(self) -> _SingleProcessIter:
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def __next__(self) -> Any:
        loader = self.loader
        if self._ended:
            raise StopIteration
        index = next(self._sampler_iter)
        if loader._is_iterable:
            if loader._auto_collation:
                items = list(itertools.islice(self._dataset_iter, len(index)))
                if not items or (loader.drop_last and len(items) < len(index)):
                    self._ended = True
                    raise StopIteration
                data = loader.collate_fn(items)
            else:
                data = loader.collate_fn(next(self._dataset_iter))
        elif loader._auto_collation:
            getitems = getattr(loader.dataset, "__getitems__", None)
            data = loader.collate_fn(getitems(index) if getitems else [loader.dataset[i] for i in index])
        else:
            data = loader.collate_fn(loader.dataset[index])
        return _pin(data, loader.pin_memory_device) if self._pin else data


class _MultiProcessIter:
    def __init__(self, loader: DataLoader) -> None:
        self._pin = _pinning(loader)
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context()
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        _worker.install_tensor_reducer()
        self._ctx = ctx
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._result_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        base_seed = loader._shared_seed()
        batch_size = loader.batch_size if loader._auto_collation else None
        for wid in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop,
                            args=(loader.dataset, iq, self._result_queue, self._done_event, loader._auto_collation,
                                  loader.collate_fn, loader.drop_last, base_seed, loader.worker_init_fn, wid,
                                  self._num_workers, loader._is_iterable, batch_size),
                            daemon=True)
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first=True)

    def _reset(self, loader: DataLoader, first: bool = False) -> None:
        self.loader = loader
        self._sampler_iter = iter(loader._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: dict[int, Any] = {}
        self._reorder: dict[int, Any] = {}
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:
            # Drain results of a previous (abandoned) epoch is unnecessary: persistent iterators only reset
            # after StopIteration, when every sent task has been received.
            pass
        for _ in range(self._prefetch):
            self._try_put_index()

    def __iter__(self) -> _MultiProcessIter:
        return self

    def __len__(self) -> int:
        return len(self.loader)

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = wid
        self._send_idx += 1

    def _get(self) -> tuple[int, Any]:
        timeout = self._timeout if self._timeout > 0 else 5.0
        while True:
            try:
                return self._result_queue.get(timeout=timeout)
            except queue.Empty:
                if self._timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited unexpectedly") from None

    def __next__(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._task_info:
                self._rcvd_idx += 1
            if self._rcvd_idx >= self._send_idx:
                if not self.loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._reorder:
                data = self._reorder.pop(self._rcvd_idx)
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                result = self._process(data)
                if result is _SKIP:
                    continue
                return result
            idx, data = self._get()
            if idx != self._rcvd_idx and self.loader.in_order:
                self._reorder[idx] = data
                continue
            del self._task_info[idx]
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            result = self._process(data)
            if result is _SKIP:
                continue
            return result

    def _process(self, data: Any) -> Any:
        if isinstance(data, _worker.IterableStop):
            self._active[data.worker_id] = False
            # Tasks already queued to that worker will come back as IterableStop too.
            return _SKIP
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return _pin(data, self.loader.pin_memory_device) if self._pin else data

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


_SKIP = object()
