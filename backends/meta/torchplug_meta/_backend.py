"""The meta Backend record: no data, high dispatch priority, host data only contributes its shape."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import Backend
from torchplug._runtime.allocator import DeviceAllocator
from torchplug._runtime.contract import NoRNG

from . import _common

__all__ = ["make_backend", "NO_DATA"]

NO_DATA = (
    "Cannot copy out of meta tensor; no data! Meta tensors carry only shape, dtype and strides; "
    "create the tensor on a device with data (e.g. device='cpu') to read values."
)


def _from_host(array: np.ndarray, dev: Any, copy: bool = True) -> Any:
    # Only the shape and dtype of the host data survive: torch.tensor([...], device='meta').
    arr = np.asarray(array)
    return _common.new(tuple(arr.shape), _common.from_numpy_dtype(arr.dtype))


def _to_host(t: Any) -> Any:
    raise NotImplementedError(NO_DATA)


def _storage_offset(t: Any) -> int:
    return t._data.offset


def make_backend() -> Backend:
    backend = Backend(
        device_type="meta",
        key_name="Meta",
        from_host=_from_host,
        to_host=_to_host,
        storage_offset=_storage_offset,
        has_data=False,
        is_host=False,
        high_priority=True,
        # Counts the bytes tensors would occupy: torchplug.utils.memory_estimate reads it.
        allocator=DeviceAllocator("meta"),
        rng=NoRNG("The meta device has no data, so it draws no random numbers and has no generator state."),
    )
    backend.on_registered = _common.bind_backend
    return backend
