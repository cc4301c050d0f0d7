"""Shared helpers for cpu kernels: wrapping arrays as tensors, dtype promotion, scalars."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug import _dtype as D
from torchplug._tensor import Storage, Tensor, make_tensor

__all__ = ["wrap", "wrap_view", "result_dtype", "np_dtype", "operand", "storage_offset", "CPU"]

pending_backend: Any = None
CPU: Any = None  # torchplug.device('cpu'), set when the backend registers
KEYSET = 0

NP_TO_DTYPE = {np.dtype(d.numpy_dtype): d for d in D.ALL_DTYPES}
_new = object.__new__
_ndarray = np.ndarray


def bind_backend(backend: Any) -> None:
    """Called after registration: remember the device and key set kernels stamp on results."""
    global CPU, KEYSET
    from torchplug import device

    CPU = device(backend.device_type)
    KEYSET = backend.keyset


def wrap(arr: Any) -> Tensor:
    """A fresh cpu tensor owning ``arr`` (NumPy scalars become 0-dim arrays)."""
    if arr.__class__ is not _ndarray:
        arr = np.asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._dtype = NP_TO_DTYPE[arr.dtype]
    t._device = CPU
    t._keyset = KEYSET
    t._storage = Storage(arr.nbytes, CPU, arr)
    t._base = None
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._autograd_meta = None
    return t


def wrap_view(arr: np.ndarray, src: Tensor) -> Tensor:
    """A cpu tensor viewing ``src``'s storage (shares version counter; ``_base`` set)."""
    t = make_tensor(arr, NP_TO_DTYPE[arr.dtype], CPU, KEYSET, src._storage)
    t._base = src._base if src._base is not None else src
    return t


def storage_offset(t: Tensor) -> int:
    root = t._storage.data
    if root is None:
        return 0
    start = t._data.__array_interface__["data"][0]
    base = root.__array_interface__["data"][0]
    return (start - base) // t._dtype.itemsize


def np_dtype(dtype: D.dtype) -> np.dtype:
    return dtype.numpy_dtype


_SCALAR_TYPES = (bool, int, float, complex)


def result_dtype(*operands: Any) -> D.dtype:
    """PyTorch's promotion over tensors and Python numbers (fast path: equal tensor dtypes)."""
    dims: list[D.dtype] = []
    zeros: list[D.dtype] = []
    scalars: list[type] = []
    for o in operands:
        if isinstance(o, Tensor):
            (dims if o._data.ndim else zeros).append(o._dtype)
        elif o is not None:
            if isinstance(o, np.generic):
                o = o.item()
            scalars.append(type(o) if type(o) in _SCALAR_TYPES else float)
    return D._result_type_parts(tuple(dims), tuple(zeros), tuple(scalars))


def operand(x: Any, npdt: np.dtype) -> Any:
    """The NumPy operand for a tensor or Python number, cast to ``npdt`` when needed."""
    if isinstance(x, Tensor):
        data = x._data
        return data if data.dtype == npdt else data.astype(npdt)
    # A Python number: an array of the computation dtype, so out-of-range ints wrap like PyTorch's.
    return np.array(x).astype(npdt) if not isinstance(x, float) or npdt.kind not in "fc" else np.asarray(x, dtype=npdt)
