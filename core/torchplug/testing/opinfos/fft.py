"""OpInfos for ``_schemas/fft.py``: the three FFT primitives and the ``torchplug.fft`` composites over them
(norm modes, ``n``/``s`` cropping and padding, ``dim`` orders, non-contiguous inputs, dtype promotion and
the float16/bfloat16 refusal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from torchplug.testing.opinfo import OpInfo, SampleInput, T

__all__ = ["OPS"]

S = SampleInput
REAL = ("int64", "float16", "bfloat16", "float32", "float64")
ALL = (*REAL, "complex64", "complex128")
COMPLEX = ("complex64", "complex128")
# an FFT sums n terms: float32 results are good to about n * eps relative to the input's magnitude
TOL = {"float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4), "float64": (1e-9, 1e-9), "complex128": (1e-9, 1e-9)}
def _one_d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 8)),), name="default")
    yield S((T((5,)),), {"norm": "ortho"}, name="ortho")
    yield S((T((4, 6)),), {"n": 9, "dim": 0, "norm": "forward"}, name="pad_dim0")
    yield S((T((4, 6), noncontig=True),), {"n": 4}, name="crop_noncontig")
    yield S((T((2, 3, 5), transposed=True),), {"dim": 1, "norm": "backward"}, name="transposed")
    yield S((T((3, 4)),), {"norm": "bogus"}, name="bad_norm", out_ok=False)
    yield S((T((3, 4)),), {"n": 0}, name="zero_points", out_ok=False)
    yield S((T((3, 4)),), {"dim": 2}, name="bad_dim", out_ok=False)


def _hermitian_1d(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 5)),), name="default")
    yield S((T((4, 5)),), {"n": 7, "norm": "ortho"}, name="odd_n")
    yield S((T((6, 3), noncontig=True),), {"n": 6, "dim": 0, "norm": "forward"}, name="pad_dim0")
    yield S((T((2, 3, 5), transposed=True),), {"dim": 1}, name="transposed")
    yield S((T((3, 1)),), name="zero_points", out_ok=False)


def _n_d(two: bool) -> Callable[[str], Iterator[SampleInput]]:
    def gen(dtype: str) -> Iterator[SampleInput]:
        yield S((T((3, 4, 6)),), name="default")
        yield S((T((3, 4, 6), noncontig=True),), {"norm": "ortho", "s": (5, 4)}, name="s_pad_crop")
        yield S((T((2, 3, 4), transposed=True),), {"dim": (0, 2), "norm": "forward"}, name="dims_0_2")
        yield S((T((2, 3, 4)),), {"dim": (2, 0)}, name="dims_2_0")
        yield S((T((2, 3, 4)),), {"s": (3, -1), "dim": (1, 2)}, name="s_minus_one")
        yield S((T((2, 3)),), {"dim": (1, 1)}, name="duplicate_dims", out_ok=False)
        yield S((T((2, 3)),), {"s": (2,), "dim": (0, 1)}, name="s_dim_mismatch", out_ok=False)
        if not two:
            yield S((T((2, 3, 4)),), {"s": (3, 4)}, name="s_only")
            yield S((T((2, 3, 4)),), {"dim": 1}, name="int_dim")
    return gen


def _c2c(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)), [1], 0, True), name="dim1")
    yield S((T((3, 4, 5)), [0, 2], 1, False), name="dims_0_2")
    yield S((T((3, 4, 5), transposed=True), [2, 0, 1], 2, True), name="all_transposed")
    yield S((T((3, 4, 5)), [], 0, True), name="no_dims")


def _r2c(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 6)), [2], 0, True), name="last_onesided")
    yield S((T((3, 4, 6)), [0], 1, False), name="dim0_full")
    yield S((T((3, 4, 6), transposed=True), [1, 2], 2, True), name="two_transposed")
    yield S((T((3, 4, 6)), [0, 1, 2], 0, True), name="full_onesided")


def _c2r(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4, 5)), [2], 0, 8), name="even")
    yield S((T((3, 4, 5)), [2], 2, 9), name="odd")
    yield S((T((3, 4, 5), transposed=True), [0, 1], 1, 6), name="two_transposed")
    yield S((T((3, 4, 5)), [0, 1, 2], 0, 8), name="three")


def _shift(dtype: str) -> Iterator[SampleInput]:
    yield S((T((4, 5)),), name="all")
    yield S((T((4, 5, 3)),), {"dim": 1}, name="int_dim")
    yield S((T((4, 5, 3), noncontig=True),), {"dim": (0, -1)}, name="dims")


def _freq(dtype: str) -> Iterator[SampleInput]:
    from torchplug.testing.opinfo import Dtype

    for n in (1, 4, 7):
        yield S((n,), {"dtype": Dtype(dtype)}, name=f"n{n}")
    yield S((6, 0.25), {"dtype": Dtype(dtype)}, name="spacing")


_FROM_COMPLEX = ("irfft", "hfft")


def _public() -> list[OpInfo]:
    ops = []
    for name in ("fft", "ifft", "rfft", "ihfft", "irfft", "hfft"):
        gen = _hermitian_1d if name in _FROM_COMPLEX else _one_d
        dtypes = REAL if name in ("rfft", "ihfft") else ALL
        aten = ("_fft_c2r",) if name in _FROM_COMPLEX else ("_fft_r2c", "_fft_c2c")
        ops.append(OpInfo(f"fft.{name}", gen, dtypes=dtypes, aten=(f"fft_{name}", *aten), supports_out=True,
                          tolerances=TOL))
    for suffix, two in (("2", True), ("n", False)):
        for base in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
            name = base + suffix
            dtypes = REAL if base in ("rfft", "ihfft") else ALL
            # torch's ihfftn with one dim writes out= backwards (conj_physical_out's arguments swapped)
            ops.append(OpInfo(f"fft.{name}", _n_d(two), dtypes=dtypes, aten=(f"fft_{name}",),
                              supports_out=name != "ihfftn", tolerances=TOL))
    ops += [
        OpInfo("fft.fftshift", _shift, dtypes=("int64", "float32", "complex64"), aten=("fft_fftshift",)),
        OpInfo("fft.ifftshift", _shift, dtypes=("int64", "float32", "complex64"), aten=("fft_ifftshift",)),
        OpInfo("fft.fftfreq", _freq, dtypes=("float32", "float64", "complex64"), factory=True, aten=(),
               supports_out=False),
        OpInfo("fft.rfftfreq", _freq, dtypes=("float32", "float64"), factory=True, aten=(), supports_out=False),
    ]
    return ops


# the primitives called directly (their out= overloads run through the public functions' out=)
OPS = [
    OpInfo("_fft_c2c", _c2c, dtypes=COMPLEX, op="ops.aten._fft_c2c", aten=("_fft_c2c",), tolerances=TOL),
    OpInfo("_fft_r2c", _r2c, dtypes=("float32", "float64"), op="ops.aten._fft_r2c", aten=("_fft_r2c",),
           tolerances=TOL),
    OpInfo("_fft_c2r", _c2r, dtypes=COMPLEX, op="ops.aten._fft_c2r", aten=("_fft_c2r",), tolerances=TOL),
    *_public(),
]
