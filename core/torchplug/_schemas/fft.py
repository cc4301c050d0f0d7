"""``torchplug.fft``'s primitives, as aten has them: real-to-complex, complex-to-real and complex-to-complex
discrete Fourier transforms over a list of dimensions (see the package docstring).

``normalization`` is aten's ``fft_norm_mode``: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n: the product of the
transformed signal sizes).  The public functions (``torchplug/fft.py``) are composites over these three,
so a backend writes three kernels.
"""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    # onesided: keep only the last transformed dimension's first n//2 + 1 (Hermitian) outputs
    "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor | out",
    # the inverse of a onesided r2c: last_dim_size is the real output's length along dim[-1]
    "_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor | out",
    "_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor | out",
)
