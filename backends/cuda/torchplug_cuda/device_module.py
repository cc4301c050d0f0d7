"""``torchplug.cuda``: the generated device-module surface plus ``torch.cuda``'s own functions.

The core builds the contract surface (``torchplug._runtime.device_module.SURFACE``) for every backend;
that module stays ``backend.device_module``, identical in names to every other device module.
``torchplug.cuda`` is a module with the same objects plus CUDA's own names, as ``torch.cuda``
has more than the generic surface: device properties and capability, ``mem_get_info``,
``is_bf16_supported``, ``is_tf32_supported``, the per-process memory fraction, ``manual_seed_all`` over every device
and the DLPack helpers.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from . import _runtime

__all__ = ["build", "CUDA_EXTRAS", "CudaDeviceProperties"]

CUDA_EXTRAS = (
    "get_device_capability", "get_device_properties", "mem_get_info", "is_bf16_supported", "is_tf32_supported",
    "set_per_process_memory_fraction", "get_per_process_memory_fraction", "get_arch_list",
    "from_dlpack", "to_dlpack", "is_emulated",
)


class CudaDeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns (the commonly used fields)."""

    def __init__(self, props: dict[str, Any]) -> None:
        self.name: str = props["name"]
        self.major: int = props["major"]
        self.minor: int = props["minor"]
        self.total_memory: int = props["total_memory"]
        self.multi_processor_count: int = props["multi_processor_count"]
        self.uuid: str = props["uuid"]
        self.is_integrated: bool = props["is_integrated"]

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, multi_processor_count={self.multi_processor_count}, "
                f"uuid={self.uuid})")


def build(backend: Any) -> ModuleType:
    """``torchplug.cuda`` for the registered cuda ``backend``."""
    from torchplug._runtime.device_module import device_index_of

    generic = backend.device_module
    mod = ModuleType("torchplug.cuda", __doc__)
    for name in generic.__all__:
        setattr(mod, name, getattr(generic, name))
    mod._record_memory_history = generic._record_memory_history  # private, but part of the surface
    runtime = backend.runtime

    def _index(device: Any) -> int:
        if not runtime.is_available():
            raise RuntimeError(_runtime.unavailable_message())
        index = device_index_of("cuda", device, runtime)
        runtime._check_index(index)
        return index

    def get_device_properties(device: Any = None) -> CudaDeviceProperties:
        """Name, compute capability, total memory and multiprocessor count of a device."""
        return CudaDeviceProperties(_runtime.device_properties(_index(device)))

    def get_device_capability(device: Any = None) -> tuple[int, int]:
        """The (major, minor) compute capability of a device."""
        props = _runtime.device_properties(_index(device))
        return props["major"], props["minor"]

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        """(free, total) device memory in bytes, as cudaMemGetInfo reports it."""
        index = _index(device)
        if _runtime.mode() == "emulate":
            total = _runtime.EMULATED_TOTAL_MEMORY
            return total - backend.allocator.stats_for(index).cur_b, total
        cp = _runtime.cupy()
        with cp.cuda.Device(index):
            free, total = cp.cuda.runtime.memGetInfo()
        return int(free), int(total)

    def is_bf16_supported(including_emulation: bool = True) -> bool:
        """Whether bfloat16 is supported: compute capability 8.0 (Ampere) or newer."""
        if not runtime.is_available():
            return False
        if _runtime.mode() == "cupy":
            # CuPy holds bfloat16 from version 14 on, with ml_dtypes installed.
            from . import _bfloat16

            if _bfloat16.probe(_runtime.cupy()):
                return False
        major, _ = get_device_capability()
        return major >= 8 or bool(including_emulation and _runtime.mode() == "emulate")

    def is_tf32_supported() -> bool:
        """Whether the current device computes in TF32: as torch, where bfloat16 runs natively (compute
        capability 8.0, Ampere, or newer; emulation does not count)."""
        return is_bf16_supported(including_emulation=False)

    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        """Cap this process's share of a device's memory (allocations beyond raise OutOfMemoryError)."""
        backend.allocator.set_per_process_memory_fraction(fraction, _index(device))

    def get_per_process_memory_fraction(device: Any = None) -> float:
        return backend.allocator.get_per_process_memory_fraction(_index(device))

    def get_arch_list() -> list[str]:
        """The architectures CuPy compiles kernels for on this machine (``sm_XY`` of each device)."""
        if not runtime.is_available():
            return []
        return sorted({f"sm_{p['major']}{p['minor']}" for p in
                       (_runtime.device_properties(i) for i in range(runtime.device_count()))})

    def manual_seed_all(seed: int) -> None:
        """Seed every cuda device's generator (ignored when the device is unavailable)."""
        if runtime.is_available():
            backend.rng.manual_seed_all(int(seed), runtime.device_count())

    def is_emulated() -> bool:
        """True when ``TORCHPLUG_CUDA_EMULATE`` runs the device on NumPy (not a GPU)."""
        return _runtime.mode() == "emulate"

    from .interop import from_dlpack, to_dlpack

    for fn in (get_device_properties, get_device_capability, mem_get_info, is_bf16_supported, is_tf32_supported,
               set_per_process_memory_fraction, get_per_process_memory_fraction, get_arch_list, manual_seed_all,
               is_emulated):
        fn.__module__ = "torchplug.cuda"
        setattr(mod, fn.__name__, fn)
    mod.from_dlpack = from_dlpack
    mod.to_dlpack = to_dlpack
    mod.__all__ = sorted({*generic.__all__, *CUDA_EXTRAS})
    mod.device_type = "cuda"
    return mod
