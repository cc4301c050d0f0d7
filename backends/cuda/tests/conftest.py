"""Fixtures for torchplug-cuda's tests.

- ``no_gpu``: the device as this machine has it, with emulation off (tests of the unavailable
  path skip when a real GPU is present);
- ``emulated``: ``TORCHPLUG_CUDA_EMULATE=2`` (two NumPy-backed devices).  Emulation exercises
  the loader, device selection, allocator and stream wiring; it is not GPU verification;
- ``gpu``: skips unless CuPy sees a CUDA device.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torchplug_cuda")

import torchplug as torch  # noqa: E402
from torchplug import accelerator  # noqa: E402
from torchplug_cuda import _runtime  # noqa: E402


def gpu_present() -> bool:
    """Whether CuPy sees a CUDA device (never raises; imports CuPy only if it is installed)."""
    try:
        import importlib.util

        if importlib.util.find_spec("cupy") is None:
            return False
    except (ImportError, ValueError):
        return False
    return _runtime.probe()[0] is not None


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.delenv(_runtime.EMULATE_VAR, raising=False)
    if gpu_present():
        pytest.skip("a CUDA device is present: the no-GPU behaviour cannot be observed here")
    torch.ones(1)  # plugins loaded


@pytest.fixture
def emulated(monkeypatch):
    monkeypatch.setenv(_runtime.EMULATE_VAR, "2")
    monkeypatch.delenv(accelerator.ENV_VAR, raising=False)
    accelerator.set_accelerator_priority(None)
    torch.ones(1)
    yield
    torch.cuda.set_device(0)


@pytest.fixture
def gpu(monkeypatch):
    monkeypatch.delenv(_runtime.EMULATE_VAR, raising=False)
    if not gpu_present():
        pytest.skip("needs an NVIDIA GPU with CuPy (pip install -e 'backends/cuda[cuda12]')")
    torch.ones(1)
    yield
    torch.cuda.synchronize()
