"""The optional C kernels of the cpu backend (``torchplug_cpu._ckernels``), or None.

``setup.py`` builds them where a C compiler exists; every caller keeps its NumPy version as
the fallback, and ``TORCHPLUG_PURE_PYTHON=1`` forces that fallback (as it does for the core's
C fast path).  The kernels take C-contiguous float32/float64 buffers.  Kernel modules reach them
as ``_common.ckernels``, which is None where the helpers serve a non-NumPy array library.
"""

from __future__ import annotations

import importlib
from typing import Any

from torchplug._base.env import pure_python

__all__ = ["ckernels", "cquick"]


def _load(name: str = "torchplug_cpu._ckernels") -> Any:
    if pure_python():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:  # not built (no compiler at install time): NumPy versions are used
        return None


ckernels = _load()
cquick = _load("torchplug_cpu._cquick")  # the hottest small kernels without Python frames (pointwise.py)

