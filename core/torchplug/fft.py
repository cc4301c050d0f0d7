"""``torchplug.fft``: PyTorch's discrete Fourier transforms, as composites over aten's three FFT primitives.

Every function below reduces to ``_fft_r2c`` (real to complex), ``_fft_c2r`` (complex to real) or
``_fft_c2c`` (complex to complex) after PyTorch's argument handling (``aten/src/ATen/native/SpectralOps.cpp``):
integer inputs compute in the default float dtype, real inputs of complex transforms become complex,
``n``/``s`` crop or zero-pad the signal, and ``norm`` picks the scaling the primitive applies.  Gradients
come from the primitives' formulas in the autograd plugin.  As on PyTorch's cpu, float16/bfloat16 inputs
are refused ("Unsupported dtype Half") on every device: torchplug has no complex32 dtype for cuda's
half-precision transforms.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

from . import _dtype as D
from ._aten import A
from ._composites import resize_output, scalar_type_name
from ._creation import arange
from ._tensor import Size, Tensor, _wrap_dim

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
]

# aten's fft_norm_mode values
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2
_COMPLEX_OF = {D.float32: D.complex64, D.float64: D.complex128}


# ---- argument handling (SpectralOps.cpp) ------------------------------------------------------------
def _norm_mode(norm: str | None, forward: bool) -> int:
    """aten's ``norm_from_string``: the scaling the primitive applies for ``norm`` in this direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _type_error(fname: str, arg: str, expected: str, value: Any) -> TypeError:
    return TypeError(f"fft_{fname}(): argument '{arg}' must be {expected}, not {type(value).__name__}")


def _int_arg(fname: str, arg: str, value: Any) -> int:
    """An int argument as PyTorch's parser takes it (bools and floats refused)."""
    if isinstance(value, builtins.bool) or not hasattr(value, "__index__"):
        raise _type_error(fname, arg, "int", value)
    return operator.index(value)


def _ints_arg(fname: str, arg: str, value: Any) -> list[int] | None:
    """An ``int[]?`` argument: None, an int, or a sequence of ints."""
    if value is None:
        return None
    if hasattr(value, "__index__") and not isinstance(value, builtins.bool):
        return [operator.index(value)]
    if not isinstance(value, (tuple, list, Size)) or any(
            isinstance(v, builtins.bool) or not hasattr(v, "__index__") for v in value):
        raise _type_error(fname, arg, "tuple of ints", value)
    return [operator.index(v) for v in value]


def _check_1d(fname: str, n: Any, dim: Any, norm: Any) -> tuple[int | None, int]:
    if norm is not None and not isinstance(norm, str):
        raise _type_error(fname, "norm", "str", norm)
    return (None if n is None else _int_arg(fname, "n", n)), _int_arg(fname, "dim", dim)


def _check_nd(fname: str, s: Any, dim: Any, norm: Any) -> tuple[list[int] | None, list[int] | None]:
    if norm is not None and not isinstance(norm, str):
        raise _type_error(fname, "norm", "str", norm)
    return _ints_arg(fname, "s", s), _ints_arg(fname, "dim", dim)


def _promote(t: Tensor, require_complex: bool = False) -> Tensor:
    """aten's ``promote_tensor_fft``: integers compute in the default float dtype; only float32/float64
    (and complex) transform; complex transforms of real data make it complex first."""
    dt = t.dtype
    if dt.is_complex:
        return t
    if not dt.is_floating_point:
        dt = D.get_default_dtype()
    if dt not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {scalar_type_name(dt)}")
    if require_complex:
        dt = _COMPLEX_OF[dt]
    return t if dt is t.dtype else t.to(dt)


def _wrap(dim: int, ndim: int) -> int:
    """``maybe_wrap_dim`` without scalar wrapping: a 0-dim tensor has no dimension to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """aten's ``resize_fft_input``: crop (a view) or zero-pad (one copy) each dim to its size."""
    pad = [0] * (2 * x.dim())
    padded = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        have = x.shape[d]
        if have < n:
            padded = True
            pad[len(pad) - 2 * d - 1] = n - have
        elif have > n:
            x = x.narrow(d, 0, n)
    return A.constant_pad_nd(x, pad) if padded else x


