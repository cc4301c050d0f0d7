"""``torchplug.backends.mkl``: whether the host BLAS is Intel MKL."""

from __future__ import annotations

import functools

__all__ = ["is_available"]


@functools.cache
def is_available() -> bool:
    """True when NumPy (whose BLAS the host kernels use) is linked against MKL."""
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
    except (TypeError, ValueError):  # NumPy < 1.25 prints instead of returning
        return False
    blas = (config or {}).get("Build Dependencies", {}).get("blas", {})
    return "mkl" in str(blas.get("name", "")).lower()
