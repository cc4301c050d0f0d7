"""Page-locked host memory for ``Tensor.pin_memory()`` (the backend's ``host_pinning``).

On a GPU the copy lives in CuPy's pinned memory pool (installed by the allocator), so
``to('cuda', non_blocking=True)`` can copy asynchronously; under emulation it is an ordinary
host copy marked as pinned.  Pinned roots are remembered weakly: ``is_pinned`` follows a
tensor's root array.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import _runtime

__all__ = ["HostPinning"]


class HostPinning:
    """``pin(array)`` copies into page-locked memory; ``is_pinned(array)`` asks about its root."""

    def __init__(self) -> None:
        # id(root) -> weak reference (ndarrays are unhashable; the callback forgets dead roots)
        self._pinned: dict[int, weakref.ref[np.ndarray]] = {}

    def pin(self, array: np.ndarray) -> np.ndarray:
        mode = _runtime.mode()
        if mode is None:
            raise RuntimeError(_runtime.unavailable_message())
        if mode == "emulate":
            out = np.array(array, copy=True, order="C")
        else:
            cp = _runtime.cupy()
            memory = cp.cuda.alloc_pinned_memory(max(array.nbytes, 1))
            # the ndarray keeps ``memory`` (a buffer) alive; its pool block returns when both die
            out = np.frombuffer(memory, array.dtype, array.size).reshape(array.shape)
            out[...] = array
        key = id(out)
        self._pinned[key] = weakref.ref(out, lambda _, key=key: self._pinned.pop(key, None))
        return out

    def is_pinned(self, array: Any) -> bool:
        while isinstance(array, np.ndarray):
            ref = self._pinned.get(id(array))
            if ref is not None and ref() is array:
                return True
            array = array.base
        return False
