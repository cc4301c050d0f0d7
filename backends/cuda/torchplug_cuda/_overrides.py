"""Where the cpu kernels' code does not carry over to CuPy arrays: replacements for the CuPy family.

Every entry exists because the cpu code relies on a NumPy-only interface, not because the
semantics differ:

- raw addresses come from ``__array_interface__`` on the host and ``.data.ptr`` on the device
  (``_common.address_of``/``storage_offset``, ``core._byte_range``);
- NumPy's ``ndarray(shape, dtype, buffer, offset, strides)`` constructor becomes
  ``cupy.ndarray(shape, dtype, memptr, strides)`` (``core.fresh`` for empty results,
  ``views._array_at``, ``index.nonzero``'s transposed buffer).

The loader applies them right after each module runs, so sibling modules that import these
names get the replacements.  A name that disappears from the cpu module makes instantiation
fail loudly (see ``KernelFamily._apply_overrides``).
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

__all__ = ["OVERRIDES", "device_address"]


def device_address(arr: Any) -> int:
    """The device address of a CuPy array's first element (host address for NumPy arrays)."""
    if isinstance(arr, np.ndarray):  # (``.data`` of a NumPy array is a memoryview: no address)
        return int(arr.__array_interface__["data"][0])
    return int(arr.data.ptr)


def _common(mod: types.ModuleType) -> dict[str, Any]:
    def address_of(st: Any) -> int:
        data = st.data
        return device_address(data) if data is not None else 0

    def storage_offset(t: Any) -> int:
        root = t._storage.data
        if root is None:
            return 0
        return (device_address(t._data) - device_address(root)) // t._dtype.itemsize

    return {"address_of": address_of, "storage_offset": storage_offset}


def _core(mod: types.ModuleType) -> dict[str, Any]:
    import cupy as cp

    contiguous_strides = mod.contiguous_strides
    wrap = mod.C.wrap

    def fresh(arr: Any) -> Any:
        # CuPy, like NumPy, gives size-0 arrays zero strides; PyTorch's are contiguous.
        if arr.__class__ is cp.ndarray and arr.size == 0 and arr.ndim:
            arr = cp.ndarray(arr.shape, arr.dtype, strides=tuple(contiguous_strides(arr.shape, arr.itemsize)))
        return wrap(arr)

    def _byte_range(arr: Any) -> tuple[int, int]:
        start = device_address(arr)
        lo = hi = start
        for s, st in zip(arr.shape, arr.strides):
            if st < 0:
                lo += (s - 1) * st
            else:
                hi += (s - 1) * st
        return lo, hi + arr.itemsize

    return {"fresh": fresh, "_byte_range": _byte_range}


def _views(mod: types.ModuleType) -> dict[str, Any]:
    import cupy as cp

    def _array_at(buf: Any, byte_offset: int, shape: Any, npdt: Any, byte_strides: Any) -> Any:
        return cp.ndarray(tuple(shape), npdt, memptr=buf.data + byte_offset, strides=tuple(byte_strides))

    def restride(data: Any, shape: Any, byte_strides: Any) -> Any:
        return cp.ndarray(tuple(shape), data.dtype, memptr=data.data, strides=tuple(byte_strides))

    return {"_array_at": _array_at, "restride": restride}


def _index(mod: types.ModuleType) -> dict[str, Any]:
    import cupy as cp

    C = mod.C
    D = mod.D
    make_tensor = mod.make_tensor

    def nonzero(self: Any) -> Any:
        data = self._data
        n = data.ndim
        coords = cp.nonzero(data) if n else (cp.zeros(int(bool(data)), cp.int64),)
        count = int(coords[0].shape[0])
        buf = cp.empty(n * count, cp.int64)
        out = cp.ndarray((count, n), cp.int64, memptr=buf.data, strides=(8, 8 * count))
        for k in range(n):
            out[:, k] = coords[k]
        return make_tensor(out, D.int64, C.CPU, C.KEYSET, C.storage(buf))

    # The TABLE entry was registered by the decorator with the cpu function; point it here too.
    table = mod.TABLE
    table.kernels[:] = [(name, nonzero if fn is mod.nonzero else fn, key, ks) for name, fn, key, ks in table.kernels]
    return {"nonzero": nonzero}


OVERRIDES = {"_common": _common, "core": _core, "views": _views, "index": _index}
