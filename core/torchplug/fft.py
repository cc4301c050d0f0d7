"""``torchplug.fft``: PyTorch's discrete Fourier transforms.

Each function checks its Python arguments as PyTorch's parser does, then calls its aten op (``fft_fft``,
``fft_rfft2``...): composites over the three FFT primitives ``_fft_r2c``, ``_fft_c2r`` and ``_fft_c2c``
(``torchplug/_composites_fft.py``), so a backend writes three kernels, autocast's float32 list applies and
gradients come from the primitives' formulas.  As on PyTorch's cpu, float16/bfloat16 inputs are refused
("Unsupported dtype Half") on every device outside autocast: torchplug has no complex32 dtype for cuda's
half-precision transforms.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import resize_output
from torchplug._tensor.creation import arange
from torchplug._tensor.tensor import Size, Tensor

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
    "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
]


# ---- Python argument checks (PyTorch's parser and its TypeError texts) ------------------------------------
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


# ---- one-dimensional transforms ---------------------------------------------------------------------
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim`` (real input: the full,
    Hermitian-symmetric spectrum).  ``n`` crops or zero-pads the signal; ``norm`` is ``"backward"``
    (default, no scaling), ``"forward"`` (1/n) or ``"ortho"`` (1/sqrt(n))."""
    n, dim = _check_1d("fft", n, dim, norm)
    if out is None:
        return A.fft_fft(input, n, dim, norm)
    return A["fft_fft.out"](input, n, dim, norm, out=out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The one-dimensional inverse discrete Fourier transform (``norm="backward"`` scales by 1/n)."""
    n, dim = _check_1d("ifft", n, dim, norm)
    if out is None:
        return A.fft_ifft(input, n, dim, norm)
    return A["fft_ifft.out"](input, n, dim, norm, out=out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of real ``input``: only the ``n // 2 + 1`` non-redundant (non-negative frequency) outputs."""
    n, dim = _check_1d("rfft", n, dim, norm)
    if out is None:
        return A.fft_rfft(input, n, dim, norm)
    return A["fft_rfft.out"](input, n, dim, norm, out=out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (input.size(dim) - 1)``)."""
    n, dim = _check_1d("irfft", n, dim, norm)
    if out is None:
        return A.fft_irfft(input, n, dim, norm)
    return A["fft_irfft.out"](input, n, dim, norm, out=out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real result of length ``n``."""
    n, dim = _check_1d("hfft", n, dim, norm)
    if out is None:
        return A.fft_hfft(input, n, dim, norm)
    return A["fft_hfft.out"](input, n, dim, norm, out=out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`hfft`: the first ``n // 2 + 1`` outputs of the inverse FFT of real ``input``."""
    n, dim = _check_1d("ihfft", n, dim, norm)
    if out is None:
        return A.fft_ihfft(input, n, dim, norm)
    return A["fft_ihfft.out"](input, n, dim, norm, out=out)


# ---- n-dimensional transforms -----------------------------------------------------------------------
def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT over ``dim`` (default: all dims, or the last ``len(s)``), each cropped or
    zero-padded to ``s``."""
    s, dim = _check_nd("fftn", s, dim, norm)
    if out is None:
        return A.fft_fftn(input, s, dim, norm)
    return A["fft_fftn.out"](input, s, dim, norm, out=out)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional inverse FFT (see :func:`fftn` for ``s`` and ``dim``)."""
    s, dim = _check_nd("ifftn", s, dim, norm)
    if out is None:
        return A.fft_ifftn(input, s, dim, norm)
    return A["fft_ifftn.out"](input, s, dim, norm, out=out)


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of real ``input``, the last transformed dim halved to ``n // 2 + 1``."""
    s, dim = _check_nd("rfftn", s, dim, norm)
    if out is None:
        return A.fft_rfftn(input, s, dim, norm)
    return A["fft_rfftn.out"](input, s, dim, norm, out=out)


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`rfftn`: a real result, ``s[-1]`` (default ``2 * (size - 1)``) long in the last dim."""
    s, dim = _check_nd("irfftn", s, dim, norm)
    if out is None:
        return A.fft_irfftn(input, s, dim, norm)
    return A["fft_irfftn.out"](input, s, dim, norm, out=out)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The N-dimensional FFT of a Hermitian-symmetric signal given by its half along the last dim."""
    s, dim = _check_nd("hfftn", s, dim, norm)
    if out is None:
        return A.fft_hfftn(input, s, dim, norm)
    return A["fft_hfftn.out"](input, s, dim, norm, out=out)


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of :func:`hfftn`: the N-dimensional inverse FFT of real ``input``, last dim halved."""
    s, dim = _check_nd("ihfftn", s, dim, norm)
    if out is None:
        return A.fft_ihfftn(input, s, dim, norm)
    return A["fft_ihfftn.out"](input, s, dim, norm, out=out)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """:func:`fftn` over the last two dims by default."""
    s, dim = _check_nd("fft2", s, dim, norm)
    if out is None:
        return A.fft_fft2(input, s, dim, norm)
    return A["fft_fft2.out"](input, s, dim, norm, out=out)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`ifftn` over the last two dims by default."""
    s, dim = _check_nd("ifft2", s, dim, norm)
    if out is None:
        return A.fft_ifft2(input, s, dim, norm)
    return A["fft_ifft2.out"](input, s, dim, norm, out=out)


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`rfftn` over the last two dims by default."""
    s, dim = _check_nd("rfft2", s, dim, norm)
    if out is None:
        return A.fft_rfft2(input, s, dim, norm)
    return A["fft_rfft2.out"](input, s, dim, norm, out=out)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """:func:`irfftn` over the last two dims by default."""
    s, dim = _check_nd("irfft2", s, dim, norm)
    if out is None:
        return A.fft_irfft2(input, s, dim, norm)
    return A["fft_irfft2.out"](input, s, dim, norm, out=out)


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """:func:`hfftn` over the last two dims by default."""
    s, dim = _check_nd("hfft2", s, dim, norm)
    if out is None:
        return A.fft_hfft2(input, s, dim, norm)
    return A["fft_hfft2.out"](input, s, dim, norm, out=out)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """:func:`ihfftn` over the last two dims by default."""
    s, dim = _check_nd("ihfft2", s, dim, norm)
    if out is None:
        return A.fft_ihfft2(input, s, dim, norm)
    return A["fft_ihfft2.out"](input, s, dim, norm, out=out)


# ---- helpers ------------------------------------------------------------------------------------------
def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero-frequency term to the centre of ``dim`` (default: every dim), as a roll by ``n // 2``."""
    return A.fft_fftshift(input, _ints_arg("fftshift", "dim", dim))


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fftshift` (a roll by ``(n + 1) // 2``)."""
    return A.fft_ifftshift(input, _ints_arg("ifftshift", "dim", dim))


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
