"""``torchplug.backends``: PyTorch's backend switches and queries (``torch.backends.*``).

Answers come from what is installed: ``cuda.is_built()`` and ``mps.is_built()`` say whether a
backend registered that device type, ``mps.is_available()`` asks it, ``cpu.get_cpu_capability()``
reports the SIMD level NumPy's kernels dispatch to.  Flags are settable and checked like
PyTorch's (``cudnn.deterministic = 'yes'`` raises); they take effect where they mean something
here: ``opt_einsum`` chooses ``torchplug.einsum``'s contraction order, ``cuda.matmul.allow_tf32``
is the float32 matmul precision (``torchplug.set_float32_matmul_precision``).  torchplug uses no
cuDNN or oneDNN, so ``cudnn.is_available()`` and ``mkldnn.is_available()`` are False and their
flags are only recorded.  Submodules load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from torchplug.backends._flags import disable_global_flags, flags_frozen

__all__ = ["cpu", "cuda", "cudnn", "mps", "mkldnn", "mkl", "openmp", "opt_einsum", "disable_global_flags", "flags_frozen"]

_SUBMODULES = ("cpu", "cuda", "cudnn", "mps", "mkldnn", "mkl", "openmp", "opt_einsum")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# the lookup above first; its plain "has no attribute" for a name PyTorch has becomes "not supported yet"
__getattr__ = _fallback_getattr("torch.backends", __name__, __getattr__)
