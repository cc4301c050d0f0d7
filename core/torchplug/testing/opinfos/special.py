"""OpInfos for ``_schemas/special.py`` (``torchplug.special``'s own primitives) and ``special.ndtr``: values
with nan/inf/-0.0, 0-dim, empty and non-contiguous inputs, integer promotion, the half-type and complex
refusals, and the Python-number forms of the binary functions."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import OpInfo, SampleInput, Skip, T

__all__ = ["OPS"]

S = SampleInput
DTYPES = ("bool", "int64", "float16", "bfloat16", "float32", "float64", "complex64")
TOL = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-4, 1e-5)}
# torch's float64 Bessel and Airy kernels are accurate to about 1e-7 (absolute) only; torchplug's are SciPy's
BESSEL_TOL = {**TOL, "float64": (2e-4, 2e-6)}
_BESSEL = ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1")
_UNARY_RANGES = {  # (low, high) of the values, inside each function's domain where it has one
    "ndtri": (0, 1), "entr": (-1, 4), "erfcx": (-4, 8), "modified_bessel_k0": (0, 4),
    "modified_bessel_k1": (0, 4), "scaled_modified_bessel_k0": (0, 4), "scaled_modified_bessel_k1": (0, 4),
}


def _unary(name: str):
    low, high = _UNARY_RANGES.get(name, (-8, 8))

    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4), special=True, low=low, high=high),), name="special_values")
        yield S((T((2, 5), noncontig=True, low=low, high=high),), name="noncontig")
        yield S((T(()),), name="0d")
        yield S((T((0, 3)),), name="empty")

    return gen


def _xlog1py(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=-2, high=3), T((3, 4), low=-1, high=4)), name="tensors")
    yield S((T((3, 1)), T((4,), low=-0.9, high=3, special=True)), name="broadcast")
    yield S((2.5, T((3, 4), low=-0.9, high=3)), name="number_self")
    yield S((T((3, 4)), 0.5), name="number_other")
    yield S((T((2, 3), noncontig=True), T((2, 3), low=-0.9, high=2)), name="noncontig")


def _zeta(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=1.1, high=5), T((3, 4), low=0.5, high=4)), name="domain")
    yield S((T((3, 4), low=-2, high=4, special=True), T((3, 4), low=-3, high=3)), name="everywhere")
    yield S((2.0, T((5,), low=0.5, high=4)), name="number_self")
    yield S((T((5,), low=1.5, high=4), 1.0), name="number_other")


def _polynomial(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 5), low=-1.2, high=1.2), T((3, 5), low=-1, high=12)), name="degrees")
    yield S((T((4, 1), low=0, high=1), T((6,), low=0, high=9)), name="broadcast")
    yield S((T((3, 4), low=-1, high=1), 3), name="number_n")
    yield S((T((3, 4), low=-1, high=1), 11), name="high_degree")
    yield S((0.5, T((5,), low=0, high=7)), name="number_x")
    yield S((T((2, 3), noncontig=True, low=-2, high=2), T((2, 3), low=0, high=5)), name="noncontig")


def _polynomial_names() -> tuple[str, ...]:
    from torchplug._schemas.special import POLYNOMIALS

    return tuple(POLYNOMIALS)


def _unary_names() -> tuple[str, ...]:
    from torchplug._schemas.special import UNARY

    return tuple(UNARY)


OPS = [
    *(OpInfo(f"special.{name}", _unary(name), dtypes=DTYPES, aten=(f"special_{name}",), supports_out=True,
             tolerances=BESSEL_TOL if name in _BESSEL else TOL) for name in _unary_names()),
    OpInfo("special.ndtr", _unary("ndtr"), dtypes=DTYPES, aten=("erf",), supports_out=True, tolerances=TOL),
    OpInfo("special.xlog1py", _xlog1py, dtypes=DTYPES, aten=("special_xlog1py",), supports_out=True, tolerances=TOL,
           skips=(Skip("torch's meta xlog1py (a Python decomposition) makes a contiguous result where its cpu kernel "
                       "keeps the transposed input's layout, as torchplug's meta does", devices=("meta",),
                       samples=("noncontig",)),)),
    OpInfo("special.zeta", _zeta, dtypes=DTYPES, aten=("special_zeta",), supports_out=True,
           tolerances={**TOL, "float32": (1e-4, 1e-4)}),
    *(OpInfo(f"special.{name}", _polynomial, dtypes=DTYPES, aten=(f"special_{name}",), supports_out=True,
             tolerances={**TOL, "float32": (1e-4, 1e-4)}) for name in _polynomial_names()),
]
