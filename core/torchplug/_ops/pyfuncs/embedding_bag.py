"""``torch.embedding_bag``: ATen's operator behind ``nn.functional.embedding_bag``, with its integer ``mode`` and
its four results ``(output, offset2bag, bag_size, max_indices)``.

The output is ``nn.functional.embedding_bag``'s composition; the other three are the bookkeeping ATen's cpu
kernel returns for its backward, reproduced as it fills them: ``offset2bag`` is each index's bag (left empty by
the sum fast path of float32/float16/bfloat16 weights without ``padding_idx``), ``bag_size`` the non-padding
indices per bag (for sum one zero per offset), ``max_indices`` the row that gave each maximum (the first one on ties; for mean
a copy of ``bag_size``, for sum zeros).
"""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.nn_functional_more import _bags, bag_argmax
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS", "embedding_bag"]

_MODES = ("sum", "mean", "max")
_FAST_SUM_DTYPES = (D.float32, D.float16, D.bfloat16)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Sums (``mode=0``), means (1) or maxima (2) of bags of ``weight`` rows: ``indices[offsets[b]:offsets[b+1]]``
    is bag ``b``.  Returns ``(output, offset2bag, bag_size, max_indices)``."""
    if mode not in (0, 1, 2) or isinstance(mode, bool):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    if offsets.dim() == 1 and offsets.shape[0]:
        last = int(offsets[-1].item())
        if last > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {indices.shape[0]} but got "
                               f"offsets[-1] of {last}")
    name = _MODES[mode]
    output = _bags(weight, indices, offsets, name, per_sample_weights, include_last_offset, padding_idx,
                   scale_grad_by_freq)
    index_dtype = D.int64 if D.int64 in (indices.dtype, offsets.dtype) else D.int32
    device = weight.device
    bags = max(offsets.shape[0] - (1 if include_last_offset else 0), 0)
    n = indices.shape[0]
    positions = A["arange.start_step"](0, n, 1, dtype=D.int64, device=device)
    starts = A.narrow(offsets.to(D.int64), 0, 0, bags)
    bag_of = A.sub(A["searchsorted.Tensor"](starts, positions, right=True), 1)  # each index's bag
    fast_sum = mode == 0 and weight.dtype in _FAST_SUM_DTYPES and padding_idx is None
    offset2bag = A.zeros([0], dtype=index_dtype, device=device) if fast_sum else bag_of.to(index_dtype)
    if mode == 0:  # one zero per offset, the last one of include_last_offset too (as ATen's cpu kernel)
        zeros = A.zeros([offsets.shape[0]], dtype=index_dtype, device=device)
        return output, offset2bag, zeros, zeros.clone()
    counted = A.ones([n], dtype=D.int64, device=device)
    if padding_idx is not None:
        counted = (indices != padding_idx % weight.shape[0]).to(D.int64)
    in_range = (bag_of < bags)  # indices past the last bag (include_last_offset) count nowhere
    bag_size = A.index_add(A.zeros([bags], dtype=D.int64, device=device), 0,
                           A.masked_select(bag_of, in_range), A.masked_select(counted, in_range)).to(index_dtype)
    if mode == 1:
        return output, offset2bag, bag_size, bag_size.clone()
    return output, offset2bag, bag_size, _max_rows(weight, indices, bag_of, bags, counted, in_range, index_dtype)


def _max_rows(weight: Tensor, indices: Tensor, bag_of: Tensor, bags: int, counted: Tensor, in_range: Tensor,
              index_dtype: D.dtype) -> Tensor:
    """For each bag and column, the row of ``weight`` that holds the bag's maximum there (the first index of the
    bag that reaches it); 0 for empty bags."""
    device = weight.device
    keep = A.logical_and(in_range, counted != 0)
    chosen = A.masked_select(A["arange.start_step"](0, indices.shape[0], 1, dtype=D.int64, device=device), keep)
    if chosen.numel() == 0:
        return A.zeros([bags, weight.shape[1]], dtype=index_dtype, device=device)
    rows = A.index_select(indices.to(D.int64), 0, chosen)
    slot, found = bag_argmax(A.index_select(weight.detach(), 0, rows), A.index_select(bag_of, 0, chosen), bags)
    picked = A.index_select(rows, 0, A.clamp(slot, None, rows.shape[0] - 1).reshape([-1])).reshape(list(slot.shape))
    return picked.masked_fill(found.logical_not(), 0).to(index_dtype)


FUNCTIONS: dict[str, Any] = {"embedding_bag": embedding_bag}
METHODS: dict[str, Any] = {}
