"""``torchplug.mps``: the generated device-module surface plus ``torch.mps``'s own memory functions.

The core builds the contract surface (``torchplug._runtime.device_module.SURFACE``) for every backend; that
module stays ``backend.device_module``.  ``torchplug.mps`` is a module with the same objects plus
the names ``torch.mps`` has beyond it (and that the placeholder module offers when this backend is
not installed): ``current_allocated_memory``, ``driver_allocated_memory``,
``recommended_max_memory`` and ``set_per_process_memory_fraction``.

The emulated device keeps its tensors in host memory, so the answers are about that memory: the
allocated bytes the allocator counts, and the machine's physical memory as the working-set size.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

__all__ = ["build", "MPS_EXTRAS"]

MPS_EXTRAS = ("current_allocated_memory", "driver_allocated_memory", "recommended_max_memory",
              "set_per_process_memory_fraction")


def _physical_memory() -> int:
    """Bytes of physical memory on this machine (the emulated device's memory)."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def build(backend: Any) -> ModuleType:
    """``torchplug.mps`` for the registered mps ``backend``."""
    generic = backend.device_module
    mod = ModuleType("torchplug.mps", __doc__)
    for name in generic.__all__:
        setattr(mod, name, getattr(generic, name))
    mod._record_memory_history = generic._record_memory_history  # private, but part of the surface
    mod._per_process_memory_fraction = 0.0  # the recorded fraction; torch's default 0 means no limit

    def current_allocated_memory() -> int:
        """Bytes held by live tensors on the device (cached pool memory not included)."""
        return generic.memory_allocated()

    def driver_allocated_memory() -> int:
        """Bytes the device holds for this process, cached blocks included (nothing is cached here, so this
        equals the reserved bytes the allocator counts)."""
        return generic.memory_reserved()

    def recommended_max_memory() -> int:
        """The recommended working-set size in bytes: Metal's ``recommendedMaxWorkingSetSize``; the emulated
        device lives in host memory, so this machine's physical memory."""
        generic.memory_allocated()  # raises the unavailable-device error where there is no device
        return _physical_memory()

    def set_per_process_memory_fraction(fraction: float) -> None:
        """Record the share (0 to 2, 0 meaning no limit) of ``recommended_max_memory()`` this process may
        allocate, checked as torch.mps checks it.  The emulated device allocates host memory through NumPy
        and does not cap it: allocations past the share are not refused."""
        if not isinstance(fraction, float):
            raise TypeError("Invalid type for fraction argument, must be `float`")
        if fraction < 0 or fraction > 2:
            raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
        generic.memory_allocated()  # raises the unavailable-device error where there is no device
        mod._per_process_memory_fraction = fraction

    for fn in (current_allocated_memory, driver_allocated_memory, recommended_max_memory,
               set_per_process_memory_fraction):
        fn.__module__ = "torchplug.mps"
        setattr(mod, fn.__name__, fn)
    mod.__all__ = sorted({*generic.__all__, *MPS_EXTRAS})
    mod.device_type = "mps"
    return mod
