"""``torchplug.Generator`` and the default generators: PyTorch's CPU engine, mt19937, one per device.

A generator holds exactly what PyTorch's ``at::CPUGeneratorImpl`` holds: an mt19937 engine (624
32-bit words seeded by init_genrand from the low 32 bits of the seed, plus the read position), the
seed it was created from, and the cached second Box-Muller samples (double and float).  The state
is device-independent data, so it lives here in the core; the *distributions* (how each random op
turns engine words into values, bit for bit as ATen's CPU kernels do) are the cpu backend's.  Other
device types get their own ``Generator`` objects of the same kind (their own streams, not their
PyTorch counterparts' Philox streams); meta draws nothing.

``get_state``/``set_state`` use PyTorch's byte layout (``CPUGeneratorImplState``, 5056 bytes), so
a state captured in PyTorch can be set here and both continue identically.  Like PyTorch, the
default generator is seeded from the operating system at start; ``torchplug.Generator()`` starts
from PyTorch's fixed default seed.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
from typing import Any

import numpy as np

__all__ = [
    "HostRNG","Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "generator_for"]

_N = 624
_DEFAULT_SEED = 67280421310721  # at::default_rng_seed_val
_UINT64 = 0xFFFF_FFFF_FFFF_FFFF
# struct CPUGeneratorImplState { THGeneratorState legacy_pod; float next_float_normal_sample;
# bool is_next_float_normal_sample_valid; } with THGeneratorState { uint64 the_initial_seed; int left;
# int seeded; uint64 next; uint64 state[624]; double normal_x, normal_y, normal_rho; int normal_is_valid; }
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4x")
_LEGACY_BYTES = _HEAD.size + 8 * _N + _TAIL.size  # THGeneratorState: 5048
_FLOAT_TAIL = struct.Struct("<f?3x")
_STATE_BYTES = _LEGACY_BYTES + _FLOAT_TAIL.size  # 5056


def _init_genrand(seed: int) -> np.ndarray:
    """mt19937's init_genrand from the low 32 bits of ``seed`` (at::mt19937::init_with_uint32)."""
    if seed == _DEFAULT_SEED and _DEFAULT_KEY is not None:
        return _DEFAULT_KEY.copy()
    if "numpy.random" not in sys.modules:  # the loop (~0.5 ms) rather than importing numpy.random (~15 ms)
        return _init_genrand_py(seed)
    with _SEEDER_LOCK:
        seeder = _seeder()
        seeding = getattr(seeder, "_legacy_seeding", None)
        if seeding is not None:  # NumPy's C init_genrand (a private method: the loop below where it is gone)
            seeding(seed & 0xFFFF_FFFF)
            return np.array(seeder.state["state"]["key"], dtype=np.uint32)
    return _init_genrand_py(seed)


def _seeder() -> Any:
    """One bit generator reused for seeding (creating one costs ~0.1 ms), made on first use."""
    global _SEEDER
    if _SEEDER is None:
        _SEEDER = np.random.MT19937(0)
    return _SEEDER


def _init_genrand_py(seed: int) -> np.ndarray:
    """init_genrand step by step (the reference for the NumPy-backed version)."""
    key = [0] * _N
    x = seed & 0xFFFF_FFFF
    key[0] = x
    for j in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFF_FFFF
        key[j] = x
    return np.array(key, dtype=np.uint32)


_SEEDER: Any = None
_SEEDER_LOCK = threading.Lock()
_DEFAULT_KEY: np.ndarray = _init_genrand_py(_DEFAULT_SEED)  # every torchplug.Generator() starts here


