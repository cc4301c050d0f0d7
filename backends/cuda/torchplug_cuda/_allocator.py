"""The cuda allocator: the contract's accounting plus, on a GPU, CuPy's caching memory pool.

Every tensor buffer is accounted like on every backend (``TrackedStorage``).  On a GPU the
allocator also installs itself as CuPy's allocator (``cupy.cuda.set_allocator``), so every
device allocation -- CuPy's temporaries inside an op included -- goes through
:meth:`CudaAllocator.malloc`:

- the pool is ``cupy.cuda.MemoryPool`` (``backend:native``) or ``MemoryAsyncPool``
  (``backend:cudaMallocAsync``), configured from ``PYTORCH_CUDA_ALLOC_CONF``;
- on out-of-memory it frees the pool's cached blocks, retries once (``num_alloc_retries``), then
  raises :class:`torchplug.cuda.OutOfMemoryError` with the allocated/reserved/free figures
  (``num_ooms``);
- ``memory_stats()``'s ``allocated_bytes.all`` and ``reserved_bytes.all`` are the pool's
  ``used_bytes()``/``total_bytes()``; their peaks are taken after every malloc, which is where
  a peak can occur, so they are exact;
- ``empty_cache()`` returns the pool's free blocks to the driver;
- ``set_per_process_memory_fraction`` caps the pool (``MemoryPool.set_limit``).

Host memory for ``non_blocking`` copies comes from CuPy's pinned memory pool, installed with
the device pool.  When emulating there is no pool: statistics are the exact buffer accounting.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from torchplug._runtime.allocator import DeviceAllocator, OutOfMemoryError

from . import _alloc_conf

__all__ = ["CudaAllocator", "malloc_with_retry", "oom_message", "PoolFigures"]


class PoolFigures:
    """Per-device counters the pool itself does not keep (peaks, retries, ooms, mallocs)."""

    __slots__ = ("peak_used", "peak_total", "retries", "ooms", "mallocs")

    def __init__(self) -> None:
        self.peak_used = self.peak_total = self.retries = self.ooms = self.mallocs = 0


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.2f} MiB"


def oom_message(nbytes: int, index: int, total: int, free: int, allocated: int, reserved: int,
                limit: int | None) -> str:
    """PyTorch's CUDA out-of-memory message, with the same figures."""
    msg = (f"CUDA out of memory. Tried to allocate {_mib(nbytes)}. GPU {index} has a total capacity of "
           f"{_mib(total)} of which {_mib(free)} is free. Of the allocated memory {_mib(allocated)} is allocated "
           f"by torchplug (CuPy's memory pool), and {_mib(reserved - allocated)} is reserved but unallocated.")
    if limit:
        msg += f" The process is limited to {_mib(limit)} by set_per_process_memory_fraction."
    return msg + (" Free tensors you no longer need, reduce the batch size, or see PYTORCH_CUDA_ALLOC_CONF "
                  "in the torchplug.cuda documentation.")


def malloc_with_retry(pool: Any, nbytes: int, figures: PoolFigures, is_oom: Callable[[BaseException], bool],
                      describe: Callable[[int], str]) -> Any:
    """``pool.malloc(nbytes)``; on OOM free the cache and retry once, then raise OutOfMemoryError.

    ``pool`` needs ``malloc``, ``free_all_blocks``, ``used_bytes``, ``total_bytes`` (CuPy's pools
    have them); ``describe(nbytes)`` builds the error message.  Peaks are updated on success.
    """
    try:
        ptr = pool.malloc(nbytes)
    except Exception as exc:  # noqa: BLE001 - filtered by is_oom
        if not is_oom(exc):
            raise
        figures.retries += 1
        pool.free_all_blocks()
        try:
            ptr = pool.malloc(nbytes)
        except Exception as exc2:  # noqa: BLE001
            if not is_oom(exc2):
                raise
            figures.ooms += 1
            raise OutOfMemoryError(describe(nbytes)) from None
    figures.mallocs += 1
    used = pool.used_bytes()
    if used > figures.peak_used:
        figures.peak_used = used
    total = pool.total_bytes()
    if total > figures.peak_total:
        figures.peak_total = total
    return ptr


