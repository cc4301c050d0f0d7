"""What every backend's FFT kernels (``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c``) share: argument checks with
PyTorch's messages, and the memory layout of the results.

PyTorch's cpu FFT kernels lay the output out as ``_exec_fft`` in ``aten/src/ATen/native/mkl/SpectralOps.cpp``
does: the batch (untransformed) dimensions first, ordered by decreasing input stride, then the transformed
dimensions in the order the kernel visits them, and the result contiguous in that permuted order.  The
functions here return that permutation; a backend allocates its result contiguous in it and transposes back
(a no-copy view), so ``stride()`` matches torch's.
"""

from __future__ import annotations

from collections.abc import Sequence

from torchplug._base import dtype as D
from torchplug._ops.composites import scalar_type_name

__all__ = [
    "check_input", "check_c2r_size", "c2c_order", "r2c_order", "c2r_order", "strides_for_order",
    "cufft_c2c_order", "cufft_r2c_order", "cufft_c2r_order",
]

_REAL = (D.float32, D.float64)
_COMPLEX = (D.complex64, D.complex128)


def check_input(name: str, dtype: D.dtype, ndim: int, dims: Sequence[int], normalization: int,
                complex_input: bool) -> None:
    """Refuse what the kernels cannot transform: a dtype other than float32/float64 (``complex_input``
    False) or complex64/complex128 (True), a normalization mode other than 0/1/2, dims out of range, and
    (r2c/c2r) an empty dim list."""
    if complex_input and dtype not in _COMPLEX:
        raise RuntimeError(f"Only supports complex dtypes, but found: {scalar_type_name(dtype)}")
    if not complex_input and dtype not in _REAL:
        if dtype in _COMPLEX:
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {scalar_type_name(dtype)}")
        raise RuntimeError(f"FFT doesn't support tensors of type: {scalar_type_name(dtype)}")
    if normalization not in (0, 1, 2):
        raise RuntimeError(
            f"Invalid FFT normalization mode {normalization}: expected 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n)"
        )
    n = max(ndim, 1)
    for d in dims:
        if not 0 <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    if not dims and name != "_fft_c2c":
        raise RuntimeError(f"{name}: dim must name at least one dimension to transform")


def check_c2r_size(sizes: Sequence[int], dims: Sequence[int], last_dim_size: int) -> None:
    """A c2r's input must hold ``last_dim_size // 2 + 1`` points along its last transformed dim."""
    last = dims[-1]
    need = last_dim_size // 2 + 1
    if last_dim_size < 1 or sizes[last] != need:
        raise RuntimeError(
            f"_fft_c2r: an output of {last_dim_size} points along dim {last} needs {need} input points there "
            f"(n // 2 + 1), but the input has {sizes[last]}"
        )


def _sort_dims(strides: Sequence[int], dims: Sequence[int], exclude_last: bool = False) -> list[int]:
    """aten's ``_sort_dims``: the transformed dims by decreasing input stride (the last kept last if asked)."""
    dims = list(dims)
    end = len(dims) - int(exclude_last)
    dims[:end] = sorted(dims[:end], key=lambda d: strides[d], reverse=True)
    return dims


def _exec_order(strides: Sequence[int], ndim: int, dims: Sequence[int]) -> list[int]:
    """``_exec_fft``'s permutation: batch dims by decreasing input stride, then ``dims`` as given."""
    transformed = set(dims)
    batch = sorted((d for d in range(ndim) if d not in transformed), key=lambda d: strides[d], reverse=True)
    return batch + list(dims)


def strides_for_order(sizes: Sequence[int], order: Sequence[int]) -> list[int]:
    """Strides of a tensor of ``sizes`` that is contiguous when its dims are permuted by ``order``."""
    strides = [0] * len(sizes)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(sizes[d], 1)
    return strides


def c2c_order(strides: Sequence[int], dims: Sequence[int]) -> list[int]:
    """The output's dim order of ``_fft_c2c`` for an input with ``strides``."""
    return _exec_order(strides, len(strides), _sort_dims(strides, dims))


