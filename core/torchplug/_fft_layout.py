"""The memory layout of aten's FFT results, shared by the backends' ``_fft_*`` kernels.

PyTorch's cpu FFT kernels (and its meta kernels, mostly) lay the output out as ``_exec_fft`` in
``aten/src/ATen/native/mkl/SpectralOps.cpp`` does: the batch (untransformed) dimensions first, ordered
by decreasing input stride, then the transformed dimensions in the order the kernel visits them, and the
result contiguous in that permuted order.  The kernels here return that permutation; a backend allocates
its result contiguous in it and transposes back (a no-copy view), so ``stride()`` matches torch's.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["c2c_order", "r2c_order", "c2r_order", "strides_for_order", "cufft_c2c_order", "cufft_r2c_order", "cufft_c2r_order"]


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
    """The output's dim order of ``_fft_c2r``: a c2c over ``dims[:-1]`` first, then the c2r over the last
    dim, whose input is that intermediate (laid out by the c2c rule)."""
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
