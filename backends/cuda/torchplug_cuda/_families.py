"""The two instantiations of the shared cpu kernels: ``emulate`` (NumPy) and ``cupy`` (the GPU).

Both run the cpu kernel modules' code through :class:`torchplug_cuda._loader.KernelFamily`
with the family's own ``_common`` bound to the cuda device.  They differ only in the array
namespace (NumPy vs :mod:`torchplug_cuda._xp`, a CuPy-backed NumPy-compatible namespace) and in
the CuPy overrides (:mod:`torchplug_cuda._overrides`), the complete list of places where the
cpu code's semantics do not carry over to device arrays.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from typing import Any

from . import _matmul_precision, _runtime, _state
from ._loader import KernelFamily

__all__ = ["family", "bind_device", "run_on_device"]

_FAMILIES: dict[str, KernelFamily] = {}
_lock = threading.Lock()


def _bind_common(common: types.ModuleType) -> None:
    # The cpu helpers stamp ``CPU``/``KEYSET``/``STATS`` on every result; here they mean the cuda
    # device the guard binds before each call (device 0 until then).
    common.CPU = _state.device(0)
    common.KEYSET = _state.KEYSET
    common.STATS = _state.stats(0)


def family(mode: str) -> KernelFamily:
    """The kernel family of ``mode`` ('emulate' or 'cupy'), created once."""
    found = _FAMILIES.get(mode)
    if found is not None:
        return found
    with _lock:
        found = _FAMILIES.get(mode)
        if found is None:
            if mode == "emulate":
                # NumPy itself: the emulated device's arrays are host arrays.
                found = KernelFamily("cuda-emulated", {}, common_hook=_bind_common)
                _matmul_precision.install("emulate")
            elif mode == "cupy":
                from . import _overrides, _xp

                # Before the first device allocation: CuPy's allocations go through our pool from here on.
                _state.BACKEND.allocator.install_cupy()
                found = KernelFamily("cuda-cupy", _xp.namespaces(), overrides=_overrides.OVERRIDES,
                                     common_hook=_bind_common)
                from cupy._core import _routines_linalg

                from . import _bfloat16

                _bfloat16.probe(_runtime.cupy())  # whether bfloat16 tensors may exist on the device

                # float32 products: TF32 / bfloat16 tensor cores per torchplug.set_float32_matmul_precision
                _matmul_precision.install("cupy", _routines_linalg)
            else:
                raise ValueError(f"unknown cuda kernel family {mode!r}")
            _FAMILIES[mode] = found
    return found


def bind_device(mode: str | None, index: int) -> None:
    """Make the family's results land on cuda device ``index`` (a no-op when it already does)."""
    common = family(mode or "").common()
    dev = _state.device(index)
    if common.CPU is not dev:
        common.CPU = dev
        common.STATS = _state.stats(index)
        common.KEYSET = _state.KEYSET


def run_on_device(index: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call ``fn(*args)`` with CuPy's current device ``index`` and the thread's current stream."""
    from torchplug._runtime.streams import current_stream_if_set

    from ._runtime import cupy

    cp = cupy()
    stream = current_stream_if_set(_state.device(index))
    with cp.cuda.Device(index):
        if stream is None:
            return fn(*args)
        with stream.native:
            return fn(*args)
