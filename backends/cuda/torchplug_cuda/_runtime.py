"""The cuda runtime: which mode the device runs in, device count/selection, and why it is unavailable.

Modes (decided at each use, so tests may switch emulation on and off):

- ``"emulate"`` when ``TORCHPLUG_CUDA_EMULATE`` is ``1`` (or a device count such as ``2``): the
  backend's kernels run on host NumPy arrays.  This exercises the kernel loader, device
  selection, allocator and stream wiring in CI; it is *not* GPU verification.
- ``"cupy"`` when CuPy imports and finds at least one CUDA device.
- ``None`` otherwise: the device is unavailable and every use raises with the reason.

CuPy is imported only here, lazily, the first time availability is asked (never at
``import torchplug`` or at plugin discovery), and the probe's answer is cached like PyTorch's
device count.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = [
    "EMULATE_VAR", "emulated_device_count", "mode", "cupy", "probe", "CUDARuntime", "unavailable_message",
    "NO_DEVICE", "EMULATED_NAME", "EMULATED_TOTAL_MEMORY",
]

EMULATE_VAR = "TORCHPLUG_CUDA_EMULATE"
NO_DEVICE = "no CUDA device was found"
EMULATED_NAME = "CUDA (emulated on NumPy)"
EMULATED_TOTAL_MEMORY = 16 << 30  # what mem_get_info/get_device_properties report when emulating

_probe_lock = threading.Lock()
_probed: tuple[Any, str] | None = None  # (cupy module or None, reason it is unusable)


def emulated_device_count() -> int:
    """0 unless emulating; ``TORCHPLUG_CUDA_EMULATE=1`` (or ``true``) is one device, ``=N`` N devices."""
    value = os.environ.get(EMULATE_VAR, "")
    if value in ("true", "True"):
        return 1
    try:
        return max(int(value), 0) if value else 0
    except ValueError:
        return 0


def probe() -> tuple[Any, str]:
    """(cupy, '') when CuPy imports and sees a CUDA device, else (None, why); cached."""
    global _probed
    if _probed is not None:
        return _probed
    with _probe_lock:
        if _probed is None:
            _probed = _probe()
    return _probed


def _probe() -> tuple[Any, str]:
    try:
        import cupy as cp
    except ImportError as exc:
        from torchplug._runtime.backends import install_command

        return None, (f"{NO_DEVICE}: CuPy is not installed ({exc}). Install the backend with the extra matching "
                      f"your CUDA major version: {install_command('cuda', 'cuda12')} (or [cuda13])")
    except Exception as exc:  # noqa: BLE001 - a broken CuPy must not break torchplug
        return None, f"{NO_DEVICE}: CuPy failed to import ({type(exc).__name__}: {exc})"
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CUDARuntimeError without a driver, among others
        return None, (f"{NO_DEVICE}: the CUDA runtime reports {type(exc).__name__}: {exc}. Check that this machine "
                      "has an NVIDIA GPU and a driver (nvidia-smi)")
    if count <= 0:
        return None, f"{NO_DEVICE}: cudaGetDeviceCount returned 0"
    return cp, ""


def _reset_probe_for_tests() -> None:
    global _probed
    _probed = None


def mode() -> str | None:
    """``'emulate'``, ``'cupy'`` or None (unavailable)."""
    if emulated_device_count():
        return "emulate"
    return "cupy" if probe()[0] is not None else None


def cupy() -> Any:
    """The CuPy module (the device must be available in cupy mode)."""
    cp = probe()[0]
    if cp is None:
        raise RuntimeError(unavailable_message())
    return cp


def _reason() -> str:
    from torchplug._runtime.backends import registered_backends

    if emulated_device_count() and "cpu" not in registered_backends():
        return (f"{EMULATE_VAR} runs the cuda backend's shared kernels on NumPy, but the cpu backend "
                "(torchplug-cpu) is not registered (blocked or not installed)")
    if emulated_device_count():
        return ""
    why = probe()[1]
    return (f"{why}. To test the backend without a GPU, set {EMULATE_VAR}=1 (runs its kernels on NumPy; "
            "not GPU verification)")


def unavailable_message() -> str:
    return f"The 'cuda' device is not available: {_reason()}."


class _Current(threading.local):
    index = 0  # cudaSetDevice is per host thread; so is torch.cuda.current_device()


class CUDARuntime:
    """Devices of the cuda type: CuPy's, or the emulated ones."""

    def __init__(self) -> None:
        self._current = _Current()
        self._initialized = False

    def is_available(self) -> bool:
        if emulated_device_count():
            from torchplug._runtime.backends import registered_backends

            return "cpu" in registered_backends()
        return probe()[0] is not None

    def unavailable_reason(self) -> str:
        return _reason()

    def device_count(self) -> int:
        n = emulated_device_count()
        if n:
            return n if self.is_available() else 0
        cp = probe()[0]
        return int(cp.cuda.runtime.getDeviceCount()) if cp is not None else 0

    def current_device(self) -> int:
        return self._current.index

    def _check_index(self, index: int) -> None:
        n = self.device_count()
        if not 0 <= index < n:
            raise RuntimeError(f"CUDA error: invalid device ordinal (device index {index}; this machine has {n} "
                               f"CUDA device{'s' if n != 1 else ''}, indices 0..{n - 1}).")

    def set_device(self, index: Any) -> None:
        if index is None:
            return
        index = int(index)
        if index < 0:
            return  # torch.cuda.set_device ignores negative indices
        self._check_index(index)
        self._current.index = index
        if mode() == "cupy":
            cupy().cuda.Device(index).use()

    def synchronize(self, index: int) -> None:
        if mode() == "cupy":
            cp = cupy()
            with cp.cuda.Device(index or 0):
                cp.cuda.Device().synchronize()

    def is_initialized(self) -> bool:
        return self._initialized or bool(emulated_device_count())

    def init(self) -> None:
        if not self.is_available():
            raise RuntimeError(unavailable_message())
        self._initialized = True

    def get_device_name(self, index: int) -> str:
        return device_properties(index or 0)["name"]

    def amp_supported_dtypes(self) -> list[Any]:
        from torchplug._base import dtype as D

        return [D.float16, D.bfloat16]


def device_properties(index: int) -> dict[str, Any]:
    """Name, capability, memory and multiprocessor count of device ``index``."""
    if mode() == "emulate":
        return {"name": EMULATED_NAME, "major": 8, "minor": 0, "total_memory": EMULATED_TOTAL_MEMORY,
                "multi_processor_count": 1, "uuid": f"emulated-{index}", "is_integrated": False}
    cp = cupy()
    props = cp.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "major": int(props["major"]), "minor": int(props["minor"]),
        "total_memory": int(props["totalGlobalMem"]),
        "multi_processor_count": int(props["multiProcessorCount"]),
        "uuid": str(props.get("uuid", "")), "is_integrated": bool(props.get("integrated", 0)),
    }
