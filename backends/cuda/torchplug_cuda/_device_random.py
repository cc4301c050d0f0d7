"""Random kernels of the cuda device that draw on the device, through CuPy's generators.

The shared cpu kernels draw PyTorch's CPU stream (mt19937) on the host; on the GPU that would be
a host loop and a copy per call.  These kernels replace them for the common real-dtype cases
(``uniform_``, ``normal_``, ``exponential_``, ``log_normal_``, ``cauchy_``, ``geometric_``,
``bernoulli_``/``bernoulli``, ``random_`` with bounds): each call takes one 64-bit seed from the
device's ``torchplug.Generator`` (two words of its engine) and draws every value on the device
with CuPy's ``RandomState`` on cuRAND's Philox4x32-10.  So ``torchplug.cuda.manual_seed``,
``get_rng_state``/``set_rng_state`` and explicit ``Generator(device='cuda')`` objects keep their
meaning (the same state gives the same numbers), while the numbers are CuPy's, not PyTorch's CUDA
ones (which differ from its CPU ones anyway).

Under emulation the same code runs with NumPy's ``RandomState`` standing in for CuPy's.  Anything
else (complex, invalid arguments that must raise PyTorch's errors, broadcast outputs, unbounded
``random_``, ``poisson``, ``multinomial``, ``randperm``) goes to the shared kernel.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from torchplug._base import dtype as D

__all__ = ["kernels", "OPS"]

OPS = ("aten::uniform_", "aten::normal_", "aten::exponential_", "aten::log_normal_", "aten::cauchy_",
       "aten::geometric_", "aten::bernoulli_.float", "aten::bernoulli", "aten::random_.from")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("uint8", "int8", "int16", "int32", "int64")


class _States(threading.local):
    """One RandomState per (thread, device): reseeded for every call, so nothing else is kept in it."""

    def __init__(self) -> None:
        self.by_device: dict[int, Any] = {}


def kernels(mode: str, shared: dict[str, Callable[..., Any]], common: Any) -> dict[str, Callable[..., Any]]:
    """Op name -> device-drawing kernel for ``mode`` ('cupy' or 'emulate'), falling back to ``shared``."""
    if mode == "cupy":
        import cupy as xp

        philox = xp.cuda.curand.CURAND_RNG_PSEUDO_PHILOX4_32_10

        def new_state() -> Any:
            return xp.random.RandomState(method=philox)

        def device_id() -> int:
            return xp.cuda.Device().id

        def seed(state: Any, words: np.ndarray) -> None:
            # a NumPy uint64: CuPy casts the seed to uint64 with casting='safe', which an int64 fails
            state.seed(np.uint64(int(words[0]) | int(words[1]) << 32))

        def draw(method: str, state: Any, *params: Any, size: int, dtype: Any) -> Any:
            return getattr(state, method)(*params, size=size, dtype=dtype)
    else:
        xp = np

        def new_state() -> Any:
            return np.random.RandomState()

        def device_id() -> int:
            return common.CPU.index or 0

        def seed(state: Any, words: np.ndarray) -> None:
            state.seed(words)

        def draw(method: str, state: Any, *params: Any, size: int, dtype: Any) -> Any:
            return getattr(state, method)(*params, size=size).astype(dtype, copy=False)

    states = _States()

    def source(generator: Any) -> Any:
        """The calling device's RandomState, seeded from the next 64 bits of ``generator``."""
        state = states.by_device.get(device_id())
        if state is None:
            state = states.by_device[device_id()] = new_state()
        seed(state, generator.random_raw(2))
        return state

    def writable(self: Any) -> bool:
        data = self._data
        return not any(st == 0 and n > 1 for n, st in zip(data.shape, data.strides))

    def opmath(dt: Any) -> Any:
        return np.float64 if dt is D.float64 else np.float32

    def store(self: Any, values: Any) -> Any:
        self._data[...] = values.reshape(self._data.shape).astype(self._data.dtype, copy=False)
        return self

    def is_float(self: Any) -> bool:
        return self._dtype.name in _FLOATS and writable(self)

    def uniform_(self, from_=0.0, to=1.0, generator=None):
        dt = self._dtype
        if not (is_float(self) and from_ <= to and to - from_ <= float(D.finfo(dt).max)
                and -float(D.finfo(dt).max) <= from_ and to <= float(D.finfo(dt).max)):
            return shared["aten::uniform_"](self, from_, to, generator)
        ot = opmath(dt)
        u = draw("random_sample", source(generator), size=self._data.size, dtype=ot)
        values = (u * ot(to - from_) + ot(from_)).astype(self._data.dtype)
        kind = self._data.dtype.type  # scalars of the tensor's dtype (CuPy takes NumPy scalars, not 0-d arrays)
        # the cast may round up onto ``to``: ATen maps that value to ``from``
        return store(self, xp.where(values == kind(to), kind(from_), values))

    def normal_(self, mean=0.0, std=1.0, generator=None):
        if not (is_float(self) and std >= 0):
            return shared["aten::normal_"](self, mean, std, generator)
        ot = opmath(self._dtype)
        z = draw("standard_normal", source(generator), size=self._data.size, dtype=ot)
        return store(self, z * ot(std) + ot(mean))

    def exponential_(self, lambd=1.0, generator=None):
        if not (is_float(self) and lambd > 0):
            return shared["aten::exponential_"](self, lambd, generator)
        ot = opmath(self._dtype)
        e = draw("standard_exponential", source(generator), size=self._data.size, dtype=ot)
        return store(self, e / ot(lambd))

    def log_normal_(self, mean=1.0, std=2.0, generator=None):
        if not (is_float(self) and std > 0):
            return shared["aten::log_normal_"](self, mean, std, generator)
        ot = opmath(self._dtype)
        z = draw("standard_normal", source(generator), size=self._data.size, dtype=ot)
        return store(self, xp.exp(z * ot(std) + ot(mean)))

    def cauchy_(self, median=0.0, sigma=1.0, generator=None):
        if not (is_float(self) and sigma > 0):
            return shared["aten::cauchy_"](self, median, sigma, generator)
        ot = opmath(self._dtype)
        u = draw("random_sample", source(generator), size=self._data.size, dtype=ot)
        return store(self, ot(median) + ot(sigma) * xp.tan(ot(math.pi) * (u - ot(0.5))))

    def geometric_(self, p, generator=None):
        name = self._dtype.name
        if not ((name in _FLOATS or name in _INTS) and writable(self) and 0 < p < 1):
            return shared["aten::geometric_"](self, p, generator)
        u = draw("random_sample", source(generator), size=self._data.size, dtype=np.float64)
        # the number of trials to the first success: ceil(log(1 - u) / log(1 - p)), at least 1
        return store(self, xp.maximum(xp.ceil(xp.log1p(-u) / math.log1p(-p)), 1.0))

    def bernoulli_(self, p=0.5, generator=None):
        name = self._dtype.name
        if not ((name in _FLOATS or name in _INTS or name == "bool") and writable(self) and 0 <= p <= 1):
            return shared["aten::bernoulli_.float"](self, p, generator)
        u = draw("random_sample", source(generator), size=self._data.size, dtype=np.float64)
        return store(self, u < p)

    def bernoulli(self, generator=None):
        probs = self._data
        if self._dtype.name not in _FLOATS or (probs.size and not bool(((probs >= 0) & (probs <= 1)).all())):
            return shared["aten::bernoulli"](self, generator)
        u = draw("random_sample", source(generator), size=probs.size, dtype=opmath(self._dtype))
        return common.wrap((u.reshape(probs.shape) < probs).astype(probs.dtype))

    def random_from(self, from_, to=None, generator=None):
        name = self._dtype.name
        if not (name in _INTS and to is not None and writable(self)):
            return shared["aten::random_.from"](self, from_, to, generator)
        info = np.iinfo(self._dtype.numpy_dtype)
        if not int(info.min) <= from_ < to <= int(info.max) + 1:
            return shared["aten::random_.from"](self, from_, to, generator)
        state = source(generator)
        values = state.randint(from_, to, size=self._data.size, dtype=np.int64)
        return store(self, values)

    return {
        "aten::uniform_": uniform_, "aten::normal_": normal_, "aten::exponential_": exponential_,
        "aten::log_normal_": log_normal_, "aten::cauchy_": cauchy_, "aten::geometric_": geometric_,
        "aten::bernoulli_.float": bernoulli_, "aten::bernoulli": bernoulli, "aten::random_.from": random_from,
    }