def _as_seed(seed: Any) -> int:
    """``Generator.manual_seed``'s conversion: an integer in [-2**63, 2**64), negative ones taken modulo 2**64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(2 ** 63) <= seed <= _UINT64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _UINT64


class Generator:
    """A random number generator (mt19937, PyTorch's CPU engine): ``manual_seed``, ``seed``,
    ``initial_seed``, ``get_state``/``set_state``."""

    def __init__(self, device: Any = "cpu") -> None:
        # Resolved lazily: a Generator may be created before any backend plugin is loaded.
        self._device_arg = device
        self._lock = threading.Lock()
        self._reseed(_DEFAULT_SEED)

    def _reseed(self, seed: int) -> None:
        self._seed = seed
        self._key = _init_genrand(seed)
        # Read position in NumPy's MT19937 convention (624: regenerate before the next draw).
        # PyTorch reports a freshly seeded engine as left=1, next=0 and a spent one as left=1,
        # next=624; both draw the same next word, _fresh tells them apart for get_state.
        self._pos = _N
        self._fresh = True
        self._normal_double: float | None = None
        self._normal_float: float | None = None

    @property
    def device(self) -> Any:
        from torchplug._runtime.device import device

        return device(self._device_arg)

    def manual_seed(self, seed: Any) -> Generator:
        """Reseed (the cached normal samples are dropped); returns self."""
        value = _as_seed(seed)
        with self._lock:
            self._reseed(value)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy (64 bits, as PyTorch); returns the new seed."""
        new = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(new)
        return new

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Any:
        """The full state as a uint8 tensor in PyTorch's CPU layout (restorable here or in PyTorch)."""
        from torchplug._runtime.device import _host_device
        from torchplug._runtime.backends import backend_for

        host = _host_device()  # the host backend's from_host makes the tensor (this layer has no Tensor type)
        return backend_for(host.type).from_host(np.frombuffer(self._state_bytes(), dtype=np.uint8).copy(), host)

    def _state_bytes(self) -> bytes:
        with self._lock:
            pos = self._pos
            left, nxt = (1, 0 if self._fresh else _N) if pos >= _N else (_N + 1 - pos, pos)
            dbl = self._normal_double
            flt = self._normal_float
            words = self._key.astype("<u8").tobytes()
            seed = self._seed
        head = _HEAD.pack(seed, left, 1, nxt)
        tail = _TAIL.pack(0.0, 0.0 if dbl is None else dbl, 0.0, dbl is not None)
        return head + words + tail + _FLOAT_TAIL.pack(0.0 if flt is None else flt, flt is not None)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from :meth:`get_state` (here or PyTorch's ``get_rng_state``); the engine
        fields are checked as PyTorch checks them."""
        raw = _state_buffer(new_state)
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG state "
                               f"size to be {len(raw)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(raw, 0)
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=_HEAD.size).astype(np.uint32)
        _x, normal_y, _rho, normal_valid = _TAIL.unpack_from(raw, _HEAD.size + 8 * _N)
        nxt &= 0xFFFF_FFFF
        if not (seeded != 0 and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        value, valid = _FLOAT_TAIL.unpack_from(raw, _LEGACY_BYTES)
        flt = float(value) if valid else None
        dbl = float(normal_y) if normal_valid else None
        with self._lock:
            self._seed = seed
            self._key = key
            # ``left`` decides when the engine regenerates (PyTorch states always have
            # left + next == 625 after the first draw); a fresh engine has left 1 and next 0.
            self._pos = _N if left == 1 else _N + 1 - left
            self._fresh = left == 1 and nxt == 0
            self._normal_double = dbl
            self._normal_float = flt
        return self

    def clone_state(self) -> Generator:
        """A new generator in the same state (same device)."""
        other = Generator(self._device_arg)
        other.set_state(self.get_state())
        return other

    def get_offset(self) -> int:
        """PyTorch's CPU generators have no Philox offset: RuntimeError, as there."""
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> None:
        """PyTorch's CPU generators have no Philox offset: RuntimeError, as there."""
        raise RuntimeError("CPU Generator does not use offset")

    def __reduce__(self) -> tuple[Any, ...]:
        # pickling/copying keeps the full state, as torch.Generator's (seed, offset, state) triple
        return (Generator, (self._device_arg,), (self._seed, None, self.get_state()))

    def __setstate__(self, state: tuple[Any, Any, Any]) -> None:
        seed, _offset, engine = state
        self.manual_seed(seed)
        self.set_state(engine)

    def random_raw(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit engine outputs (as PyTorch's ``random()``), through NumPy's MT19937.

        The backends' C kernels draw straight from the state; this is their portable fallback.
        """
        with self._lock:
            bg = np.random.MT19937()
            bg.state = {"bit_generator": "MT19937", "state": {"key": self._key, "pos": self._pos}}
            out = bg.random_raw(n).astype(np.uint32)
            st = bg.state["state"]
            self._key = np.asarray(st["key"], dtype=np.uint32).copy()
            self._pos = int(st["pos"])
            if n:
                self._fresh = False
        return out

    def __repr__(self) -> str:
        return f"<torchplug.Generator object on {self._device_arg}>"


def _state_buffer(new_state: Any) -> bytes:
    from torchplug._base.dtype import uint8

    # a ByteTensor on the host: checked by its attributes (the Tensor type lives in the layer above)
    if getattr(new_state, "dtype", None) is not uint8 or getattr(getattr(new_state, "device", None), "type", None) != "cpu":
        raise TypeError("RNG state must be a torch.ByteTensor")
    return bytes(np.asarray(new_state.tolist(), dtype=np.uint8).tobytes())


default_generator = Generator()
# PyTorch seeds its default CPU generator from /dev/urandom at start, so processes differ.
default_generator.manual_seed(int.from_bytes(os.urandom(8), "little"))
_per_device: dict[str, Generator] = {}


def generator_for(dev: Any) -> Generator:
    """The default generator of a device (the host generator serves every device without its own)."""
    key = str(dev)
    found = _per_device.get(key)
    return found if found is not None else default_generator


def manual_seed(seed: Any) -> Generator:
    """Seed every default generator (``int(seed)``, as torch.manual_seed); returns the host one."""
    value = _as_seed(int(seed))
    default_generator.manual_seed(value)
    for gen in _per_device.values():
        gen.manual_seed(value)
    return default_generator


def seed() -> int:
    """Seed every default generator non-deterministically; returns the seed."""
    new = default_generator.seed()
    for gen in _per_device.values():
        gen.manual_seed(new)
    return new


def initial_seed() -> int:
    """The initial seed of the default (host) generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """State of the default (host) generator as a uint8 tensor (PyTorch's layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Any) -> None:
    """Restore the default (host) generator from :func:`get_rng_state` (or PyTorch's)."""
    default_generator.set_state(new_state)


class HostRNG:
    """RNG backed by a host ``torchplug.Generator`` (mt19937, PyTorch's CPU engine) per device index;
    index 0 of a host device is ``torchplug.default_generator`` itself."""

    def __init__(self, device_type: str, *, host: bool = False) -> None:
        self.device_type = device_type
        self.host = host
        self._lock = threading.Lock()

    def generator(self, index: int | None) -> Any:
        if self.host:
            return default_generator
        key = f"{self.device_type}:{index or 0}"
        gen = _per_device.get(key)
        if gen is None:
            with self._lock:
                gen = _per_device.setdefault(key, Generator(key))
        return gen

    def manual_seed(self, seed: int) -> None:
        self.generator(0).manual_seed(seed)

    def seed(self) -> int:
        return self.generator(0).seed()

    def initial_seed(self) -> int:
        return self.generator(0).initial_seed()

    def get_rng_state(self, index: int) -> Any:
        return self.generator(index).get_state()

    def set_rng_state(self, state: Any, index: int) -> None:
        self.generator(index).set_state(state)
