"""``torchplug.backends.mkldnn``: PyTorch's oneDNN switches.

torchplug's host kernels run on NumPy and its BLAS, not oneDNN, so :func:`is_available` is False;
``enabled`` is settable and checked as in PyTorch and has no effect.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from torchplug.backends._flags import BoolFlag, flag_context, install

__all__ = ["is_available", "flags", "enabled", "deterministic"]

_state: dict[str, Any] = {"enabled": True, "deterministic": False}


def is_available() -> bool:
    """False: no torchplug backend uses oneDNN (MKL-DNN)."""
    return False


def flags(enabled: bool | None = False, deterministic: bool | None = False) -> AbstractContextManager[None]:
    """Set ``enabled``/``deterministic`` inside a ``with`` block and restore them after (PyTorch's defaults: off)."""
    return flag_context(sys.modules[__name__], enabled=enabled, deterministic=deterministic)


install(
    __name__,
    enabled=BoolFlag(_state, "enabled", "set_enabled_mkldnn"),
    deterministic=BoolFlag(_state, "deterministic", "set_deterministic_mkldnn"),
)
