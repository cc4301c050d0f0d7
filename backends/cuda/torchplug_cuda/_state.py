"""State the cuda kernels share, filled once the backend registers (devices, key set, allocator)."""

from __future__ import annotations

from typing import Any

__all__ = ["BACKEND", "KEYSET", "bind_backend", "device", "stats"]

BACKEND: Any = None
KEYSET = 0
_DEVICES: dict[int, Any] = {}
_STATS: dict[int, Any] = {}


def bind_backend(backend: Any) -> None:
    global BACKEND, KEYSET
    BACKEND = backend
    KEYSET = backend.keyset
    _DEVICES.clear()
    _STATS.clear()


def device(index: int) -> Any:
    """``torchplug.device('cuda', index)``, one object per index (kernels compare with ``is``)."""
    found = _DEVICES.get(index)
    if found is None:
        from torchplug import device as make

        found = _DEVICES[index] = make("cuda", index)
    return found


def stats(index: int) -> Any:
    """The allocator's DeviceStats of device ``index`` (looked up once per index)."""
    found = _STATS.get(index)
    if found is None:
        found = _STATS[index] = BACKEND.allocator.stats_for(index)
    return found
