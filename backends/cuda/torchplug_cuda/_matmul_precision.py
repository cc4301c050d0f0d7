"""``torchplug.set_float32_matmul_precision`` / ``backends.cuda.matmul.allow_tf32`` on the GPU.

PyTorch's 'high' lets cuBLAS compute float32 products with TF32 tensor cores and 'medium' with
bfloat16 ones; 'highest' keeps full float32.  CuPy picks the cuBLAS compute type per dtype
(``cupy._core._routines_linalg.set_compute_type``), so the CuPy family applies the mapped type for
float32 when it is created and again on every change of the setting.  The emulated family (NumPy)
computes in float32 whatever the setting; it records the same choice, which is what its tests check.
"""

from __future__ import annotations

from typing import Any

from torchplug._base.flags import get_float32_matmul_precision, on_change

__all__ = ["COMPUTE_TYPES", "float32_compute_type", "applied", "install"]

# torch's precision -> CuPy's compute type name (cupy._core._routines_linalg.COMPUTE_TYPE_*)
COMPUTE_TYPES = {"highest": "COMPUTE_TYPE_DEFAULT", "high": "COMPUTE_TYPE_TF32", "medium": "COMPUTE_TYPE_BF16"}

_applied: dict[str, str] = {}  # family mode -> the compute type last applied to its float32 matmuls
_subscribed: set[str] = set()


def float32_compute_type(precision: str | None = None) -> str:
    """The CuPy compute type for float32 products under ``precision`` (default: the current setting)."""
    return COMPUTE_TYPES[precision or get_float32_matmul_precision()]


def applied(mode: str) -> str | None:
    """The compute type the ``mode`` family ('cupy' or 'emulate') uses now for float32 matmuls."""
    return _applied.get(mode)


def _apply(mode: str, linalg: Any, precision: str | None = None) -> None:
    name = float32_compute_type(precision)
    if linalg is not None:
        import numpy as np

        linalg.set_compute_type(np.float32, getattr(linalg, name))
    _applied[mode] = name


def install(mode: str, linalg: Any = None) -> None:
    """Apply the current precision to family ``mode`` and follow later changes.

    ``linalg`` is CuPy's ``cupy._core._routines_linalg`` for the GPU family, None under emulation.
    """
    _apply(mode, linalg)
    if mode in _subscribed:
        return
    _subscribed.add(mode)

    def changed(name: str, value: Any) -> None:
        if name == "float32_matmul_precision":
            _apply(mode, linalg, value)

    on_change(changed)