def r2c_order(strides: Sequence[int], dims: Sequence[int]) -> list[int]:
    """The output's dim order of ``_fft_r2c`` (the halved last dim stays last among the transformed)."""
    return _exec_order(strides, len(strides), _sort_dims(strides, dims, exclude_last=True))


def c2r_order(strides: Sequence[int], sizes: Sequence[int], dims: Sequence[int]) -> list[int]:
    """The output's dim order of ``_fft_c2r``: a c2c over ``dims[:-1]`` first, then the c2r over the
    last dim, whose input is that intermediate (laid out by the c2c rule)."""
    if len(dims) > 1:
        strides = strides_for_order(sizes, c2c_order(strides, dims[:-1]))
    return _exec_order(strides, len(strides), [dims[-1]])


# ---- PyTorch's meta kernels: the cuFFT layout -----------------------------------------------------------
# torch's meta FFT kernels (torch/_meta_registrations.py) lay results out as its cuda kernels do: a c2c in
# stages of at most three dims re-sorted by the working tensor's strides, an r2c whose last dim is
# transformed first unless cuFFT takes all dims at once, a c2r from a contiguous copy.  The meta backend
# follows them so shapes and strides there match torch's meta tensors.
_CUFFT_MAX_NDIM = 3


def _cufft_all_at_once(dims: Sequence[int]) -> bool:
    return not (len(dims) > _CUFFT_MAX_NDIM or (len(dims) >= 2 and dims[0] == 0 and dims[1] == 1))


def _by_stride(dims: Sequence[int], strides: Sequence[int]) -> list[int]:
    return sorted(dims, key=lambda d: strides[d], reverse=True)


def _staged_c2c(strides: Sequence[int], sizes: Sequence[int], dims: Sequence[int]) -> list[int]:
    """The order after c2c stages over ``dims`` (at most three per stage), each re-sorting what is left."""
    left = list(dims)
    while True:
        left = _by_stride(left, strides)
        count = min(_CUFFT_MAX_NDIM, len(left))
        order = _exec_order(strides, len(strides), left[len(left) - count:])
        left = left[: len(left) - count]
        if not left:
            return order
        strides = strides_for_order(sizes, order)


def cufft_c2c_order(strides: Sequence[int], sizes: Sequence[int], dims: Sequence[int]) -> list[int]:
    """The output's dim order of torch's meta (cuda) ``_fft_c2c``."""
    return _staged_c2c(strides, sizes, dims)


def cufft_r2c_order(strides: Sequence[int], sizes: Sequence[int], dims: Sequence[int], onesided: bool) -> list[int]:
    """The output's dim order of torch's meta (cuda) ``_fft_r2c``; ``sizes`` are the input's."""
    ndim = len(strides)
    if _cufft_all_at_once(dims):
        return _exec_order(strides, ndim, dims)
    half = list(sizes)
    half[dims[-1]] = sizes[dims[-1]] // 2 + 1
    order = _exec_order(strides, ndim, [dims[-1]])
    if len(dims) > 1:
        order = _staged_c2c(strides_for_order(half, order), half, dims[:-1])
        if not onesided:  # the full-length result is a fresh contiguous tensor
            return list(range(ndim))
    return order


def cufft_c2r_order(sizes: Sequence[int], dims: Sequence[int], strides: Sequence[int]) -> list[int]:
    """The output's dim order of torch's meta (cuda) ``_fft_c2r``; ``sizes``/``strides`` are the input's."""
    ndim = len(sizes)
    contiguous = strides_for_order(sizes, list(range(ndim)))
    if _cufft_all_at_once(dims):
        return _exec_order(contiguous, ndim, dims)
    if len(dims) > 1:
        contiguous = strides_for_order(sizes, _staged_c2c(strides, sizes, dims[:-1]))
    return _exec_order(contiguous, ndim, [dims[-1]])
