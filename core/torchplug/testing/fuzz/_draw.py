"""Where a fuzz case's choices come from: Hypothesis (the default) or a seeded ``random.Random``.

An op's generator asks a :class:`Draw` for integers and choices; the helpers here build shapes,
dims, scalars and :class:`~torchplug.testing.fuzz._spec.TensorSpec` objects from those draws.  The
same generator therefore runs under Hypothesis (``HypothesisDraw``: its biased, shrinkable
choices) and under plain seeded randomness (``RandomDraw``: case ``k`` of seed ``s`` is a pure
function of ``(s, k)``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from torchplug.testing.fuzz._spec import COMPLEX, FLOATS, INTS, TensorSpec

__all__ = ["Draw", "HypothesisDraw", "RandomDraw", "shape", "tensor", "dim", "broadcast_shapes", "scalar",
           "MAX_NUMEL"]

X = TypeVar("X")
MAX_NUMEL = 96  # elements per tensor: small keeps the Python cost per case (and the reproducers) low
LAYOUTS = ("contig", "contig", "contig", "perm", "step", "offset", "expand")


class Draw:
    """The source of a case's choices."""

    def int(self, lo: int, hi: int) -> int:  # noqa: A003 - the natural name
        """An integer in ``[lo, hi]``."""
        raise NotImplementedError

    def pick(self, seq: Sequence[X]) -> X:
        """One element of ``seq``."""
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, percent: int) -> bool:
        """True with about ``percent`` % probability."""
        return self.int(0, 99) < percent

    def seed(self) -> int:
        """A seed for NumPy-generated values."""
        return self.int(0, 2**31 - 1)


class HypothesisDraw(Draw):
    """Draws through Hypothesis's ``st.data()`` object."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self._data = data
        self._st = st

    def int(self, lo: int, hi: int) -> int:  # noqa: A003
        return self._data.draw(self._st.integers(lo, hi))


class RandomDraw(Draw):
    """Draws from ``random.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def int(self, lo: int, hi: int) -> int:  # noqa: A003
        return self._rng.randint(lo, hi)


# ---- helpers ------------------------------------------------------------------------------------------------------
def shape(d: Draw, min_dims: int = 0, max_dims: int = 4, max_side: int = 5, empty: int = 8) -> tuple[int, ...]:
    """A random shape; a side is 0 with ``empty`` % probability; at most ``MAX_NUMEL`` elements."""
    ndim = d.int(min_dims, max_dims)
    sides = [0 if d.chance(empty) else d.int(1, max_side) for _ in range(ndim)]
    while _prod(sides) > MAX_NUMEL:
        i = max(range(ndim), key=lambda j: sides[j])
        sides[i] = max(1, sides[i] // 2)
    return tuple(sides)


def _prod(sides: Sequence[int]) -> int:
    n = 1
    for s in sides:
        n *= s
    return n


def tensor(d: Draw, shp: Sequence[int], dtype: str, *, low: float | None = None, high: float | None = None,
           layout: bool = True, special: bool = True, unique: int = -1) -> TensorSpec:
    """A tensor spec of ``shp`` and ``dtype`` with a random layout and values.

    Values are small by default (integers in [-4, 4], uint8 in [0, 8], floats in [-4, 4] in steps of
    1/16); sometimes wide (the integer dtype's full range, floats up to 1e4); real floating tensors
    sometimes hold nan/inf/-inf/-0.0.  ``low``/``high`` fix the range (index tensors); ``unique`` makes the values
    distinct along that dim (never an expanded layout, which repeats them).
    """
    shp = tuple(int(s) for s in shp)
    kind = d.pick(LAYOUTS[:-1] if unique >= 0 else LAYOUTS) if layout else "contig"
    perm: tuple[int, ...] = ()
    base: tuple[int, ...] = ()
    offset = 0
    if kind == "perm":
        if len(shp) < 2:
            kind = "contig"
        else:
            order = list(range(len(shp)))
            for i in range(len(order) - 1, 0, -1):  # a drawn permutation (Fisher-Yates)
                j = d.int(0, i)
                order[i], order[j] = order[j], order[i]
            perm = tuple(order) if order != sorted(order) else tuple(reversed(order))
    elif kind == "step" and not shp:
        kind = "contig"
    elif kind == "offset":
        offset = d.int(1, 3)
    elif kind == "expand":
        base = tuple(1 if d.chance(50) else s for s in shp)
        while base and base[0] == 1 and d.chance(30):  # fewer leading dims, as expand allows
            base = base[1:]
        if base == shp:
            kind, base = "contig", ()
    if low is None:
        if dtype in INTS:
            wide = d.chance(10)
            low, high = (-(2**63), 2**63 - 1) if wide else (0 if dtype == "uint8" else -4, 8 if dtype == "uint8" else 4)
        elif dtype in FLOATS or dtype in COMPLEX:
            scale = 1e4 if d.chance(8) else 4
            low, high = -scale, scale
        else:
            low, high = 0, 1
    hi = high if high is not None else 4
    # no specials in complex tensors: torch's complex arithmetic on inf/nan differs between its
    # vectorized and scalar paths (inf * (1+0j) gives inf+nanj in one, inf+0j in the other)
    spec_special = special and dtype in FLOATS and d.chance(12)
    return TensorSpec(shp, dtype, kind, perm, base, offset, d.seed(), low, hi, spec_special, unique)


def dim(d: Draw, ndim: int, invalid: int = 4) -> int:
    """A dim argument for a tensor of ``ndim`` dims; out of range with ``invalid`` % probability."""
    n = max(ndim, 1)  # a 0-d tensor takes dims -1 and 0
    if d.chance(invalid):
        return d.pick((n, -n - 1, n + 2))
    return d.int(-n, n - 1)


def broadcast_shapes(d: Draw, count: int = 2, invalid: int = 4) -> list[tuple[int, ...]]:
    """``count`` shapes that broadcast together (sometimes, with ``invalid`` %, ones that do not)."""
    full = shape(d, max_dims=4)
    out = []
    for _ in range(count):
        s = list(full[d.int(0, len(full)):]) if d.chance(30) else list(full)
        s = [1 if d.chance(25) else side for side in s]
        out.append(tuple(s))
    if d.chance(invalid):
        k = d.int(0, count - 1)
        s = list(out[k])
        if s:
            i = d.int(0, len(s) - 1)
            s[i] = s[i] + d.int(2, 3)
            out[k] = tuple(s)
    return out


def scalar(d: Draw, kind: str) -> Any:
    """A Python scalar: ``kind`` is ``bool``, ``int``, ``float``, ``complex`` or ``any``."""
    if kind == "any":
        kind = d.pick(("int", "int", "float", "float", "bool", "complex"))
    if kind == "bool":
        return bool(d.int(0, 1))
    if kind == "int":
        return d.int(-4, 4)
    if kind == "complex":
        return complex(d.int(-8, 8) / 4, d.int(-8, 8) / 4)
    return d.pick((0.5, -1.5, 2.0, 0.0, -0.0, 3.25, float("inf"), float("nan"), 1e5, -2.75))
