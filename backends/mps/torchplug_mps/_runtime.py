"""The mps runtime: availability (emulation switch), one device, and why it is unavailable."""

from __future__ import annotations

import os
import platform
from typing import Any

__all__ = ["EMULATE_VAR", "emulating", "MPSRuntime", "unavailable_message", "FLOAT64_ERROR"]

EMULATE_VAR = "TORCHPLUG_MPS_EMULATE"
FLOAT64_ERROR = (
    "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
    "Please use float32 instead."
)


def emulating() -> bool:
    """True when ``TORCHPLUG_MPS_EMULATE=1`` (read at each use, so tests may switch it)."""
    return os.environ.get(EMULATE_VAR, "") in ("1", "true", "True")


def _why() -> str:
    from torchplug._runtime.backends import registered_backends

    if emulating() and "cpu" not in registered_backends():
        return ("TORCHPLUG_MPS_EMULATE=1 runs the mps device on the cpu backend's NumPy kernels, but the cpu "
                "backend (torchplug-cpu) is not registered (blocked or not installed)")
    system = platform.system()
    if system != "Darwin":
        return (f"this machine runs {system} ({platform.machine()}), which has no Metal framework; "
                f"set {EMULATE_VAR}=1 to emulate MPS on NumPy under MPS's limits")
    return (f"torchplug-mps is a stub without Metal kernels; set {EMULATE_VAR}=1 to emulate MPS on NumPy "
            "under MPS's limits")


def unavailable_message() -> str:
    return f"The 'mps' device is not available: {_why()}."


class MPSRuntime:
    """One mps device (index 0), usable only when emulating."""

    def is_available(self) -> bool:
        if not emulating():
            return False
        from torchplug._runtime.backends import registered_backends

        return "cpu" in registered_backends()

    def unavailable_reason(self) -> str:
        return _why()

    def device_count(self) -> int:
        return 1 if self.is_available() else 0

    def current_device(self) -> int:
        return 0

    def set_device(self, index: Any) -> None:
        if isinstance(index, int) and index > 0:
            raise RuntimeError(f"Invalid device index {index}: the mps device type has 1 device (index 0).")

    def synchronize(self, index: int) -> None:
        return None  # emulated kernels finish before they return

    def is_initialized(self) -> bool:
        return self.is_available()

    def get_device_name(self, index: int) -> str:
        return "MPS (emulated on NumPy)"

    def amp_supported_dtypes(self) -> list[Any]:
        from torchplug._base import dtype as D

        return [D.float16, D.bfloat16]
