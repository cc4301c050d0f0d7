"""DataLoader worker processes: the worker loop, worker info, and tensor transfer between processes."""

from __future__ import annotations

import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info", "worker_loop", "ExceptionWrapper", "IterableStop", "install_tensor_reducer"]

_worker_info: WorkerInfo | None = None


@dataclass
class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """``None`` in the main process; in a worker: ``id``, ``num_workers``, ``seed``, ``dataset``."""
    return _worker_info


class ExceptionWrapper:
    """Carries an exception (type and formatted traceback) from a worker to the main process."""

    def __init__(self, exc_info: Any, where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - exception types with odd constructors
            raise RuntimeError(msg) from None
        raise exception


class IterableStop:
    """Marker a worker sends when its IterableDataset replica is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _rebuild_tensor(arr: np.ndarray, dtype_name: str) -> Any:
    import torchplug

    t = torchplug.from_numpy(arr)
    return t


def _reduce_tensor(t: Any) -> Any:
    if t.device.type == "cpu":
        arr = np.ascontiguousarray(t.detach().numpy())
        return (_rebuild_tensor, (arr, t.dtype.name if hasattr(t.dtype, "name") else str(t.dtype)))
    return t.__reduce_ex__(2)


def install_tensor_reducer() -> None:
    """Send CPU tensors through worker queues as NumPy buffers (not lists)."""
    from multiprocessing.reduction import ForkingPickler

    from torchplug._tensor.tensor import Tensor

    ForkingPickler.register(Tensor, _reduce_tensor)


def worker_loop(dataset: Any, index_queue: Any, data_queue: Any, done_event: Any, auto_collation: bool,
                collate_fn: Any, drop_last: bool, base_seed: int, init_fn: Any, worker_id: int, num_workers: int,
                is_iterable: bool, batch_size: Any) -> None:
    global _worker_info
    try:
        import torchplug

        install_tensor_reducer()
        seed = base_seed + worker_id
        random.seed(seed)
        torchplug.manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            iterator = iter(dataset) if is_iterable else None
        except Exception:  # noqa: BLE001
            init_exception = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                r = index_queue.get(timeout=5.0)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if r is None:
                break
            idx, index = r
            if init_exception is not None:
                data_queue.put((idx, init_exception))
                init_exception = None
                continue
            if exhausted:
                data_queue.put((idx, IterableStop(worker_id)))
                continue
            try:
                if is_iterable:
                    if auto_collation:
                        items = []
                        for _ in range(batch_size):
                            try:
                                items.append(next(iterator))
                            except StopIteration:
                                break
                        if not items or (drop_last and len(items) < batch_size):
                            exhausted = True
                            data = IterableStop(worker_id)
                        else:
                            data = collate_fn(items)
                    else:
                        try:
                            data = collate_fn(next(iterator))
                        except StopIteration:
                            exhausted = True
                            data = IterableStop(worker_id)
                elif auto_collation:
                    data = collate_fn([dataset[i] for i in index])
                else:
                    data = collate_fn(dataset[index])
            except Exception:  # noqa: BLE001
                data = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
