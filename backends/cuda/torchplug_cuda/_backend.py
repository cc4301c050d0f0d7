"""The cuda Backend record: data movement between host and device, and the contract components."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import Backend

from . import _runtime, _state
from ._allocator import CudaAllocator
from ._pinning import HostPinning
from ._rng import CudaRNG
from ._streams import CudaStreams

__all__ = ["make_backend", "ACCELERATOR_PRIORITY"]

ACCELERATOR_PRIORITY = 20  # above torchplug-mps (10): a real GPU backend wins by default


def _require() -> str:
    mode = _runtime.mode()
    if mode is None:
        raise RuntimeError(_runtime.unavailable_message())
    return mode


def _index(dev: Any) -> int:
    index = getattr(dev, "index", None)
    return _state.BACKEND.runtime.current_device() if index is None else index


def _from_host(array: np.ndarray, dev: Any, copy: bool = True) -> Any:
    """A new cuda tensor holding a copy of the host array (always a copy: the memory differs)."""
    mode = _require()
    index = _index(dev)
    _state.BACKEND.runtime._check_index(index)
    from ._families import bind_device, family

    bind_device(mode, index)
    common = family(mode).common()
    if mode == "emulate":
        return common.wrap(np.array(array, copy=True, order="K"))
    cp = _runtime.cupy()
    host = np.asarray(array)
    if host.dtype.kind == "V":  # bfloat16 (the only void-kind dtype torchplug has): CuPy 14 with ml_dtypes
        from . import _bfloat16

        if _bfloat16.probe(cp):
            raise TypeError(_bfloat16.ERROR(_bfloat16.MISSING or ""))
    with cp.cuda.Device(index):
        return common.wrap(cp.array(host, order="K"))


def _to_host(t: Any) -> np.ndarray:
    """The tensor's values as a NumPy array (a device-to-host copy on the GPU)."""
    if _require() == "emulate":
        return t._data
    data = t._data
    return data if isinstance(data, np.ndarray) else data.get()


def _storage_offset(t: Any) -> int:
    from ._overrides import device_address

    root = t._storage.data
    if root is None:
        return 0
    return (device_address(t._data) - device_address(root)) // t._dtype.itemsize


def _address_of(st: Any) -> int:
    from ._overrides import device_address

    return device_address(st.data) if st.data is not None else 0


def _from_dlpack(obj: Any) -> Any:
    from .interop import from_dlpack

    return from_dlpack(obj)


def make_backend() -> Backend:
    backend = Backend(
        device_type="cuda",
        key_name="CUDA",
        from_host=_from_host,
        to_host=_to_host,
        storage_offset=_storage_offset,
        has_data=True,
        is_host=False,
        # Wins key resolution over cpu, so a cpu/cuda mix reaches the cuda guard's device check.
        high_priority=True,
        is_accelerator=True,
        accelerator_priority=ACCELERATOR_PRIORITY,
        platforms=("linux", "win32"),  # CUDA has no macOS driver: there it is never current unless usable
        runtime=_runtime.CUDARuntime(),
        allocator=CudaAllocator(address_of=_address_of),
        streams=CudaStreams(),
        rng=CudaRNG(),
        host_pinning=HostPinning(),
        # torchplug.from_dlpack hands CUDA (2) and managed (13) memory here, zero-copy through CuPy.
        dlpack_device_types=(2, 13),
        from_dlpack=_from_dlpack,
    )
    backend.on_registered = _state.bind_backend
    return backend
