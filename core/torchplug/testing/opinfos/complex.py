"""OpInfos for ``_schemas/complex.py``: angle, conj_physical, the real/complex views and the complex
constructors (the conjugate and negative bits' semantics are tested in tests/test_complex.py)."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import COMPLEX_DTYPES, INT_DTYPES, OpInfo, SampleInput, T

__all__ = ["OPS"]

S = SampleInput
PARTS = ("float32", "float64")  # complex/polar/view_as_complex inputs (no complex32 here)
TOL = {"float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}


def _unary(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="2d")
    yield S((T((4, 3), noncontig=True),), name="noncontig")
    yield S((T((3, 4), special=True),), name="special")
    yield S((T(()),), name="0d")
    yield S((T((0, 3)),), name="empty")


def _as_real(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)),), name="2d")
    yield S((T((4, 3), transposed=True),), name="transposed")
    yield S((T(()),), name="0d")


def _as_complex(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 2)),), name="2d")
    yield S((T((4, 3, 2)),), name="3d")
    yield S((T((2,)),), name="1d")


def _parts(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4)), T((3, 4), seed=1)), name="same")
    yield S((T((2, 1, 4)), T((3, 1), seed=1)), name="broadcast")
    yield S((T((3, 4), noncontig=True), T((4,), seed=1)), name="noncontig")


def _polar(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0.0, high=3.0), T((3, 4), seed=1)), name="same")
    yield S((T((2, 1, 4), low=0.0, high=3.0), T((3, 1), seed=1)), name="broadcast")


OPS = [
    OpInfo("angle", _unary, dtypes=INT_DTYPES + PARTS + COMPLEX_DTYPES, aten=("angle",), supports_out=True,
           tolerances=TOL),
    OpInfo("conj_physical", _unary, dtypes=PARTS + COMPLEX_DTYPES, aten=("conj_physical",), supports_out=True,
           inplace_variant="Tensor.conj_physical_"),
    OpInfo("view_as_real", _as_real, dtypes=COMPLEX_DTYPES, aten=("view_as_real",), view=True),
    OpInfo("view_as_complex", _as_complex, dtypes=PARTS, aten=("view_as_complex",), view=True),
    OpInfo("complex", _parts, dtypes=PARTS, aten=("complex",), supports_out=True),
    OpInfo("polar", _polar, dtypes=PARTS, aten=("polar",), supports_out=True, tolerances=TOL),
]
