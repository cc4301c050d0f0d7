"""``torchplug.fft``'s primitives, as aten has them: real-to-complex, complex-to-real and complex-to-complex
discrete Fourier transforms over a list of dimensions (see the package docstring).

``normalization`` is aten's ``fft_norm_mode``: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the product of the
transformed signal sizes).  The ``fft_*`` rows are PyTorch's composites over these three
(``_composites_fft.py``), so a backend writes three kernels.
"""

from __future__ import annotations

__all__ = ["ROWS"]

_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")

ROWS = (
    # onesided: keep only the last transformed dimension's first n//2 + 1 (Hermitian) outputs
    "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor | out",
    # the inverse of a onesided r2c: last_dim_size is the real output's length along dim[-1]
    "_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor | out",
    "_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor | out",
    # ---- torchplug.fft's functions (composites) -----------------------------------------------------------
    *(f"fft_{name}(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor | out composite"
      for name in _ONE_D),
    *(f"fft_{name}2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2, -1], str? norm=None) -> Tensor | out composite"
      for name in _ONE_D),
    *(f"fft_{name}n(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor | out composite"
      for name in _ONE_D),
    "fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor | composite",
    "fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor | composite",
)
