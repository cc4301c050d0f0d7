"""``torchplug.quasirandom``: ``SobolEngine``, the scrambled or plain Sobol sequence of ``torch.quasirandom``.

The direction numbers are Joe and Kuo's (the same table as PyTorch's, up to 21201 dimensions), taken from
SciPy's ``qmc.Sobol``; the points come in Gray-code order, and scrambling (a random linear matrix scramble
and digital shift drawn from torchplug's generator, whose cpu stream is PyTorch's) follows ATen's
``SobolEngineOps``, so a seeded engine draws PyTorch's points.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops.torch_namespace import TORCH
from torchplug._runtime.generator import Generator
from torchplug._tensor.tensor import Tensor

__all__ = ["SobolEngine"]


def _direction_numbers(dimension: int, bits: int) -> np.ndarray:
    try:
        from scipy.stats import qmc
    except ImportError:  # torchplug-cpu depends on SciPy; the core alone does not
        raise ImportError("SobolEngine takes its direction numbers from SciPy: pip install 'scipy>=1.10' (it comes "
                          "with the torchplug-cpu backend)") from None

    engine = qmc.Sobol(dimension, scramble=False, bits=bits)
    table = getattr(engine, "_sv", None)  # SciPy keeps the initialized direction numbers here
    if table is None:
        raise RuntimeError("SobolEngine needs the direction numbers of scipy.stats.qmc.Sobol (its _sv table); this "
                           "SciPy version does not expose them: install scipy>=1.10")
    return np.asarray(table, dtype=np.int64).reshape(dimension, bits)


class SobolEngine:
    """A Sobol sequence of ``dimension``-dimensional points in [0, 1); ``scramble=True`` scrambles it (Owen-type
    linear matrix scramble and a digital shift) with a generator seeded by ``seed`` (else the default one)."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError(f"Supported range of dimensionality for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _direction_numbers(dimension, self.MAXBIT)
        shift = np.zeros(dimension, dtype=np.int64)
        if scramble:
            state, shift = self._scrambled(state)
        self.sobolstate = TORCH.from_numpy(state)
        self.shift = TORCH.from_numpy(shift)
        self.quasi = self.shift.clone()
        # as torch: int64 / int in the default dtype, so the first point has that precision whatever dtype draws
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scrambled(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ATen's ``_sobol_engine_scramble_``: each direction number's bit vector times a random unit lower
        triangular matrix (mod 2), and a random digital shift."""
        generator = None
        if self.seed is not None:
            generator = Generator()
            generator.manual_seed(self.seed)
        d, bits = self.dimension, self.MAXBIT
        shift_bits = TORCH.randint(2, (d, bits), generator=generator).numpy()
        shift = shift_bits @ (2 ** np.arange(bits, dtype=np.int64))
        ltm = np.tril(TORCH.randint(2, (d, bits, bits), generator=generator).numpy())
        ltm[:, np.arange(bits), np.arange(bits)] = 1
        # bit k (from the least significant) of direction number j, and row p of each matrix as such a bit vector
        state_bits = (state[:, :, None] >> np.arange(bits)) & 1                      # (d, j, k)
        rows = (ltm @ (2 ** np.arange(bits - 1, -1, -1, dtype=np.int64)))           # (d, p): ATen's cdot_pow2
        row_bits = (rows[:, :, None] >> np.arange(bits)) & 1                          # (d, p, k)
        parity = np.einsum("djk,dpk->djp", state_bits, row_bits) % 2                 # (d, j, p)
        # ATen's loop gives row p the weight 2**(bits - 1 - p)
        scrambled = parity @ (2 ** np.arange(bits - 1, -1, -1, dtype=np.int64))
        return scrambled.astype(np.int64), shift.astype(np.int64)

    def _advance(self, n: int, start: int, dtype: Any) -> Tensor | None:
        """``n`` Gray-code steps from step ``start`` (ATen's ``_sobol_engine_draw``/``_ff_``: step ``k`` XORs the
        direction number of ``k``'s lowest zero bit into the state); the points when ``dtype`` is given."""
        quasi = self.quasi.numpy()
        if n <= 0:
            return None if dtype is None else TORCH.empty((0, self.dimension), dtype=dtype)
        steps = np.arange(start, start + n, dtype=np.int64)
        lowest_zero = np.frexp(((~steps) & (steps + 1)).astype(np.float64))[1] - 1  # exact: powers of two
        points = np.bitwise_xor.accumulate(self.sobolstate.numpy()[:, lowest_zero].T, axis=0) ^ quasi
        quasi[:] = points[-1]  # (a view of self.quasi's storage)
        if dtype is None:
            return None
        return TORCH.from_numpy(points * (1.0 / 2 ** self.MAXBIT)).to(dtype)

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``n`` points, shaped ``(n, dimension)``, in ``dtype`` (default the default dtype)."""
        dtype = D.get_default_dtype() if dtype is None else dtype
        if self.num_generated == 0:
            result = self._first_point.to(dtype)
            if n != 1:
                result = TORCH.cat((result, self._advance(n - 1, 0, dtype)), dim=-2)
        else:
            result = self._advance(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next ``2**m`` points; the total drawn must stay a power of 2 (Sobol's balance properties)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require n to be a power of 2. "
                             f"{self.num_generated} points have been previously generated, then: "
                             f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip ``n`` points (as drawing them without using them)."""
        if self.num_generated == 0:
            self._advance(n - 1, 0, None)
        else:
            self._advance(n, self.num_generated - 1, None)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"{self.__class__.__name__}({', '.join(parts)})"
