"""``torchplug.backends.cpu``: the host's vector instruction level."""

from __future__ import annotations

import functools
import os
import platform

__all__ = ["get_cpu_capability"]

# PyTorch's names, most capable first, with the NumPy CPU features each one needs.
_LEVELS = (
    ("AVX512", ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")),
    ("AVX2", ("AVX2", "FMA3")),
)


@functools.cache
def get_cpu_capability() -> str:
    """The SIMD level the host kernels dispatch to, in PyTorch's spelling: ``'AVX512'``,
    ``'AVX2'``, ``'NO AVX'`` (x86 without AVX2), ``'DEFAULT'`` (other architectures), or
    ``'SVE256'``/``'VSX'``/``'Z VECTOR'`` where NumPy reports them.  ``ATEN_CPU_CAPABILITY``
    lowers it, as in PyTorch (``'default'``, ``'avx2'``, ``'avx512'``)."""
    features = _numpy_cpu_features()
    found = "DEFAULT"
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i386", "i686"):
        found = next((name for name, needs in _LEVELS if all(features.get(f) for f in needs)), "NO AVX")
    elif features.get("SVE"):
        found = "SVE256"
    elif features.get("VSX"):
        found = "VSX"
    elif features.get("VX"):
        found = "Z VECTOR"
    cap = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    order = ["DEFAULT", "NO AVX", "AVX2", "AVX512"]
    if cap and found in order:
        wanted = {"default": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}.get(cap)
        if wanted is not None and order.index(wanted) < order.index(found):
            found = wanted
    return found


def _numpy_cpu_features() -> dict[str, bool]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # NumPy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return {}
    return dict(features)
