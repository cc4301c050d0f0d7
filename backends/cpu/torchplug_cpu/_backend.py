"""The cpu Backend record: host data movement and the state kernels share (device, key set)."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import Backend, device

from . import _common

__all__ = ["make_backend"]


def _from_host(array: np.ndarray, dev: Any, copy: bool = True) -> Any:
    arr = np.array(array, copy=True, order="K") if copy else array
    if arr.__class__ is not np.ndarray:
        arr = np.asarray(arr)
    return _common.wrap(arr)


def _to_host(t: Any) -> np.ndarray:
    return t._data


def _storage_offset(t: Any) -> int:
    return _common.storage_offset(t)


def make_backend() -> Backend:
    backend = Backend(
        device_type="cpu",
        key_name="CPU",
        from_host=_from_host,
        to_host=_to_host,
        storage_offset=_storage_offset,
        has_data=True,
        is_host=True,
    )
    # Kernels read the device and key set from _common; they are filled once registered.
    backend.on_registered = _common.bind_backend
    return backend


_ = device
