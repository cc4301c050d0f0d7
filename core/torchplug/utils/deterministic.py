"""``torchplug.utils.deterministic``: ``fill_uninitialized_memory``.

With ``torchplug.use_deterministic_algorithms(True)`` and this flag True (the default), as in
PyTorch, uninitialized memory is filled so results cannot depend on stale bytes: ``empty``,
``empty_like``, ``empty_strided``, ``Tensor.new_empty`` and the part ``Tensor.resize_`` adds hold NaN
(floating and complex: NaN + 0j) or the dtype's largest value (integers; True for bool).
"""

from __future__ import annotations

from typing import Any

__all__ = ["fill_uninitialized_memory", "fill_if_deterministic"]

fill_uninitialized_memory = True


def _fill_value(dtype: Any) -> Any:
    from .. import _dtype as D

    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype is D.bool_:
        return True
    return D.iinfo(dtype).max


def fill_if_deterministic(t: Any) -> Any:
    """Fill ``t`` as PyTorch fills uninitialized memory when determinism asks for it; returns ``t``."""
    from .. import _flags

    if _flags._deterministic and fill_uninitialized_memory and t.numel():
        from .._aten import A

        A["fill_.Scalar"](t, _fill_value(t.dtype))
        t._storage.version = 0  # an internal fill, not a user-visible write
    return t
