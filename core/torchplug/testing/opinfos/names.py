"""OpInfos for ``_schemas/names.py``: i0, special_i1 (i0's derivative op), polygamma, frexp."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, OpInfo, SampleInput, T

__all__ = ["OPS"]

S = SampleInput
REAL = tuple(d for d in ALL_DTYPES if d not in COMPLEX_DTYPES)
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-5)}


def _unary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="2d")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")
    yield S((T((3, 4), noncontig=True, low=-8, high=8),), name="noncontig")


def _polygamma(dtype: str) -> Iterator[SampleInput]:
    for n in (0, 1, 2, 3):
        yield S((n, T((3, 4), low=0.2, high=6)), name=f"n{n}")
    yield S((1, T((3, 4), noncontig=True, low=-4, high=4)), name="negative")
    yield S((2, T(())), name="0d")
    yield S((0, T((0, 3))), name="empty")


def _frexp(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), special=True),), name="2d")
    yield S((T((3, 4), noncontig=True, low=-1000, high=1000),), name="noncontig")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")


OPS = [
    OpInfo("i0", _unary, dtypes=REAL, aten=("i0",), supports_out=True, inplace_variant="Tensor.i0_", tolerances=TOL),
    OpInfo("special_i1", _unary, dtypes=REAL, op="ops.aten.special_i1", aten=("special_i1",), tolerances=TOL),
    OpInfo("polygamma", _polygamma, dtypes=REAL, aten=("polygamma",), supports_out=True,
           tolerances={**TOL, "float32": (1e-4, 1e-5)}),
    OpInfo("frexp", _frexp, dtypes=FLOAT_DTYPES, aten=("frexp.Tensor",)),
]
