"""A NumPy-compatible namespace on CuPy, bound to ``np`` in the shared cpu kernels on a GPU.

Names resolve to CuPy first and to NumPy second: dtypes, ``iinfo``/``finfo``, exception types
and shape helpers (``broadcast_shapes``, ``ndindex``) are host concepts CuPy re-exports or
lacks.  A NumPy *function* reached through the fallback on a device array fails with CuPy's
"Implicit conversion to a NumPy array is not allowed": that names an op without a device kernel
rather than silently copying to the host.

Only ``copyto`` is replaced, because the cpu ``copy_`` kernel moves data between devices with
it (``tensor.to('cuda')``, ``.cpu()``): it accepts any mix of host and device arrays.
"""

from __future__ import annotations

import types
from typing import Any

import numpy

__all__ = ["namespaces", "XP"]


class _Namespace(types.ModuleType):
    """CuPy, then NumPy (results cached in the instance dict: lookups after the first are plain)."""

    def __init__(self, name: str, primary: Any, fallback: Any) -> None:
        super().__init__(name)
        self._primary = primary
        self._fallback = fallback

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(self._primary, attr, _MISSING)
        if value is _MISSING:
            value = getattr(self._fallback, attr)
        elif isinstance(value, types.ModuleType) and isinstance(getattr(self._fallback, attr, None), types.ModuleType):
            value = _Namespace(f"{self.__name__}.{attr}", value, getattr(self._fallback, attr))
        setattr(self, attr, value)
        return value


_MISSING = object()
XP: Any = None


def _copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``np.copyto`` for any mix of host (NumPy) and device (CuPy) arrays."""
    import cupy as cp

    if isinstance(dst, numpy.ndarray):
        if isinstance(src, cp.ndarray):
            src = src.get()  # device -> host (synchronous on the current stream)
        numpy.copyto(dst, src, casting=casting, where=where)
        return
    if isinstance(src, numpy.ndarray) or isinstance(src, numpy.generic):
        src = cp.asarray(src)  # host -> device
    elif isinstance(src, cp.ndarray) and src.device.id != dst.device.id:
        with cp.cuda.Device(dst.device.id):
            src = cp.array(src, copy=True)  # device -> device (peer copy)
    if where is True:
        cp.copyto(dst, src, casting=casting)
    else:
        cp.copyto(dst, src, casting=casting, where=cp.asarray(where))


def namespaces() -> dict[str, Any]:
    """The module replacements for the CuPy kernel family (``numpy``, its stride tricks, scipy)."""
    global XP
    import cupy as cp
    import cupyx.scipy.fft as cpx_fft
    import cupyx.scipy.special as cpx_special

    if XP is None:
        XP = _Namespace("torchplug_cuda.xp", cp, numpy)
        XP.copyto = _copyto
        XP.ndarray = cp.ndarray  # the cpu code's isinstance/__class__ checks must see device arrays
    stride_tricks = XP.lib.stride_tricks
    scipy_ns = types.ModuleType("torchplug_cuda.xp_scipy")
    scipy_ns.special = cpx_special  # type: ignore[attr-defined]
    scipy_ns.fft = cpx_fft  # type: ignore[attr-defined]  (cuFFT for the FFT kernels)
    return {
        "numpy": XP,
        "numpy.lib.stride_tricks": stride_tricks,
        "scipy": scipy_ns,
        "scipy.special": cpx_special,
        "scipy.fft": cpx_fft,
    }
