"""The mps Backend record: an accelerator whose emulated memory is host memory, never float64."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import Backend
from torchplug._runtime.allocator import DeviceAllocator, TrackedStorage
from torchplug._runtime.generator import HostRNG
from torchplug._runtime.streams import SynchronousStreams

from . import _runtime, _state

__all__ = ["make_backend", "ACCELERATOR_PRIORITY"]

ACCELERATOR_PRIORITY = 10  # below a real GPU backend's (torchplug-cuda uses 20)


def _require() -> None:
    if not _runtime.MPSRuntime().is_available():
        raise RuntimeError(_runtime.unavailable_message())


def _from_host(array: np.ndarray, dev: Any, copy: bool = True) -> Any:
    _require()
    arr = np.array(array, copy=True, order="K")
    if arr.dtype == np.float64:
        raise TypeError(_runtime.FLOAT64_ERROR)
    from torchplug._base.dtype import from_numpy_dtype
    from torchplug._tensor.tensor import make_tensor

    return make_tensor(arr, from_numpy_dtype(arr.dtype), _state.MPS, _state.KEYSET, TrackedStorage(arr.nbytes, _state.MPS, arr, _state.STATS))


def _to_host(t: Any) -> np.ndarray:
    _require()
    return t._data


def _storage_offset(t: Any) -> int:
    from torchplug_cpu import _common

    return _common.storage_offset(t)


def make_backend() -> Backend:
    backend = Backend(
        device_type="mps",
        key_name="MPS",
        from_host=_from_host,
        to_host=_to_host,
        storage_offset=_storage_offset,
        has_data=True,
        is_host=False,
        # Wins key resolution over cpu, so a cpu/mps mix reaches the mps kernels' device check.
        high_priority=True,
        is_accelerator=True,
        accelerator_priority=ACCELERATOR_PRIORITY,
        # Metal exists only on macOS: elsewhere the stub is never the current accelerator unless
        # it is usable (TORCHPLUG_MPS_EMULATE=1) or the user asks for it.
        platforms=("darwin",),
        runtime=_runtime.MPSRuntime(),
        allocator=DeviceAllocator("mps", address_of=_state.address_of),
        streams=SynchronousStreams(),
        rng=HostRNG("mps"),
    )
    backend.on_registered = _state.bind_backend
    return backend
