"""``torchplug.backends.openmp``: whether the host kernels are parallelised with OpenMP."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: torchplug's host kernels are NumPy's (threads come from its BLAS, not OpenMP)."""
    return False
