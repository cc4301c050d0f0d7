"""Per-device default generators of the cuda device type.

Each device index has its own ``torchplug.Generator`` (``torchplug.cuda.manual_seed`` seeds
the current device, ``manual_seed_all`` every device), so ``get_rng_state(i)``/``set_rng_state``
round-trip per device as in ``torch.cuda``.  The numbers are drawn on the host by the shared
random kernels (the mt19937 engine of PyTorch's CPU generator) and copied to the device: each
device is its own stream, equal to the CPU stream for the same seed and different from PyTorch's
CUDA (Philox) streams.
"""

from __future__ import annotations

from typing import Any

from torchplug._runtime.generator import HostRNG

__all__ = ["CudaRNG"]


class CudaRNG(HostRNG):
    def __init__(self) -> None:
        super().__init__("cuda")

    def _current(self) -> int:
        from . import _state

        return _state.BACKEND.runtime.current_device() if _state.BACKEND is not None else 0

    def manual_seed(self, seed: int) -> None:
        self.generator(self._current()).manual_seed(seed)

    def manual_seed_all(self, seed: int, count: int) -> None:
        for index in range(max(count, 1)):
            self.generator(index).manual_seed(seed)

    def seed(self) -> int:
        return self.generator(self._current()).seed()

    def initial_seed(self) -> int:
        return self.generator(self._current()).initial_seed()

    def get_rng_state(self, index: Any) -> Any:
        return self.generator(self._current() if index is None else index).get_state()

    def set_rng_state(self, state: Any, index: Any) -> None:
        self.generator(self._current() if index is None else index).set_state(state)
