"""Empty tensors shaped after others: ``empty_like``'s stride rules and the resize of ``out=`` tensors.

Factories, copies and ``out=`` kernels all need these; they sit with the Tensor so that creation
does not reach up into the op layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torchplug._base import dtype as D, flags as _flags
from torchplug._base.user_warning import warn_at_caller
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor

__all__ = ["resize_output", "dense_strides", "infer_dense_strides", "fill_if_deterministic"]


def resize_output(out: Tensor, shape: Sequence[int]) -> None:
    """Give ``out`` a new buffer of ``shape`` (PyTorch's resize_output), warning if it had data."""
    if tuple(out.shape) == tuple(shape):
        return
    if out.numel() != 0:
        warn_at_caller(
            f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does "
            f"not match the required output shape {list(shape)}. This behavior is deprecated; resize the output "
            "with Tensor.resize_(0) first.")
    fresh = A.empty(list(shape), dtype=out._dtype, device=out._device)
    out._data = fresh._data
    out._storage = fresh._storage


def dense_strides(t: Tensor) -> list[int] | None:
    """Strides of ``t`` if it is non-overlapping and dense (a permuted contiguous layout), else None.

    ``clone``/``to`` with ``preserve_format`` keep such layouts, as PyTorch does."""
    sizes, strides = list(t.shape), list(t.stride())
    order = sorted(range(len(sizes)), key=lambda d: (strides[d], sizes[d]))
    expected = 1
    for d in order:
        if sizes[d] == 1:
            continue
        if strides[d] != expected:
            return None
        expected *= sizes[d]
    return strides


def infer_dense_strides(sizes: Sequence[int], strides: Sequence[int]) -> list[int]:
    """Dense strides with the dim order of ``strides`` (ATen's infer_dense_strides: an insertion sort of
    the dims by stride, larger size first on ties, zero strides ambiguous)."""
    n = len(sizes)
    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            a, b = perm[d0], perm[d1]
            sa, sb = strides[a], strides[b]
            if sa == 0 or sb == 0:
                continue
            if sa < sb:
                break
            if sa > sb or sizes[a] > sizes[b]:
                perm[d0], perm[d1] = b, a
                d1 = d0
            else:
                continue
    out = [0] * n
    step = 1
    for d in perm:
        out[d] = step
        if sizes[d] > 1:
            step *= sizes[d]
    return out


def _empty_like(self: Tensor, dtype: Any, device: Any, memory_format: Any) -> Tensor:
    if memory_format in (None, "preserve_format") and not self.is_contiguous():
        strides = dense_strides(self)
        if strides is None:  # not dense: keep the input's dim order (ATen's empty_like, preserve_format)
            strides = infer_dense_strides(list(self.shape), list(self.stride()))
        return A.empty_strided(list(self.shape), strides, dtype=dtype, device=device)
    return A.empty(list(self.shape), dtype=dtype, device=device)


def _fill_value(dtype: Any) -> Any:
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype is D.bool_:
        return True
    return D.iinfo(dtype).max


def fill_if_deterministic(t: Any) -> Any:
    """Fill ``t`` as PyTorch fills uninitialized memory when determinism asks for it; returns ``t``.

    With ``use_deterministic_algorithms(True)`` and ``fill_uninitialized_memory`` (the default) new
    memory holds NaN (floating and complex: NaN + 0j) or the dtype's largest value (integers; True for
    bool), so results cannot depend on stale bytes."""
    if _flags._deterministic and _flags._fill_uninitialized_memory and t.numel():
        A["fill_.Scalar"](t, _fill_value(t.dtype))
        t._storage.version = 0  # an internal fill, not a user-visible write
    return t
