"""Composite kernels: ops the core writes once in terms of other ops, so backends need only primitives.

Views are computed here from sizes and strides and materialized by the backend's
``as_strided``; in-place and ``out=`` overloads wrap the functional op with PyTorch's casting
and resizing rules.  A backend may register its own kernel for any of these to go faster: a
direct kernel always wins over a composite.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._dispatch.dispatcher import DISPATCHER, OperatorEntry
from torchplug._tensor.construct import unlink_view
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["COMPOSITES", "inplace_kernel", "out_kernel", "compute_view_strides", "infer_size"]

from torchplug._base.dtype import scalar_type_name  # noqa: E402  (re-exported: many op modules spell it from here)
from torchplug._tensor.empty import _empty_like, dense_strides, infer_dense_strides, resize_output  # noqa: E402
from torchplug._tensor.legacy_types import legacy_tensor_type_name as _tensor_type_name  # noqa: E402


def positional_caller(entry: OperatorEntry) -> Callable[..., Any]:
    """Call ``entry`` with all arguments positional, passing kw-only ones by name."""
    args = entry.schema.arguments
    n_pos = sum(1 for a in args if not a.kwarg_only)
    kw_names = [a.name for a in args if a.kwarg_only]
    call = entry.call
    assert call is not None
    if not kw_names:
        return call

    def caller(*values: Any) -> Any:
        return call(*values[:n_pos], **dict(zip(kw_names, values[n_pos:])))

    return caller


# ---- in-place and out= wrappers ---------------------------------------------------------------
def check_castable(result: D.dtype, target: D.dtype) -> None:
    if not D.can_cast(result, target):
        raise RuntimeError(
            f"result type {scalar_type_name(result)} can't be cast to the desired output type {scalar_type_name(target)}"
        )


def inplace_kernel(functional: OperatorEntry) -> Callable[..., Any]:
    """``op_(self, ...)`` as ``self.copy_(op(self, ...))`` with PyTorch's shape and cast checks."""
    call = positional_caller(functional)

    def kernel(self: Tensor, *args: Any) -> Tensor:
        result = call(self, *args)
        if result.shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        check_castable(result._dtype, self._dtype)
        A.copy_(self, result)
        return self

    kernel.__qualname__ = f"inplace[{functional.name}]"
    return kernel


def out_kernel(functional: OperatorEntry) -> Callable[..., Any]:
    """``op.out(..., out)`` as ``out.copy_(op(...))`` with resize and cast checks."""
    call = positional_caller(functional)

    def kernel(*args: Any) -> Tensor:
        out = args[-1]
        result = call(*args[:-1])
        check_castable(result._dtype, out._dtype)
        resize_output(out, result.shape)
        A.copy_(out, result)
        return out

    kernel.__qualname__ = f"out[{functional.name}]"
    return kernel


# ---- views --------------------------------------------------------------------------------------
def _view(self: Tensor, size: Sequence[int], stride: Sequence[int], offset: int | None = None) -> Tensor:
    return A.as_strided(self, list(size), list(stride), self.storage_offset() if offset is None else offset)


def infer_size(shape: Sequence[int], numel: int) -> list[int]:
    """Resolve one -1 in ``shape`` and check the element count (PyTorch's infer_size)."""
    shape = list(shape)
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            known *= s
    if infer is not None:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified dimension size -1 "
                "can be any value and is ambiguous"
            )
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[infer] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return shape


