"""Boolean switches read from the environment, parsed one way everywhere.

``TORCHPLUG_PURE_PYTHON`` turns the optional C modules off (the core's fast path, the cpu backend's
kernels and random stream).  Like PyTorch's ``c10::utils::check_env``, ``1`` means on and ``0`` off;
``true``/``false``, ``yes``/``no`` and ``on``/``off`` (any case) are read the same way, an empty or
unset variable is off, and any other value is ignored with a warning that names the accepted ones.
"""

from __future__ import annotations

import os
import warnings

__all__ = ["env_flag", "pure_python"]

_ON = frozenset(("1", "true", "yes", "on"))
_OFF = frozenset(("0", "false", "no", "off", ""))


def env_flag(name: str, default: bool = False) -> bool:
    """The boolean value of environment variable ``name``; ``default`` when unset or not a boolean."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    warnings.warn(f"Ignoring invalid value {raw!r} of boolean environment variable {name}: valid values are 0 or 1 "
                  f"(also true/false, yes/no, on/off); using the default ({int(default)})", stacklevel=2)
    return default


def pure_python() -> bool:
    """Whether ``TORCHPLUG_PURE_PYTHON`` asks for the Python versions instead of the C modules."""
    return env_flag("TORCHPLUG_PURE_PYTHON")
