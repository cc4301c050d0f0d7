"""``torchplug.backends.cudnn``: PyTorch's cuDNN switches.

torchplug's backends use no cuDNN, so :func:`is_available` is False and :func:`version` None;
the flags are settable and checked as in PyTorch and have no effect.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from torchplug.backends._flags import BoolFlag, Flag, flag_context, install

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark", "deterministic",
           "allow_tf32", "benchmark_limit"]

_state: dict[str, Any] = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True,
                          "benchmark_limit": 10}


def is_available() -> bool:
    """False: no torchplug backend computes with cuDNN."""
    return False


def version() -> int | None:
    """The cuDNN version in use: None, as no torchplug backend loads cuDNN."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN would run ops on ``tensor``: never here."""
    return False


def flags(enabled: bool | None = None, benchmark: bool | None = None, benchmark_limit: int | None = None,
          deterministic: bool | None = None, allow_tf32: bool | None = None) -> AbstractContextManager[None]:
    """Set the given flags inside a ``with`` block and restore them after (None: unchanged)."""
    return flag_context(sys.modules[__name__], enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                        deterministic=deterministic, allow_tf32=allow_tf32)


def _set_limit(value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuntimeError(f"set_benchmark_limit_cudnn expects an int, but got {type(value).__name__}")
    _state["benchmark_limit"] = value


install(
    __name__,
    enabled=BoolFlag(_state, "enabled", "set_enabled_cudnn"),
    benchmark=BoolFlag(_state, "benchmark", "set_benchmark_cudnn"),
    deterministic=BoolFlag(_state, "deterministic", "set_deterministic_cudnn"),
    allow_tf32=BoolFlag(_state, "allow_tf32", "set_allow_tf32_cudnn"),
    benchmark_limit=Flag(lambda: _state["benchmark_limit"], _set_limit),
)