def _shape_and_dims(x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int]]:
    """aten's ``canonicalize_fft_shape_and_dim_args``: the signal sizes and the wrapped, unique dims."""
    ndim = x.dim()
    shape, dims = s, dim
    if dims is not None:
        dims = [_wrap(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if shape is not None:
        if dims is not None and len(dims) != len(shape):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(shape) > ndim:
            raise RuntimeError(f"Got shape with {len(shape)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(shape), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, shape)]
    elif dims is None:
        shape, dims = list(x.shape), list(range(ndim))
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _c2r_shape_and_dims(name: str, x: Tensor, s: Any, dim: Any) -> tuple[list[int], list[int], int]:
    """``_shape_and_dims`` for a complex-to-real transform: also the real output's last-dim length,
    with the input's last transformed size cut to the Hermitian half it needs."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    last_size = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_points(last_size)
    shape[-1] = last_size // 2 + 1
    return shape, dims, last_size


def _check_out(name: str, out: Tensor | None, complex_out: bool) -> None:
    if out is None:
        return
    if complex_out and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got {scalar_type_name(out.dtype)}")
    if not complex_out and not out.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got {scalar_type_name(out.dtype)}")


# ---- the primitives, with or without out= -------------------------------------------------------------
def _c2c(name: str, x: Tensor, dims: Sequence[int], norm: int, forward: bool, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_c2c(x, list(dims), norm, forward)
    _check_out(name, out, True)
    return A["_fft_c2c.out"](x, list(dims), norm, forward, out=out)


def _r2c(name: str, x: Tensor, dims: Sequence[int], norm: int, onesided: bool, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_r2c(x, list(dims), norm, onesided)
    _check_out(name, out, True)
    return A["_fft_r2c.out"](x, list(dims), norm, onesided, out=out)


def _c2r(name: str, x: Tensor, dims: Sequence[int], norm: int, last_size: int, out: Tensor | None) -> Tensor:
    if out is None:
        return A._fft_c2r(x, list(dims), norm, last_size)
    _check_out(name, out, False)
    return A["_fft_c2r.out"](x, list(dims), norm, last_size, out=out)


def _conj_into(result: Tensor, out: Tensor | None) -> Tensor:
    """The conjugate of ``result``: a lazy conj view, or written into ``out`` (``conj_physical_out``)."""
    if out is None:
        return result.conj()
    return A["conj_physical.out"](result, out=out)


# ---- one-dimensional transforms ---------------------------------------------------------------------
def _fft_r2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool, onesided: bool,
             out: Tensor | None) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {scalar_type_name(input.dtype)}")
    _check_out(name, out, True)
    x = _promote(input)
    d = _wrap(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [d], [n])
    mode = _norm_mode(norm, forward)
    if forward:
        return _r2c(name, x, [d], mode, onesided, out)
    return _conj_into(A._fft_r2c(x, [d], mode, onesided), out)  # aten has no native inverse r2c


def _fft_c2r(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
             out: Tensor | None) -> Tensor:
    _check_out(name, out, False)
    x = _promote(input, require_complex=True)
    d = _wrap(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [d], [size // 2 + 1])
    if forward:
        x = x.conj()  # hfft is the c2r of the conjugate (aten has no forward c2r)
    return _c2r(name, x, [d], _norm_mode(norm, forward), size, out)


def _fft_c2c(name: str, input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool,
             out: Tensor | None) -> Tensor:
    if not input.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {scalar_type_name(input.dtype)}")
    d = _wrap(dim, input.dim())
    size = input.shape[d] if n is None else n
    _check_points(size)
    x = input if n is None else _resize(input, [d], [n])
    return _c2c(name, x, [d], _norm_mode(norm, forward), forward, out)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (real input: the full,
    Hermitian-symmetric spectrum).  ``n`` crops or zero-pads the signal; ``norm`` is ``"backward"``
    (default, no scaling), ``"forward"`` (1/n) or ``"ortho"`` (1/sqrt(n))."""
    n, dim = _check_1d("fft", n, dim, norm)
    if input.dtype.is_complex:
        return _fft_c2c("fft", input, n, dim, norm, True, out)
    return _fft_r2c("fft", input, n, dim, norm, True, False, out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform (``norm="backward"`` scales by 1/n)."""
    n, dim = _check_1d("ifft", n, dim, norm)
    if input.dtype.is_complex:
        return _fft_c2c("ifft", input, n, dim, norm, False, out)
    return _fft_r2c("ifft", input, n, dim, norm, False, False, out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of real ``input``: only the ``n // 2 + 1`` non-redundant (non-negative frequency) outputs."""
    n, dim = _check_1d("rfft", n, dim, norm)
    return _fft_r2c("rfft", input, n, dim, norm, True, True, out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (input.size(dim) - 1)``)."""
    n, dim = _check_1d("irfft", n, dim, norm)
    return _fft_c2r("irfft", input, n, dim, norm, False, out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real result of length ``n``."""
    n, dim = _check_1d("hfft", n, dim, norm)
    return _fft_c2r("hfft", input, n, dim, norm, True, out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`hfft`: the first ``n // 2 + 1`` outputs of the inverse FFT of real ``input``."""
    n, dim = _check_1d("ihfft", n, dim, norm)
    return _fft_r2c("ihfft", input, n, dim, norm, False, True, out)


# ---- n-dimensional transforms -----------------------------------------------------------------------
def _fftn_c2c(input: Tensor, s: Any, dim: Any, norm: str | None, forward: bool, out: Tensor | None) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, require_complex=True)
    x = _resize(x, dims, shape)
    return _c2c("fftn", x, dims, _norm_mode(norm, forward), forward, out)


def _rfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {scalar_type_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    return _r2c("rfftn", x, dims, _norm_mode(norm, True), True, out)


def _irfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims, last_size = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _c2r("irfftn", x, dims, _norm_mode(norm, False), last_size, out)


def _hfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims, last_size = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = A._fft_c2c(x, dims[:-1], mode, True)
    return _c2r("hfftn", x.conj(), dims[-1:], mode, last_size, out)


def _ihfftn(input: Tensor, s: Any, dim: Any, norm: str | None, out: Tensor | None) -> Tensor:
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    mode = _norm_mode(norm, False)
    half = A._fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _conj_into(half, out)
    return _c2c("ihfftn", A.conj_physical(half), dims[:-1], mode, False, out)


def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT over ``dim`` (default: all dims, or the last ``len(s)``), each cropped or
    zero-padded to ``s``."""
    s, dim = _check_nd("fftn", s, dim, norm)
    return _fftn_c2c(input, s, dim, norm, True, out)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional inverse FFT (see :func:`fftn` for ``s`` and ``dim``)."""
    s, dim = _check_nd("ifftn", s, dim, norm)
    return _fftn_c2c(input, s, dim, norm, False, out)


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of real ``input``, the last transformed dim halved to ``n // 2 + 1``."""
    s, dim = _check_nd("rfftn", s, dim, norm)
    return _rfftn(input, s, dim, norm, out)


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`rfftn`: a real result, ``s[-1]`` (default ``2 * (size - 1)``) long in the last dim."""
    s, dim = _check_nd("irfftn", s, dim, norm)
    return _irfftn(input, s, dim, norm, out)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of a Hermitian-symmetric signal given by its half along the last dim."""
    s, dim = _check_nd("hfftn", s, dim, norm)
    return _hfftn(input, s, dim, norm, out)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`hfftn`: the N-dimensional inverse FFT of real ``input``, last dim halved."""
    s, dim = _check_nd("ihfftn", s, dim, norm)
    return _ihfftn(input, s, dim, norm, out)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """:func:`fftn` over the last two dims by default."""
    s, dim = _check_nd("fft2", s, dim, norm)
    return _fftn_c2c(input, s, dim, norm, True, out)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`ifftn` over the last two dims by default."""
    s, dim = _check_nd("ifft2", s, dim, norm)
    return _fftn_c2c(input, s, dim, norm, False, out)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`rfftn` over the last two dims by default."""
    s, dim = _check_nd("rfft2", s, dim, norm)
    return _rfftn(input, s, dim, norm, out)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """:func:`irfftn` over the last two dims by default."""
    s, dim = _check_nd("irfft2", s, dim, norm)
    return _irfftn(input, s, dim, norm, out)


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`hfftn` over the last two dims by default."""
    s, dim = _check_nd("hfft2", s, dim, norm)
    return _hfftn(input, s, dim, norm, out)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """:func:`ihfftn` over the last two dims by default."""
    s, dim = _check_nd("ihfft2", s, dim, norm)
    return _ihfftn(input, s, dim, norm, out)


# ---- helpers ------------------------------------------------------------------------------------------
def _shift(input: Tensor, dim: Any, inverse: bool) -> Tensor:
    given = _ints_arg("ifftshift" if inverse else "fftshift", "dim", dim)
    dims = list(range(input.dim())) if given is None else [_wrap_dim(d, input.dim()) for d in given]
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return A.roll(input, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero-frequency term to the centre of ``dim`` (default: every dim), as a roll by ``n // 2``."""
    return _shift(input, dim, False)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift` (a roll by ``(n + 1) // 2``)."""
    return _shift(input, dim, True)


def _check_freq(fname: str, n: Any, d: Any) -> None:
    if isinstance(n, builtins.bool) or not hasattr(n, "__index__"):
        raise TypeError(f"fft_{fname}(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if not isinstance(d, (builtins.int, builtins.float)):
        raise _type_error(fname, "d", "float", d)


def _freq_dtype(dtype: Any, out: Tensor | None) -> Any:
    dt = out.dtype if out is not None else (dtype or D.get_default_dtype())
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("fftfreq requires a floating point or complex dtype")
    return dt


def _freq_result(values: Tensor, n: int, d: float, dtype: Any, out: Tensor | None, requires_grad: bool) -> Tensor:
    result = values * (1.0 / (n * d))
    if out is not None:
        resize_output(out, result.shape)
        return A.copy_(out, result)
    if requires_grad:
        result.requires_grad_(True)
    return result


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    _check_freq("fftfreq", n, d)
    dt = _freq_dtype(dtype, out)
    values = A.cat([arange(0, (n + 1) // 2, dtype=dt, device=device), arange(-(n // 2), 0, dtype=dt, device=device)])
    return _freq_result(values, n, d, dt, out, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of :func:`rfft`'s ``n // 2 + 1`` outputs: ``[0, 1, ..., n // 2] / (d * n)``."""
    _check_freq("rfftfreq", n, d)
    dt = _freq_dtype(dtype, out)
    values = arange(0, n // 2 + 1, dtype=dt, device=device)
    return _freq_result(values, n, d, dt, out, requires_grad)
