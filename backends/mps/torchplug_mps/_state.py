"""State the emulated kernels share, filled once the backend registers (device, key set, stats)."""

from __future__ import annotations

from typing import Any

__all__ = ["MPS", "KEYSET", "STATS", "bind_backend", "address_of"]

MPS: Any = None  # torchplug.device('mps', 0)
KEYSET = 0
STATS: Any = None  # the mps allocator's DeviceStats of device 0
BACKEND: Any = None


def bind_backend(backend: Any) -> None:
    global MPS, KEYSET, STATS, BACKEND
    from torchplug import device

    MPS = device(backend.device_type, 0)
    KEYSET = backend.keyset
    STATS = backend.allocator.stats_for(0)
    BACKEND = backend


def address_of(st: Any) -> int:
    data = st.data
    return data.__array_interface__["data"][0] if data is not None else 0
