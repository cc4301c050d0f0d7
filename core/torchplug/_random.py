"""``torchplug.Generator`` and the default generators: seeded NumPy bit generators, one per device.

Random numbers are drawn on the host with NumPy's PCG64 and then placed on the device by its
backend, so every backend gets reproducible streams without an RNG of its own.  A backend may
still register kernels for the random ops that use a device RNG.
"""

from __future__ import annotations

import random as _pyrandom
import threading
from typing import Any

import numpy as np

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "generator_for"]

_STATE_BYTES = 48  # PCG64 state: 128-bit state + 128-bit increment + has_uint32 + uinteger + seed


class Generator:
    """A random number generator for one device: ``manual_seed``, ``seed``, ``get_state``/``set_state``."""

    def __init__(self, device: Any = "cpu") -> None:
        # Resolved lazily: a Generator may be created before any backend plugin is loaded.
        self._device_arg = device
        self._lock = threading.Lock()
        self._initial_seed = 67280421310721  # PyTorch's default seed
        self._np = np.random.Generator(np.random.PCG64(self._initial_seed))

    @property
    def device(self) -> Any:
        from ._device import device

        return device(self._device_arg)

    def manual_seed(self, seed: int) -> Generator:
        """Reseed; returns self."""
        seed = int(seed)
        if seed < 0:
            seed &= 0xFFFF_FFFF_FFFF_FFFF
        self._initial_seed = seed
        self._np = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self) -> int:
        """Reseed from a non-deterministic source; returns the new seed."""
        new = _pyrandom.SystemRandom().getrandbits(63)
        self.manual_seed(new)
        return new

    def initial_seed(self) -> int:
        return self._initial_seed

    def get_state(self) -> Any:
        """The full state as a uint8 tensor (restorable with :meth:`set_state`)."""
        from ._creation import tensor

        st = self._np.bit_generator.state
        words = [st["state"]["state"], st["state"]["inc"]]
        raw = b"".join(w.to_bytes(16, "little") for w in words)
        raw += int(st["has_uint32"]).to_bytes(4, "little") + int(st["uinteger"]).to_bytes(4, "little")
        raw += (self._initial_seed & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")
        return tensor(list(raw), dtype=_uint8())

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from :meth:`get_state`."""
        raw = bytes(int(v) for v in new_state.tolist())
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"RNG state is wrong size: expected {_STATE_BYTES} bytes, got {len(raw)}")
        bg = np.random.PCG64()
        bg.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[0:16], "little"), "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": int.from_bytes(raw[32:36], "little"),
            "uinteger": int.from_bytes(raw[36:40], "little"),
        }
        self._np = np.random.Generator(bg)
        self._initial_seed = int.from_bytes(raw[40:48], "little")
        return self

    @property
    def numpy_generator(self) -> np.random.Generator:
        """The underlying NumPy generator (for backend kernels)."""
        return self._np

    def __repr__(self) -> str:
        return f"<torchplug.Generator object on {self._device_arg}>"


def _uint8() -> Any:
    from ._dtype import uint8

    return uint8


default_generator = Generator()
_per_device: dict[str, Generator] = {}


def generator_for(dev: Any) -> Generator:
    """The default generator of a device (the host generator serves every device without its own)."""
    key = str(dev)
    found = _per_device.get(key)
    return found if found is not None else default_generator


def manual_seed(seed: int) -> Generator:
    """Seed every default generator; returns the host one."""
    default_generator.manual_seed(seed)
    for gen in _per_device.values():
        gen.manual_seed(seed)
    return default_generator


def seed() -> int:
    """Seed every default generator non-deterministically; returns the seed."""
    new = default_generator.seed()
    for gen in _per_device.values():
        gen.manual_seed(new)
    return new


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """State of the default (host) generator as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    default_generator.set_state(new_state)
