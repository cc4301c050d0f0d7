"""``torch.nn.functional`` functions composed from other ops: pdist, lp_pool1d/2d/3d, embedding_bag and
max_unpool1d/2d/3d (re-exported through ``nn_functional_impl``).

Each follows PyTorch's Python function (argument normalization, the Python-level checks and their
exception types) and ATen's kernel for the arithmetic, written in ops every backend and autograd
already have.
"""

from __future__ import annotations

import warnings
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor

__all__ = ["pdist", "lp_pool1d", "lp_pool2d", "lp_pool3d", "embedding_bag", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]


def _tuple(value: Any, n: int) -> list[int]:
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value]
    return [int(value)] * n


# ---- pdist -----------------------------------------------------------------------------------------------
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between every pair of rows (i < j), in row-major order of the pairs."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input._dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if not input.is_contiguous():  # ATen: _pdist_forward(self.contiguous(), p)
        input = A.clone(input, memory_format="contiguous_format")
    return A._pdist_forward(input, p)


# ---- lp_pool --------------------------------------------------------------------------------------------
def _lp_finish(out: Tensor, norm_type: float, window: int) -> Tensor:
    # torch: (sign(out) * relu(abs(out))).mul(window).pow(1 / p): negative averages (odd p) give 0
    return A.pow(A.mul(A.mul(A.sign(out), A.relu(A.abs(out))), window), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """1-D power-average pooling: ``(sum over the window of x**p) ** (1/p)``."""
    powered = A.pow(input, norm_type)
    out = A.avg_pool1d(powered, kernel_size, kernel_size if stride is None else stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, _tuple(kernel_size, 1)[0])


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling: ``(sum over the window of x**p) ** (1/p)``."""
    kw, kh = _tuple(kernel_size, 2)
    powered = A.pow(input, norm_type)
    out = A.avg_pool2d(powered, kernel_size, kernel_size if stride is None else stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kw * kh)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling: ``(sum over the window of x**p) ** (1/p)``."""
    kd, kw, kh = _tuple(kernel_size, 3)
    powered = A.pow(input, norm_type)
    out = A.avg_pool3d(powered, kernel_size, kernel_size if stride is None else stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, kd * kw * kh)


# ---- max_unpool -------------------------------------------------------------------------------------------
def _unpool_output_size(input: Tensor, kernel_size: list[int], stride: list[int], padding: list[int],
                        output_size: Any) -> list[int]:
    n = len(kernel_size)
    sizes = input.shape[-n:]
    default = [(sizes[d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    output_size = [int(s) for s in output_size]
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length "
                         f"of '{len(output_size)}'")
    for d in range(n):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return output_size


def unpool(input: Tensor, indices: Tensor, out_size: list[int], name: str) -> Tensor:
    """max_unpool2d/3d's kernel: each value scattered to its flat position in a zero output plane (ATen
    MaxUnpooling.cpp), written in other ops so every backend has it."""
    n = len(out_size)
    if indices._dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_torch_name(indices._dtype)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    lead = list(input.shape[: input.dim() - n])
    plane = 1
    for s in out_size:
        plane *= s
    flat_in = A.reshape(input, lead + [-1])
    flat_idx = A.reshape(indices, lead + [-1])
    if flat_idx.numel() and input._device.type != "meta":
        top, bottom = int(A.amax(flat_idx, []).item()), int(A.amin(flat_idx, []).item())
        if top >= plane or bottom < 0:
            bad = top if top >= plane else bottom
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(str(s) for s in out_size)})")
    zeros = A.zeros(lead + [plane], dtype=input._dtype, device=input._device)
    out = A["scatter.src"](zeros, len(lead), flat_idx, flat_in)
    return A.reshape(out, lead + out_size)


def _check_bag_indices(input: Tensor, num_weights: int, fast: bool) -> None:
    """torch's embedding_bag index checks: the first index outside [0, num_weights) is named, in the
    words of the kernel torch picks (``fast``: its sum/mean kernel for float32 and half weights)."""
    if input.is_meta or not input.numel():
        return
    flat = A.reshape(input, [-1])
    bad = A.logical_or(A["lt.Tensor"](flat, 0), A["ge.Tensor"](flat, num_weights))
    if bool(A.any(bad).item()):
        where = int(A.argmax(A._to_copy(bad, dtype=D.int64)).item())
        value = int(A.select(flat, 0, where).item())
        if fast:
            raise RuntimeError(f"Index {where} of input takes value {value} which is not in the valid range "
                               f"[0, {num_weights})")
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {value}")


def _torch_name(dt: D.dtype) -> str:
    from torchplug._ops.composites import scalar_type_name

    return scalar_type_name(dt)


def _max_unpool(n: int):
    def fn(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
           output_size: Any = None) -> Tensor:
        kernel = _tuple(kernel_size, n)
        step = kernel if stride is None else _tuple(stride, n)
        pad = _tuple(padding, n)
        out_size = _unpool_output_size(input, kernel, step, pad, output_size)
        if n == 1:  # as torch's Python function: a 2-d unpool of a trailing unit dim, squeezed off again
            return A.squeeze(A.max_unpool2d(A.unsqueeze(input, -1), A.unsqueeze(indices, -1), out_size + [1]), [-1])
        if n == 2:
            return A.max_unpool2d(input, indices, out_size)
        return A.max_unpool3d(input, indices, out_size, step, pad)

    fn.__name__ = f"max_unpool{n}d"
    fn.__doc__ = f"Partial inverse of ``max_pool{n}d``: each value written back at its max position, zeros elsewhere."
    return fn


max_unpool1d = _max_unpool(1)
max_unpool2d = _max_unpool(2)
max_unpool3d = _max_unpool(3)


# ---- embedding_bag ------------------------------------------------------------------------------------------
_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings, without materializing the per-index rows per bag."""
    if weight._dtype is D.int64 and input._dtype.is_floating_point:
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` "
            "is deprecated, and should now be `embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {type(offsets)}")
        offsets = A["arange.start_step"](0, input.numel(), input.shape[1], dtype=input._dtype, device=input._device)
        input = A.reshape(input, [-1])
        if per_sample_weights is not None:
            per_sample_weights = A.reshape(per_sample_weights, [-1])
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        from torchplug._tensor.tensor import _no_grad

        with _no_grad():
            A.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub.")
    return _bags(weight, input, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                 scale_grad_by_freq)


def bag_argmax(rows: Tensor, bag: Tensor, bags: int) -> tuple[Tensor, Tensor]:
    """For each bag and column, the position in ``rows`` of the bag's maximum (the first one on ties, as ATen's
    loop keeps it), and whether the bag has one (empty bags do not)."""
    k, dim = rows.shape[0], rows.shape[1]
    values = A.detach(rows)
    expanded = A.expand(A.unsqueeze(bag, 1), [k, dim])
    # (scatter_reduce, not index_reduce: that one warns it is in beta)
    best = A["scatter_reduce.two"](A.zeros([bags, dim], dtype=rows._dtype, device=rows._device), 0, expanded, values,
                                   "amax", include_self=False)
    hits = A.eq(values, A.index_select(best, 0, bag))
    order = A.expand(A.unsqueeze(A["arange.start_step"](0, k, 1, dtype=D.int64, device=rows._device), 1), [k, dim])
    first = A["masked_fill.Scalar"](order, A.logical_not(hits), k)
    slot = A["scatter_reduce.two"](A.full([bags, dim], k, dtype=D.int64, device=rows._device), 0, expanded, first,
                                   "amin")
    return slot, A.lt(slot, k)


def _bags(weight: Tensor, input: Tensor, offsets: Tensor, mode: str, per_sample_weights: Tensor | None,
          include_last_offset: bool, padding_idx: int | None, scale_grad_by_freq: bool = False) -> Tensor:
    """ATen's embedding_bag forward (EmbeddingBag.cpp) as index_add / index_reduce over bag ids."""
    if input._dtype not in (D.int64, D.int32) or offsets._dtype not in (D.int64, D.int32):
        raise RuntimeError("embedding_bag: expected indices and offsets to be int32 or int64 tensors, but got "
                           f"{_torch_name(input._dtype)} and {_torch_name(offsets._dtype)}")
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num_weights} through "
                               f"{num_weights - 1}, but got {padding_idx}")
        padding_idx %= num_weights
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    if offsets.shape[0] and int(A.select(offsets, 0, 0).item()) != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(A.select(offsets, 0, 0).item())}")
    dim = weight.shape[1]
    out_shape = [max(bags, 0), dim]
    if bags <= 0 or input.numel() == 0:
        return A.zeros(out_shape, dtype=weight._dtype, device=weight._device)
    _check_bag_indices(input, num_weights, fast=mode != "max" and weight._dtype is not D.float64)
    positions = A["arange.start_step"](0, input.numel(), 1, dtype=D.int64, device=input._device)
    starts = A.narrow(A._to_copy(offsets, dtype=D.int64), 0, 0, bags)
    bag = A.sub(A["searchsorted.Tensor"](starts, positions, right=True), 1)
    keep = A["lt.Tensor"](bag, bags)
    if padding_idx is not None:
        keep = A.logical_and(keep, A["ne.Tensor"](input, padding_idx))
    chosen = A.masked_select(positions, keep)
    bag = A.index_select(bag, 0, chosen)
    rows = A.embedding(weight, A.index_select(A._to_copy(input, dtype=D.int64), 0, chosen), -1, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = A.mul(rows, A.unsqueeze(A.index_select(per_sample_weights, 0, chosen), 1))
    zeros = A.zeros(out_shape, dtype=weight._dtype, device=weight._device)
    if mode == "max":
        slot, found = bag_argmax(rows, bag, out_shape[0])
        # the maxima gathered from their rows, so the gradient reaches the row ATen's kernel picked
        return A["masked_fill.Scalar"](A.gather(rows, 0, A.clamp(slot, None, rows.shape[0] - 1)), A.logical_not(found), 0)
    total = A.index_add(zeros, 0, bag, rows)
    if mode == "sum":
        return total
    ones = A.ones([bag.shape[0]], dtype=weight._dtype, device=weight._device)
    counts = A.index_add(A.zeros([out_shape[0]], dtype=weight._dtype, device=weight._device), 0, bag, ones)
    return A.div(total, A.unsqueeze(A.clamp(counts, 1, None), 1))

