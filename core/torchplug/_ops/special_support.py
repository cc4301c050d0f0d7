"""What every backend's ``special_*`` kernels share: PyTorch's dtype rules for them.

Integer and bool inputs compute in the default float dtype; complex inputs are refused.  Most of these
kernels exist in PyTorch's cpu build for float32/float64 only (float16/bfloat16 raise ``"<op>_cpu" not
implemented for 'Half'``); ``entr``, ``i0e``, ``i1e``, ``i1`` and ``xlog1py`` also take the half types,
computed in float32.
"""

from __future__ import annotations

from torchplug._base import dtype as D
from torchplug._ops.composites import scalar_type_name

__all__ = ["HALF_OK", "kernel_name", "float_result"]

# ops whose PyTorch cpu kernels accept float16/bfloat16
HALF_OK = frozenset({"special_entr", "special_i0e", "special_i1e", "special_xlog1py"})
_FLOATING = (D.float32, D.float64)
_HALF = (D.float16, D.bfloat16)


def kernel_name(op: str) -> str:
    """The kernel PyTorch names in its dtype errors: ``special_bessel_j0`` -> ``bessel_j0_cpu``."""
    return op.removeprefix("special_") + "_cpu"


def float_result(op: str, dtype: D.dtype) -> D.dtype:
    """The result dtype of ``op`` for (promoted) input ``dtype``, or PyTorch's NotImplementedError."""
    if not (dtype.is_floating_point or dtype.is_complex):
        dtype = D.get_default_dtype()
    if dtype in _FLOATING or (dtype in _HALF and op in HALF_OK):
        return dtype
    raise NotImplementedError(f'"{kernel_name(op)}" not implemented for \'{scalar_type_name(dtype)}\'')
