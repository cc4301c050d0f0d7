"""``torchplug.signal.windows``: the window functions of ``torch.signal.windows`` (SciPy's definitions), each
a ``linspace`` grid mapped through elementwise ops, so they run on any backend and follow ``requires_grad``.

Every window takes the length ``M`` and the keywords ``sym`` (True: symmetric, for filter design; False:
periodic, for spectral analysis), ``dtype`` (float32 or float64; default the default dtype), ``layout``
(strided only), ``device`` and ``requires_grad``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from torchplug._base import dtype as D
from torchplug._base.layout import strided
from torchplug._ops.torch_namespace import TORCH
from torchplug._tensor.tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M: int, dtype: Any, layout: Any) -> Any:
    """torch's common checks (in its order and words); returns the dtype to use."""
    dtype = D.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool, one: bool = True) -> Tensor | None:
    """The window of length 0 (empty) or, where the window has it, of length 1 (a one)."""
    if M == 0:
        return TORCH.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and one:
        return TORCH.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(M: int, start: Any, step: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    """``start, start + step, ..., start + (M - 1) * step``."""
    return TORCH.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype: Any = None,
                layout: Any = strided, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    empty = _trivial(M, dtype, device, requires_grad, one=False)
    if empty is not None:
        return empty
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    return TORCH.exp(-TORCH.abs(_grid(M, -center / tau, 1 / tau, dtype, device, requires_grad)))


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``."""
    dtype = _checks("cosine", M, dtype, layout)
    empty = _trivial(M, dtype, device, requires_grad, one=False)
    if empty is not None:
        return empty
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return TORCH.sin(_grid(M, 0.5 * step, step, dtype, device, requires_grad))


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None, layout: Any = strided,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window ``exp(-(n - c)^2 / (2 std^2))`` centred in the window."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    empty = _trivial(M, dtype, device, requires_grad, one=False)
    if empty is not None:
        return empty
    step = 1 / (std * math.sqrt(2))
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(M, start * step, step, dtype, device, requires_grad)
    return TORCH.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None, layout: Any = strided,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    b = TORCH.tensor(beta, dtype=dtype, device=device)  # in the window's dtype, so the grid's end stays <= beta
    step = 2.0 * b / (M if not sym else M - 1)
    end = TORCH.minimum(b, -b + (M - 1) * step)
    k = TORCH.linspace(-b, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return TORCH.i0(TORCH.sqrt(b * b - TORCH.pow(k, 2))) / TORCH.i0(b)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype: Any = None, layout: Any = strided,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    """The generalized cosine window ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _grid(M, 0, 2 * math.pi / (M if not sym else M - 1), dtype, device, requires_grad)
    coeffs = TORCH.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                          requires_grad=requires_grad)
    i = TORCH.arange(coeffs.shape[0], dtype=dtype, device=device)
    return (coeffs.unsqueeze(-1) * TORCH.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None, layout: Any = strided,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window (``general_cosine`` with 0.42, 0.5, 0.08)."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    return 1 - TORCH.abs(_grid(M, -1, 2 / (M if not sym else M - 1), dtype, device, requires_grad))


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = strided, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