class CudaAllocator(DeviceAllocator):
    """The contract's allocator for ``cuda``, plus CuPy's pool on a GPU (see the module docstring)."""

    def __init__(self, *, address_of: Callable[[Any], int] | None = None) -> None:
        super().__init__("cuda", address_of=address_of)
        self.conf: _alloc_conf.AllocConf | None = None
        self.pool: Any = None
        self.pinned_pool: Any = None
        self._figures: dict[int, PoolFigures] = {}
        self._fractions: dict[int, float] = {}
        self._install_lock = threading.Lock()

    # -- CuPy pool -----------------------------------------------------------------------------------
    def install_cupy(self) -> None:
        """Create the pool from ``PYTORCH_CUDA_ALLOC_CONF`` and make it CuPy's allocator (once)."""
        if self.pool is not None:
            return
        with self._install_lock:
            if self.pool is not None:
                return
            import os

            import cupy as cp

            conf = _alloc_conf.from_environment()
            if conf.unsupported:
                warnings.warn(
                    "PYTORCH_CUDA_ALLOC_CONF options "
                    f"{', '.join(conf.unsupported)} have no effect on CuPy's memory pool (torchplug-cuda applies "
                    f"{', '.join(_alloc_conf.APPLIED)}).", RuntimeWarning, stacklevel=2)
            self.conf = conf
            if os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1":
                pool = _Uncached(cp)
            elif conf.backend == "cudaMallocAsync":
                pool = cp.cuda.MemoryAsyncPool()
            else:
                pool = cp.cuda.MemoryPool()
            self.pool = pool
            if conf.per_process_memory_fraction is not None:
                self._fractions[0] = conf.per_process_memory_fraction
                pool.set_limit(fraction=conf.per_process_memory_fraction)
            self.pinned_pool = cp.cuda.PinnedMemoryPool()
            cp.cuda.set_pinned_memory_allocator(self.pinned_pool.malloc)
            cp.cuda.set_allocator(self.malloc)

    def _figures_for(self, index: int) -> PoolFigures:
        found = self._figures.get(index)
        if found is None:
            found = self._figures.setdefault(index, PoolFigures())
        return found

    def malloc(self, nbytes: int) -> Any:
        """CuPy's allocator hook: a pool allocation on the current device, with retry and OOM figures."""
        import cupy as cp

        index = cp.cuda.Device().id
        figures = self._figures_for(index)
        ptr = malloc_with_retry(self.pool, nbytes, figures, lambda e: isinstance(e, cp.cuda.memory.OutOfMemoryError),
                                lambda n: self._describe_oom(n, index))
        conf = self.conf
        if conf is not None and conf.garbage_collection_threshold is not None:
            # Reclaim cached blocks once the pool holds more than the threshold of its capacity.
            limit = self.pool.get_limit() or cp.cuda.runtime.memGetInfo()[1]
            if self.pool.total_bytes() > conf.garbage_collection_threshold * limit:
                self.pool.free_all_blocks()
        return ptr

    def _describe_oom(self, nbytes: int, index: int) -> str:
        import cupy as cp

        free, total = cp.cuda.runtime.memGetInfo()
        limit = self.pool.get_limit() if hasattr(self.pool, "get_limit") else 0
        return oom_message(nbytes, index, total, free, self.pool.used_bytes(), self.pool.total_bytes(), limit)

    # -- statistics ------------------------------------------------------------------------------------
    def _pooled(self) -> bool:
        """Whether CuPy's pool is installed and in use (not while emulating)."""
        if self.pool is None:
            return False
        from ._runtime import mode

        return mode() == "cupy"

    def memory_stats(self, index: int | None = None) -> dict[str, int]:
        stats = super().memory_stats(index)
        if not self._pooled():
            return stats
        import cupy as cp

        i = index or 0
        fig = self._figures_for(i)
        with cp.cuda.Device(i):
            used, total = self.pool.used_bytes(), self.pool.total_bytes()
        for stat, cur, peak in (("allocated_bytes", used, fig.peak_used), ("active_bytes", used, fig.peak_used),
                                ("reserved_bytes", total, fig.peak_total)):
            stats[f"{stat}.all.current"] = cur
            stats[f"{stat}.all.peak"] = max(peak, cur)
        stats["num_alloc_retries"] = fig.retries
        stats["num_ooms"] += fig.ooms
        stats["num_device_alloc"] = fig.mallocs
        return stats

    def reset_peak_memory_stats(self, index: int | None = None) -> None:
        super().reset_peak_memory_stats(index)
        if self._pooled():
            import cupy as cp

            fig = self._figures_for(index or 0)
            with cp.cuda.Device(index or 0):
                fig.peak_used, fig.peak_total = self.pool.used_bytes(), self.pool.total_bytes()

    def reset_accumulated_memory_stats(self, index: int | None = None) -> None:
        super().reset_accumulated_memory_stats(index)
        fig = self._figures_for(index or 0)
        fig.retries = fig.ooms = fig.mallocs = 0

    def empty_cache(self) -> None:
        super().empty_cache()
        if self._pooled():
            self.pool.free_all_blocks()
            if self.pinned_pool is not None:
                self.pinned_pool.free_all_blocks()

    # -- limits ------------------------------------------------------------------------------------------
    def set_per_process_memory_fraction(self, fraction: float, index: int) -> None:
        if not isinstance(fraction, float) and not isinstance(fraction, int):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
        self._fractions[index] = float(fraction)
        if self._pooled():
            import cupy as cp

            with cp.cuda.Device(index):
                self.pool.set_limit(fraction=float(fraction))

    def get_per_process_memory_fraction(self, index: int) -> float:
        return self._fractions.get(index, 1.0)


class _Uncached:
    """``PYTORCH_NO_CUDA_MEMORY_CACHING=1``: every malloc is a cudaMalloc, every free a cudaFree.

    CuPy's ``Memory`` frees its buffer when collected; a Python subclass counts the bytes back
    (the Cython base class takes no weak references, a subclass does not need them)."""

    def __init__(self, cp: Any) -> None:
        self._cp = cp
        self._used = 0
        self._limit = 0
        pool = self

        class _Counted(cp.cuda.memory.Memory):
            def __del__(self) -> None:
                pool._used -= self.size

        self._memory = _Counted

    def malloc(self, nbytes: int) -> Any:
        cp = self._cp
        if self._limit and self._used + nbytes > self._limit:
            raise cp.cuda.memory.OutOfMemoryError(nbytes, self._used, self._limit)
        mem = self._memory(nbytes)
        self._used += mem.size
        return cp.cuda.memory.MemoryPointer(mem, 0)

    def free_all_blocks(self) -> None:
        return None  # nothing is cached

    def used_bytes(self) -> int:
        return self._used

    def total_bytes(self) -> int:
        return self._used

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        if fraction is not None:
            size = int(fraction * self._cp.cuda.runtime.memGetInfo()[1])
        self._limit = size or 0

    def get_limit(self) -> int:
        return self._limit
