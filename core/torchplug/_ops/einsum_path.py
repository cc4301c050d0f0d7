"""How ``torchplug.einsum`` orders the contractions of 3+ operands: the ``opt_einsum`` settings.

The op layer reads them here; :mod:`torchplug.backends.opt_einsum` is their public face (the
settable ``enabled`` and ``strategy`` flags).
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["get_opt_einsum", "is_available", "path_strategy"]

_STRATEGIES = ("auto", "greedy", "optimal")


@functools.cache
def get_opt_einsum() -> Any:
    """The ``opt_einsum`` package, or None when it is not installed."""
    try:
        import opt_einsum
    except ImportError:
        return None
    return opt_einsum


def is_available() -> bool:
    """Whether the ``opt_einsum`` package is installed."""
    return get_opt_einsum() is not None


_state: dict[str, Any] = {"enabled": None, "strategy": None}  # filled on first read (importing opt_einsum)


def _enabled() -> bool:
    if _state["enabled"] is None:
        _state["enabled"] = is_available()
        _state["strategy"] = "auto" if is_available() else None
    return _state["enabled"]


def _set_enabled(value: Any) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"set_enabled_opt_einsum expects a bool, but got {type(value).__name__}")
    if value and not is_available():
        raise ValueError(f"opt_einsum is not available, so setting `enabled` to {value} will not reap the benefits of "
                         "calculating an optimal path for einsum. torchplug.einsum will fall back to contracting from "
                         "left to right. To enable this optimal path calculation, please install opt-einsum.")
    _enabled()
    _state["enabled"] = value


def _strategy() -> str | None:
    _enabled()
    return _state["strategy"]


def _set_strategy(value: Any) -> None:
    if not is_available():
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful. "
                         "torchplug.einsum will bypass path calculation and simply contract from left to right. "
                         "Please install opt_einsum or unset `strategy`.")
    if not _enabled():
        raise ValueError(f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. "
                         "torchplug.einsum will bypass path calculation and simply contract from left to right. "
                         "Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in _STRATEGIES:
        raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")
    _state["strategy"] = value


def path_strategy() -> str | None:
    """What einsum passes to ``opt_einsum.contract_path`` as ``optimize``; None: left to right."""
    return _strategy() if _enabled() else None
