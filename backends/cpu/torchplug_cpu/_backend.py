"""The cpu Backend record: host data movement and the state kernels share (device, key set)."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import Backend, device
from torchplug._runtime.allocator import DeviceAllocator

from . import _common

__all__ = ["make_backend"]


def _from_host(array: np.ndarray, dev: Any, copy: bool = True) -> Any:
    if not copy:  # shares the caller's memory (from_numpy): nothing is allocated
        arr = array if array.__class__ is np.ndarray else np.asarray(array)
        return _common.wrap_foreign(arr)
    return _common.wrap(np.array(array, copy=True, order="K"))


def _to_host(t: Any) -> np.ndarray:
    return t._data


def _storage_offset(t: Any) -> int:
    return _common.storage_offset(t)


def _blas_threads(n: int | None) -> int:
    """Set (``n``) or read the thread count of the BLAS libraries NumPy and SciPy loaded."""
    from threadpoolctl import threadpool_info, threadpool_limits

    if n is not None:
        from scipy.linalg import blas  # noqa: F401 - load SciPy's BLAS too (axpy kernels), so the limit covers it

        threadpool_limits(limits=n, user_api="blas")  # stays in force: torch.set_num_threads is global too
        from ._blas_policy import set_user_threads

        set_user_threads(n)  # what large products use (small ones stay on one thread)
        from ._parallel import set_threads

        set_threads(n)  # the C extension's pool for large elementwise, sum and copy loops
        from .kernels.pointwise import reset_axpy

        reset_axpy()  # whether the optimizer fast path may use SciPy's BLAS depends on its threads
    from ._blas_policy import numpy_blas_path, user_threads

    # NumPy's library may sit at one thread between small products: report the user's count for it
    pools = [user_threads() if p["filepath"] == numpy_blas_path() else p["num_threads"]
             for p in threadpool_info() if p.get("user_api") == "blas"]
    return max(pools) if pools else 1


def make_backend() -> Backend:
    backend = Backend(
        device_type="cpu",
        key_name="CPU",
        from_host=_from_host,
        to_host=_to_host,
        storage_offset=_storage_offset,
        has_data=True,
        is_host=True,
        # Every buffer the kernels create is accounted (TrackedStorage in _common.wrap/storage).
        allocator=DeviceAllocator("cpu", address_of=_common.address_of, host_memory=True),
        # torch.cpu.current_device() answers 'cpu'; everything else is the generic surface.
        device_module_extras={"current_device": lambda: "cpu"},
        intra_op_threads=_blas_threads,
    )
    # Kernels read the device and key set from _common; they are filled once registered.
    backend.on_registered = _common.bind_backend
    return backend


_ = device
