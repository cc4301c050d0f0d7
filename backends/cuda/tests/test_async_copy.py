"""Which ``copy_(..., non_blocking=True)`` calls start an asynchronous copy (no GPU needed: a stand-in
for CuPy records what would run on the device; ``test_gpu.py`` runs the real thing)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from torchplug_cuda import _async_copy
from torchplug_cuda._pinning import HostPinning


class _Event:
    def __init__(self) -> None:
        self.done = False


class _Stream:
    def __init__(self) -> None:
        self.events: list[_Event] = []

    def record(self) -> _Event:
        self.events.append(_Event())
        return self.events[-1]


class _DeviceArray:
    """Stands in for a CuPy array: records set/get calls and copies like them."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.shape, self.flags = values.shape, values.flags
        self.calls: list[str] = []

    def set(self, host: np.ndarray, stream: object) -> None:
        self.calls.append("set")
        self.values[...] = host

    def get(self, stream: object, out: np.ndarray) -> None:
        self.calls.append("get")
        out[...] = self.values


@pytest.fixture
def fake_cupy(monkeypatch):
    stream = _Stream()
    cp = SimpleNamespace(cuda=SimpleNamespace(get_current_stream=lambda: stream))
    monkeypatch.setattr(_async_copy, "_IN_FLIGHT", [])
    return cp, stream


def _tensor(data, device_type: str, dtype: str = "float32") -> SimpleNamespace:
    return SimpleNamespace(_data=data, _device=SimpleNamespace(type=device_type), _dtype=dtype)


def _host_and_device(pin: bool, pinning: HostPinning):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    if pin:
        host = _pinned(pinning, host)
    return host, _DeviceArray(np.zeros((3, 4), np.float32))


def _pinned(pinning: HostPinning, host: np.ndarray) -> np.ndarray:
    # HostPinning.pin needs a GPU or emulation; registering the array is what is_pinned reads.
    import weakref

    out = host.copy(order="K")
    pinning._pinned[id(out)] = weakref.ref(out)
    return out


def test_pinned_host_to_device_is_asynchronous_and_keeps_the_buffer(fake_cupy):
    cp, stream = fake_cupy
    pinning = HostPinning()
    host, dev = _host_and_device(True, pinning)
    assert _async_copy.copy_async(_tensor(dev, "cuda"), _tensor(host, "cpu"), pinning, cp)
    assert dev.calls == ["set"] and np.array_equal(dev.values, host)
    assert _async_copy.in_flight() == 1  # held until the event recorded after the copy completes
    stream.events[-1].done = True
    assert _async_copy.in_flight() == 0


def test_pinned_device_to_host_is_asynchronous(fake_cupy):
    cp, _ = fake_cupy
    pinning = HostPinning()
    host = _pinned(pinning, np.zeros((3, 4), np.float32))
    dev = _DeviceArray(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert _async_copy.copy_async(_tensor(host, "cpu"), _tensor(dev, "cuda"), pinning, cp)
    assert dev.calls == ["get"] and np.array_equal(host, dev.values)


@pytest.mark.parametrize("case", ["pageable", "cast", "strided", "broadcast", "device_to_device"])
def test_other_copies_stay_synchronous(fake_cupy, case):
    cp, _ = fake_cupy
    pinning = HostPinning()
    host, dev = _host_and_device(case != "pageable", pinning)
    src, dst = _tensor(host, "cpu"), _tensor(dev, "cuda")
    if case == "cast":
        src = _tensor(host, "cpu", dtype="float64")
    elif case == "strided":
        src = _tensor(_pinned(pinning, np.asfortranarray(host)), "cpu")  # same shape, not C-contiguous
    elif case == "broadcast":
        src = _tensor(host[:1], "cpu")
    elif case == "device_to_device":
        src = _tensor(_DeviceArray(host.copy()), "cuda")
    assert not _async_copy.copy_async(dst, src, pinning, cp)
    assert dev.calls == [] and _async_copy.in_flight() == 0
