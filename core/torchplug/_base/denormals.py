"""``torchplug.set_flush_denormal``: flush denormal floats to zero in the host kernels, as PyTorch does on x86.

PyTorch sets the FTZ (flush to zero) and DAZ (denormals are zero) bits of the SSE control register MXCSR of
the calling thread.  Python cannot reach MXCSR directly; on x86-64 with glibc its ``fenv_t`` holds MXCSR and
``fesetenv`` loads it, so the bits are set through libm with ctypes.  NumPy runs its loops on the calling
thread, so the host kernels called from that thread flush denormals afterwards; threads a BLAS library starts
keep their own register (PyTorch's setting is per thread as well).  Elsewhere (another CPU or C library) the
function changes nothing and returns False, as PyTorch does on CPUs without the mode.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from typing import Any

__all__ = ["set_flush_denormal"]

_FTZ, _DAZ = 0x8000, 0x0040  # MXCSR bits 15 and 6


class _FenvT(ctypes.Structure):
    """glibc's x86-64 ``fenv_t``: the 28-byte x87 environment, then MXCSR."""

    _fields_ = [("x87", ctypes.c_uint32 * 7), ("mxcsr", ctypes.c_uint32)]


_LIBM: Any = None


def _libm() -> Any:
    """glibc's libm on x86-64, else None (the only layout of ``fenv_t`` known to carry MXCSR here)."""
    global _LIBM
    if _LIBM is None:
        _LIBM = False
        if platform.machine().lower() in ("x86_64", "amd64") and platform.libc_ver()[0] == "glibc":
            name = ctypes.util.find_library("m")
            if name is not None:
                try:
                    _LIBM = ctypes.CDLL(name)
                except OSError:
                    _LIBM = False
    return _LIBM or None


def set_flush_denormal(mode: bool) -> bool:
    """Enable (``True``) or disable flushing denormal floats to zero on this thread's host computations.

    Returns True when the CPU and C library let torchplug set the mode (x86-64 with glibc), else False."""
    if mode.__class__ is not bool:
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    libm = _libm()
    if libm is None:
        return False
    env = _FenvT()
    if libm.fegetenv(ctypes.byref(env)) != 0:
        return False
    env.mxcsr = (env.mxcsr | _FTZ | _DAZ) if mode else (env.mxcsr & ~(_FTZ | _DAZ))
    return libm.fesetenv(ctypes.byref(env)) == 0
