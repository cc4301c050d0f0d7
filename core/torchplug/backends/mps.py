"""``torchplug.backends.mps``: whether an mps backend is installed and usable."""

from __future__ import annotations

import platform

__all__ = ["is_built", "is_available", "is_macos_or_newer", "is_macos13_or_newer"]


def _backend() -> object | None:
    from torchplug._runtime.backends import registered_backends
    from torchplug._plugins import ensure_loaded

    ensure_loaded()
    return registered_backends().get("mps")


def is_built() -> bool:
    """Whether a backend for the ``mps`` device type is installed and registered (torchplug-mps).
    Built is not available: the stub needs macOS with Metal, or ``TORCHPLUG_MPS_EMULATE=1``."""
    return _backend() is not None


def is_available() -> bool:
    """Whether the ``mps`` device can be used now."""
    backend = _backend()
    return backend is not None and backend.device_module.is_available()


def is_macos_or_newer(major: int, minor: int) -> bool:
    """Whether this is macOS ``major.minor`` or newer (RuntimeError without an mps backend, as in PyTorch)."""
    if _backend() is None:
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")
    release = platform.mac_ver()[0]
    if not release:
        return False
    parts = [int(p) for p in release.split(".")[:2]] + [0]
    return (parts[0], parts[1]) >= (major, minor)


def is_macos13_or_newer(minor: int = 0) -> bool:
    """Whether this is macOS 13.``minor`` or newer."""
    return is_macos_or_newer(13, minor)