def compute_view_strides(old_size: Sequence[int], old_stride: Sequence[int], new_size: Sequence[int]) -> list[int] | None:
    """Strides that view ``old`` as ``new_size`` without copying, or None (PyTorch's computeStride)."""
    if not old_size:
        return [1] * len(new_size)
    numel = math.prod(old_size)
    if numel == 0:
        if list(old_size) == list(new_size):
            return list(old_stride)
        strides = [1] * len(new_size)
        for i in range(len(new_size) - 2, -1, -1):
            strides[i] = strides[i + 1] * max(new_size[i + 1], 1)
        return strides
    new_stride = [0] * len(new_size)
    view_d = len(new_size) - 1
    chunk_base_stride = old_stride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_size) - 1, -1, -1):
        tensor_numel *= old_size[tensor_d]
        if tensor_d == 0 or (old_size[tensor_d - 1] != 1 and old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_size[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_size[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return new_stride


def view(self: Tensor, size: Sequence[int]) -> Tensor:
    shape = infer_size(size, self.numel())
    strides = compute_view_strides(list(self.shape), self.stride(), shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view(self, shape, strides)


def reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
    size = infer_size(shape, self.numel())
    strides = compute_view_strides(list(self.shape), self.stride(), size)
    if strides is not None:
        # ATen: a contiguous tensor is viewed, any other viewable one aliased (ReshapeAliasBackward0)
        return A.view(self, size) if self.is_contiguous() else A._reshape_alias(self, size, strides)
    # torch: _unsafe_view(clone(contiguous)); the result owns the copy's storage
    return A._unsafe_view(A.clone(self, memory_format="contiguous_format"), size)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    n = self.dim()
    start, end = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)  # a 0-dim tensor takes 0 and -1 only
    if n == 0:
        return A.reshape(self, [1])
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = list(self.shape)
    return A.reshape(self, shape[:start] + [math.prod(shape[start : end + 1])] + shape[end + 1 :])


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    n = self.dim()
    if len(dims) != n:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [_wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    size, stride = self.shape, self.stride()
    return _view(self, [size[d] for d in wrapped], [stride[d] for d in wrapped])


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    n = self.dim()
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)  # a 0-dim tensor takes 0 and -1 only
    if n == 0:
        return A.alias(self)
    size, stride = list(self.shape), list(self.stride())
    size[d0], size[d1] = size[d1], size[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    return _view(self, size, stride)


def t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return A.transpose(self, 0, 1) if self.dim() == 2 else A.alias(self)


def expand(self: Tensor, size: Sequence[int], implicit: bool = False) -> Tensor:
    size = list(size)
    n_old = self.dim()
    if len(size) < n_old:
        raise RuntimeError(
            f"expand({_tensor_type_name(self)}{{{list(self.shape)}}}, size={size}): the number of sizes provided ({len(size)}) "
            f"must be greater or equal to the number of dimensions in the tensor ({n_old})"
        )
    old_size, old_stride = list(self.shape), self.stride()
    new_size, new_stride = [], []
    lead = len(size) - n_old
    for i, s in enumerate(size):
        j = i - lead
        if j < 0:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            new_size.append(s)
            new_stride.append(0)
            continue
        if s == -1:
            s = old_size[j]
        if old_size[j] == s:
            new_size.append(s)
            new_stride.append(old_stride[j])
        elif old_size[j] == 1:
            new_size.append(s)
            new_stride.append(0)
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({old_size[j]}) at non-singleton "
                f"dimension {i}.  Target sizes: {size}.  Tensor sizes: {old_size}"
            )
    return _view(self, new_size, new_stride)


def squeeze(self: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    n = self.dim()
    size, stride = list(self.shape), self.stride()
    dims = set(range(n)) if dim is None else {_wrap_dim(d, n) for d in dim}
    keep = [i for i in range(n) if not (i in dims and size[i] == 1)]
    return _view(self, [size[i] for i in keep], [stride[i] for i in keep])


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    n = self.dim()
    d = _wrap_dim(dim, n + 1)
    size, stride = list(self.shape), list(self.stride())
    new_stride = stride[d] * size[d] if d < n else 1
    size.insert(d, 1)
    stride.insert(d, new_stride)
    return _view(self, size, stride)


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, self.dim())
    size = self.shape[d]
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0 or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return A.slice(self, d, start, start + length, 1)


def select(self: Tensor, dim: int, index: int) -> Tensor:
    n = self.dim()
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} at dimension {d}")
    if index < 0:
        index += size
    sizes, strides = list(self.shape), list(self.stride())
    offset = self.storage_offset() + index * strides[d]
    del sizes[d], strides[d]
    return _view(self, sizes, strides, offset)


def slice_(self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> Tensor:
    n = self.dim()
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise ValueError("step must be greater than zero")
    d = _wrap_dim(dim, n)
    size = self.shape[d]
    lo, hi, _ = slice(start, end, 1).indices(size)
    hi = max(hi, lo)
    sizes, strides = list(self.shape), list(self.stride())
    offset = self.storage_offset() + lo * strides[d]
    sizes[d] = (hi - lo + step - 1) // step
    strides[d] *= step
    return _view(self, sizes, strides, offset)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    n = self.dim()
    d = _wrap_dim(dimension, n) if n else 0
    dim_size = self.shape[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes, strides = list(self.shape), list(self.stride())
    if n == 0:
        return _view(self, [size], [1])
    sizes[d] = (dim_size - size) // step + 1
    new_stride = strides[d]
    strides[d] = new_stride * step
    return _view(self, sizes + [size], strides + [new_stride])


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    n = self.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    sizes, strides = list(self.shape), list(self.stride())
    start = self.storage_offset()
    if offset >= 0:
        length = max(min(sizes[d1], sizes[d2] - offset), 0)
        start += offset * strides[d2] if length else 0
    else:
        length = max(min(sizes[d1] + offset, sizes[d2]), 0)
        start -= offset * strides[d1] if length else 0
    diag_stride = strides[d1] + strides[d2]
    keep = [i for i in range(n) if i not in (d1, d2)]
    return _view(self, [sizes[i] for i in keep] + [length], [strides[i] for i in keep] + [diag_stride], start)


def alias(self: Tensor) -> Tensor:
    return _view(self, list(self.shape), self.stride())


def detach(self: Tensor) -> Tensor:
    """Shares storage and version counter, but is no view for autograd and never requires grad."""
    return unlink_view(alias(self))


# ---- splitting and joining ----------------------------------------------------------------------
def _multi_views(outs: list[Tensor], name: str) -> list[Tensor]:
    """Mark the outputs of a function returning several views (PyTorch's MULTI_OUTPUT_NODE): with
    autograd on, writing to one of them in place is refused (by the autograd plugin's check)."""
    if outs and outs[0]._requires_grad:
        for i, t in enumerate(outs):
            t.__dict__["_multi_view"] = (name, i)
    return outs


def split(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    return _multi_views(_split(self, split_size, dim), "Split")


def _split(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, self.dim())
    size = self.shape[d]
    if split_size <= 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    if size == 0:
        return [A.narrow(self, d, 0, 0)]
    return [A.narrow(self, d, start, min(split_size, size - start)) for start in range(0, size, split_size)]


def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> list[Tensor]:
    d = _wrap_dim(dim, self.dim())
    if sum(split_sizes) != self.shape[d]:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's size at dimension "
            f"{d}), but got split_sizes={list(split_sizes)}"
        )
    out, start = [], 0
    for s in split_sizes:
        out.append(A.narrow(self, d, start, s))
        start += s
    return _multi_views(out, "SplitWithSizes")


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, self.dim())
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:  # ATen: split_with_sizes into `chunks` empty pieces
        return A.split_with_sizes(self, [0] * chunks, d)
    return A["split.Tensor"](self, split_size, d)  # through the op: chunk records SplitBackward0 as PyTorch


def unbind(self: Tensor, dim: int = 0) -> list[Tensor]:
    if self.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, self.dim())
    return _multi_views([A.select(self, d, i) for i in range(self.shape[d])], "Unbind")


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0].shape
    d = _wrap_dim(dim, len(first) + 1)  # (torch wraps the dim against the first tensor before comparing sizes)
    for i, t in enumerate(tensors):
        if t.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and {list(t.shape)} at entry {i}"
            )
    return A.cat([A.unsqueeze(t, d) for t in tensors], d)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's should_fold: whether matmul runs a batch (>= 3-d) times a 1-d/2-d operand as one
    mm/mv over the batch folded into rows, which it does when that needs no copy."""
    a_larger = a.dim() >= b.dim()
    t1 = a if a_larger else A.transpose(b, -1, -2)
    small = b if a_larger else a
    if not (t1.dim() >= 3 and small.dim() <= 2):
        return False
    if small.requires_grad:  # folding keeps the backward a plain mm (PyTorch copies instead)
        return True
    if a.dim() == 2:  # 2-d @ batch: the folded result would need a transposing copy
        return False
    if t1.numel() == 0:
        return True
    sizes, strides = t1.shape, t1.stride()
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(t1.dim() - 2))


def matmul(self: Tensor, other: Tensor) -> Tensor:
    d1, d2 = len(self._data.shape), len(other._data.shape)  # (what dim() answers, without two method calls)
    if d1 == 2 and d2 == 2:  # the common case first: one mm
        return A.mm(self, other)
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return A.dot(self, other)
    if d1 == 2 and d2 == 1:
        return A.mv(self, other)
    if d1 == 1 and d2 == 2:
        return A.mm(A.unsqueeze(self, 0), other).squeeze_(0)  # in place on the fresh mm, as ATen: SqueezeBackward4
    if _should_fold(self, other):
        # Fold the larger operand's batch into rows: one GEMM instead of a batched one (PyTorch's
        # fold; a 1-d/2-d self times a batch runs on the batch's transpose).
        transpose = d2 > d1
        t1 = A.transpose(other, -1, -2) if transpose else self
        t2 = (A.t(self) if d1 == 2 else self) if transpose else other
        out_shape = list(t1.shape[:-1])
        folded = A.reshape(t1, [math.prod(out_shape), t1.shape[-1]])  # (not -1: ambiguous for 0 elements)
        if t2.dim() == 1:
            return A._unsafe_view(A.mv(folded, t2), out_shape)
        out = A._unsafe_view(A.mm(folded, t2), out_shape + [t2.shape[1]])
        return A.clone(A.transpose(out, -1, -2), memory_format="contiguous_format") if transpose else out
    # General batched case (PyTorch's order of operations, so the graph has its nodes): broadcast the
    # batch dims, flatten them, one bmm, and an _unsafe_view to the output shape.
    n = self.shape[-2] if d1 > 1 else 1
    k = self.shape[-1]
    k2 = other.shape[-2] if d2 > 1 else other.shape[0]
    m = other.shape[-1] if d2 > 1 else 1
    batch = _broadcast_shapes(list(self.shape[:max(d1 - 2, 0)]), list(other.shape[:max(d2 - 2, 0)]))
    nb = math.prod(batch)
    if k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {k}] but got: [{nb}, {k2}]."
        )
    a3 = A.reshape(A.expand(self, batch + [n, k]), [nb, n, k])
    vector_rhs = d2 == 1
    if vector_rhs:
        b3 = A.unsqueeze(A.reshape(A.expand(other, batch + [k2]), [nb, k2]), 2)
    else:
        b3 = A.reshape(A.expand(other, batch + [k2, m]), [nb, k2, m])
    out_shape = batch + ([n] if d1 > 1 else []) + ([m] if d2 > 1 else [])
    out = A.bmm(a3, b3)
    return A._unsafe_view(A.squeeze(out, [-1]) if vector_rhs else out, out_shape)


def _broadcast_shapes(a: Sequence[int], b: Sequence[int]) -> list[int]:
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + list(a)
    b = [1] * (n - len(b)) + list(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}")
        out.append(max(x, y) if x and y else 0)
    return out


def clone(self: Tensor, memory_format: Any = None) -> Tensor:
    out = A.copy_(_empty_like(self, self._dtype, self._device, memory_format), self)
    out._storage.version = 0  # a fresh tensor: the internal copy is not a user-visible write
    return out


def to_copy(self: Tensor, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
            non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    out = _empty_like(self, dtype or self._dtype, device or self._device, memory_format)
    out = A.copy_(out, self, non_blocking)
    out._storage.version = 0
    return out


def zero_(self: Tensor) -> Tensor:
    return A["fill_.Scalar"](self, 0)


def _factory_dtype(dtype: D.dtype | None, fill: Any = None) -> D.dtype:
    if dtype is not None:
        return dtype
    if isinstance(fill, bool):
        return D.bool_
    if isinstance(fill, int):
        return D.int64
    if isinstance(fill, complex):
        return D.get_default_complex_dtype()
    return D.get_default_dtype()


def _filled(size: Sequence[int], dtype: D.dtype, device: Any, value: Any) -> Tensor:
    t = A["fill_.Scalar"](A.empty(size, dtype=dtype, device=device), value)
    t._storage.version = 0  # a fresh tensor: the internal fill is not a user-visible write
    return t


def zeros(size: Sequence[int], dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype), device, 0)


def ones(size: Sequence[int], dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype), device, 1)


def full(size: Sequence[int], fill_value: Any, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None) -> Tensor:
    return _filled(size, _factory_dtype(dtype, fill_value), device, fill_value)


# op name -> (key, kernel): registered by the core at import, attributed to "torchplug core".
COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    "view": ("CompositeExplicitAutograd", view),
    "reshape": ("CompositeImplicitAutograd", reshape),
    "flatten.using_ints": ("CompositeImplicitAutograd", flatten),
    "permute": ("CompositeExplicitAutograd", permute),
    "transpose.int": ("CompositeExplicitAutograd", transpose),
    "t": ("CompositeExplicitAutograd", t),
    "expand": ("CompositeExplicitAutograd", expand),
    "squeeze": ("CompositeExplicitAutograd", squeeze),
    "unsqueeze": ("CompositeExplicitAutograd", unsqueeze),
    "narrow": ("CompositeImplicitAutograd", narrow),
    "select.int": ("CompositeExplicitAutograd", select),
    "slice.Tensor": ("CompositeExplicitAutograd", slice_),
    "unfold": ("CompositeExplicitAutograd", unfold),
    "diagonal": ("CompositeExplicitAutograd", diagonal),
    "alias": ("CompositeExplicitAutograd", alias),
    "detach": ("CompositeExplicitAutograd", detach),
    # explicit: one SplitBackward0/SplitWithSizesBackward0/UnbindBackward0 node for all the pieces, as PyTorch
    "split.Tensor": ("CompositeExplicitAutograd", split),
    "split_with_sizes": ("CompositeExplicitAutograd", split_with_sizes),
    "chunk": ("CompositeImplicitAutograd", chunk),
    "unbind.int": ("CompositeExplicitAutograd", unbind),
    "stack": ("CompositeExplicitAutograd", stack),  # one StackBackward0 node, as PyTorch records
    "matmul": ("CompositeImplicitAutograd", matmul),
    "clone": ("CompositeExplicitAutograd", clone),
    "_to_copy": ("CompositeExplicitAutograd", to_copy),
    "zero_": ("CompositeExplicitAutograd", zero_),
    "zeros": ("CompositeExplicitAutograd", zeros),
    "ones": ("CompositeExplicitAutograd", ones),
    "full": ("CompositeExplicitAutograd", full),
}
