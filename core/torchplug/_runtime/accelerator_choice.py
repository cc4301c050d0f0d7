"""Which registered accelerator is current, and why: the preference order and the choice rules that
:mod:`torchplug.accelerator`'s docstring states for users (the user's list, ``TORCHPLUG_ACCELERATOR``, the
backends' priorities; available first, then could-be-available on this platform)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from torchplug._base.upcalls import ensure_backends_loaded
from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, missing_backend_message, registered_backends

__all__ = ["ENV_VAR", "set_accelerator_priority", "get_accelerator_priority", "accelerators", "current_accelerator_choice",
           "current_accelerator_type", "require_accelerator_type", "no_accelerator_message"]

ENV_VAR = "TORCHPLUG_ACCELERATOR"
_user_priority: list[str] | None = None


def _registered() -> dict[str, Any]:
    ensure_backends_loaded()  # imports and registers the backends; initialises no device
    return registered_backends()


def set_accelerator_priority(device_types: Sequence[str] | None) -> None:
    """Prefer these accelerator device types, in order, over the backends' own priorities
    (``None`` restores the default, including ``TORCHPLUG_ACCELERATOR``)."""
    global _user_priority
    if device_types is None:
        _user_priority = None
        return
    if isinstance(device_types, str):
        device_types = [device_types]
    types = [str(t) for t in device_types]
    if any(not t for t in types):
        raise ValueError("set_accelerator_priority expects device type names, e.g. ['mps']")
    _user_priority = types


def get_accelerator_priority() -> list[str] | None:
    """The list set by :func:`set_accelerator_priority` (None when unset)."""
    return None if _user_priority is None else list(_user_priority)


def _preferred() -> list[str]:
    """The device types named by set_accelerator_priority, else by TORCHPLUG_ACCELERATOR."""
    if _user_priority is not None:
        return _user_priority
    env = os.environ.get(ENV_VAR, "")
    return [t.strip() for t in env.split(",") if t.strip()]


def _ordered() -> tuple[list[Any], int]:
    """Registered accelerator backends, most preferred first, and how many of them the user named."""
    backends = _registered()
    found = sorted((b for b in backends.values() if b.is_accelerator), key=lambda b: (-b.accelerator_priority, b.device_type))
    by_type = {b.device_type: b for b in found}
    head = [by_type[t] for t in dict.fromkeys(_preferred()) if t in by_type]
    return head + [b for b in found if b not in head], len(head)


def accelerators() -> list[str]:
    """Every registered accelerator device type, most preferred first (see the module docstring)."""
    return [b.device_type for b in _ordered()[0]]


def _available(backend: Any) -> bool:
    try:
        return bool(backend.runtime.is_available())
    except Exception:  # noqa: BLE001 - a broken driver means "not available"
        return False


def current_accelerator_choice() -> tuple[str | None, str]:
    """The current accelerator's device type (or None) and why it was chosen, in words."""
    order, named = _ordered()
    how = "set_accelerator_priority" if _user_priority is not None else ENV_VAR
    if named:
        chosen = next((b for b in order[:named] if _available(b)), None)
        if chosen is not None:
            return chosen.device_type, f"named by {how} and available"
        return order[0].device_type, f"named by {how} (not available)"
    for b in order:
        if _available(b):
            return b.device_type, "the most preferred available accelerator"
    for b in order:
        if b.could_be_available():
            return b.device_type, "none is available; the most preferred one that could be available on this system"
    if order:
        return None, f"none is available, and none could be on this system ({sys.platform})"
    return None, "no accelerator backend is registered"


def current_accelerator_type() -> str | None:
    """The current accelerator's device type, or None (the rule of the module docstring)."""
    return current_accelerator_choice()[0]


def no_accelerator_message() -> str:
    """Why there is no current accelerator: what is installed, and each registered accelerator's reason."""
    backends = _registered()
    installed = ", ".join(sorted(backends)) or "none"
    parts = [f"No accelerator is available (installed device types: {installed}; cpu and meta are not accelerators)."]
    for b in _ordered()[0]:
        reason = getattr(b.runtime, "unavailable_reason", None)
        why = reason() if reason is not None else ""
        if not why and not b.could_be_available():
            why = f"it exists only on {', '.join(b.platforms)}, and this system is {sys.platform}"
        parts.append(f"The {b.device_type!r} accelerator ({b.distribution or b.plugin or 'no distribution'}) is "
                     f"registered but not usable" + (f": {why}." if why else "."))
    for t, known in WELL_KNOWN_DEVICE_TYPES.items():  # accelerator backends torchplug ships but that are missing
        if known.accelerator and known.distribution and t not in backends:
            parts.append(f"For {known.label or t}: {missing_backend_message(t)}")
    parts.append("See `python -m torchplug`.")
    return " ".join(parts)


def require_accelerator_type() -> str:
    """The current accelerator's device type; RuntimeError saying why when there is none."""
    t = current_accelerator_type()
    if t is None:
        raise RuntimeError(no_accelerator_message())
    return t
