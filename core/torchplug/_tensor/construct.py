"""``new_tensor(data, dtype, device, keyset, stats, nbytes)``: a Tensor owning a fresh, accounted buffer;
``new_view(data, dtype, device, keyset, storage, base)``: a Tensor sharing ``storage`` (views, aliases).

Every op's result is made here (through a backend's ``wrap``), so it is the hottest function in
torchplug.  It uses the optional C implementation in :mod:`torchplug._tensor._fastpath` when that was
built (setup.py compiles it where a C compiler exists) and the identical Python steps otherwise;
``TORCHPLUG_PURE_PYTHON=1`` forces the Python version.  Both fill the same slots and make the same
allocator-counter updates as ``TrackedStorage`` (whose ``__del__`` the C module also provides).
"""

from __future__ import annotations

import importlib
from typing import Any

from torchplug._base.env import pure_python
from torchplug._runtime.allocator import DeviceStats, TrackedStorage
from torchplug._tensor.tensor import Tensor, make_tensor

__all__ = ["new_tensor", "new_view", "ACCELERATED"]

def _new_tensor_py(data: Any, dtype: Any, dev: Any, keyset: int, stats: DeviceStats, nbytes: int) -> Tensor:
    return make_tensor(data, dtype, dev, keyset, TrackedStorage(nbytes, dev, data, stats))


def _new_view_py(data: Any, dtype: Any, dev: Any, keyset: int, storage: Any, base: Any) -> Tensor:
    t = make_tensor(data, dtype, dev, keyset, storage)
    t._base = base
    return t


def _load() -> Any:
    if pure_python():
        return None
    try:
        # import_module, not ``from . import``: that probes torchplug.__getattr__ first, which
        # would load every plugin while this module (which autograd imports) is half made.
        _fastpath = importlib.import_module("torchplug._tensor._fastpath")
    except ImportError:  # not built (no compiler at install time): the Python version is used
        return None
    _fastpath.configure(Tensor, TrackedStorage, DeviceStats)
    return _fastpath


_accelerated = _load()
ACCELERATED = _accelerated is not None
new_tensor = _accelerated.new_tensor if _accelerated is not None else _new_tensor_py
new_view = _accelerated.new_view if _accelerated is not None else _new_view_py
