"""``torch.from_file``: a cpu tensor whose storage is a memory-mapped file (NumPy's ``memmap``)."""

from __future__ import annotations

import os
from typing import Any

from torchplug._base import dtype as D
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "from_file"]


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None, layout: Any = None,
              device: Any = None, pin_memory: bool = False) -> Tensor:
    """A 1-D cpu tensor of ``size`` elements of ``dtype`` mapped from ``filename``.  ``shared=True`` maps it
    shared (writes reach the file, which is created or grown as needed); otherwise copy-on-write (the file must
    hold ``size`` elements and never changes)."""
    from torchplug._runtime.device import device as _device
    from torchplug._tensor.creation import empty, from_numpy

    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    dtype = D.get_default_dtype() if dtype is None else dtype
    if device is not None and _device(device).type != "cpu":
        raise NotImplementedError(f"aten::from_file: only cpu tensors can be mapped to files, not {device} ones")
    if pin_memory:
        raise RuntimeError("from_file: tensors backed by a memory-mapped file cannot be created in pinned memory")
    if size < 0:
        raise RuntimeError(f"unable to mmap {size * dtype.itemsize} bytes from file <{filename}>: size must be "
                           "non-negative")
    nbytes = size * dtype.itemsize
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
            with open(filename, "ab") as f:  # created if needed, grown to the mapping's size
                f.truncate(nbytes)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or directory (2)")
    elif os.path.getsize(filename) < nbytes:
        raise RuntimeError(f"file <{filename}> size <{os.path.getsize(filename)}> is smaller than the required "
                           f"mapping size <{nbytes}>")
    if size == 0:  # NumPy cannot map zero bytes
        return empty((0,), dtype=dtype)
    import numpy as np

    mapped = np.memmap(filename, dtype=dtype.numpy_dtype, mode="r+" if shared else "c", shape=(size,))
    return from_numpy(mapped)


FUNCTIONS: dict[str, Any] = {"from_file": from_file}
METHODS: dict[str, Any] = {}
