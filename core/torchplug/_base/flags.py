"""Process-wide numerics settings: float32 matmul precision and deterministic algorithms.

``torchplug.set_float32_matmul_precision`` and ``torchplug.backends.cuda.matmul.allow_tf32`` are
two views of one setting, as in PyTorch ('high'/'medium' mean TF32 allowed).  The settings are
process-global (not thread-local), like PyTorch's.  torchplug's host kernels compute float32
products in float32 whatever the precision; a backend whose hardware has a faster reduced
precision reads :func:`get_float32_matmul_precision` or subscribes with :func:`on_change`.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

__all__ = [
    "get_fill_uninitialized_memory", "set_fill_uninitialized_memory",
    "set_float32_matmul_precision", "get_float32_matmul_precision", "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "get_deterministic_debug_mode", "on_change", "SDP_ENABLED",
]

_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"
_deterministic = False
_warn_only = False
_fill_uninitialized_memory = True  # torchplug.utils.deterministic.fill_uninitialized_memory
_listeners: list[Callable[[str, Any], None]] = []
# The scaled-dot-product-attention backends allowed (PyTorch's global ``torch._C._set_sdp_use_*`` flags): set by
# ``torchplug.backends.cuda.enable_*_sdp`` and ``torchplug.nn.attention.sdpa_kernel``, read by
# ``F.scaled_dot_product_attention``, which runs the math kernel or refuses as PyTorch does with no usable backend.
SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}


def on_change(callback: Callable[[str, Any], None]) -> Callable[[], None]:
    """Call ``callback(name, value)`` after a setting changes (``'float32_matmul_precision'``,
    ``'deterministic_algorithms'``); returns a function that unsubscribes."""
    _listeners.append(callback)
    return lambda: _listeners.remove(callback) if callback in _listeners else None


def _changed(name: str, value: Any) -> None:
    for callback in list(_listeners):
        callback(name, value)


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matrix products: ``'highest'`` (default), ``'high'``
    or ``'medium'`` (the latter two allow TF32 on GPUs that have it).  Another string warns and
    changes nothing, as in PyTorch."""
    global _matmul_precision
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision = precision
    _changed("float32_matmul_precision", precision)


def get_float32_matmul_precision() -> str:
    """The current float32 matmul precision: ``'highest'``, ``'high'`` or ``'medium'``."""
    return _matmul_precision


def _require_bool(value: Any, what: str) -> None:
    if not isinstance(value, builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument '{what} must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms.  torchplug's host kernels are deterministic already, so
    this records the setting (read by :func:`are_deterministic_algorithms_enabled` and by
    backends that have nondeterministic kernels); while it is on, ``empty`` and friends fill
    uninitialized memory as PyTorch does (see ``torchplug.utils.deterministic``)."""
    global _deterministic, _warn_only
    _require_bool(mode, "mode' (position 1)")
    _require_bool(warn_only, "warn_only'")
    _deterministic, _warn_only = mode, warn_only
    _changed("deterministic_algorithms", (mode, warn_only))


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` turned determinism on."""
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether determinism is on with ``warn_only=True``."""
    return _warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    """``'default'``/0: determinism off; ``'warn'``/1: on, warn only; ``'error'``/2: on."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn only) or 2 (error), from the current setting."""
    if not _deterministic:
        return 0
    return 1 if _warn_only else 2


def get_fill_uninitialized_memory() -> bool:
    """Whether deterministic mode fills uninitialized memory (``torch.utils.deterministic.fill_uninitialized_memory``)."""
    return _fill_uninitialized_memory


def set_fill_uninitialized_memory(value: bool) -> None:
    """Set :func:`get_fill_uninitialized_memory` (a bool, as PyTorch checks)."""
    global _fill_uninitialized_memory
    if not isinstance(value, bool):
        raise TypeError(f"expected a bool, but got {type(value).__name__}")
    _fill_uninitialized_memory = value
