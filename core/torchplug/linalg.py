"""``torchplug.linalg``: PyTorch's linear-algebra namespace (decompositions, solvers, norms) over the aten table.

The functions are the op layer's (:mod:`torchplug._ops.linalg`); this module is their public face.
"""

from __future__ import annotations

from typing import Any

from torchplug._ops import linalg as _impl
from torchplug._ops import linalg_more as _more
from torchplug._ops.linalg import *  # noqa: F403
from torchplug._ops.linalg_more import *  # noqa: F403

__all__ = list(_impl.__all__) + list(_more.__all__)

from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402


def _from_impl(name: str) -> Any:
    try:
        return getattr(_impl, name)  # names the op layer adds after import (torch.linalg.lu_factor, ...)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


# a name PyTorch has and torchplug lacks raises "not supported yet" (see docs/compat.md)
__getattr__ = _fallback_getattr("torch.linalg", __name__, _from_impl)
