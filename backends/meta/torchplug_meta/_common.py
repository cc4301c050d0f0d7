"""Shared helpers for meta kernels: making results, broadcasting, promotion, output strides.

Every kernel computes only metadata.  Operands may be tensors of other devices too (meta has
dispatch priority, so ``cpu_tensor + meta_tensor`` lands here); they are read only through
their payload's ``shape``/``strides`` and the tensor's dtype, which every backend provides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops.composites import scalar_type_name
from torchplug._runtime.allocator import TrackedStorage
from torchplug._tensor.construct import grad_view
from torchplug._tensor.tensor import Tensor, _wrap_dim, make_tensor

from ._payload import MetaArray, contiguous_strides, storage_bytes

__all__ = [
    "META", "KEYSET", "Tensor", "new", "new_like", "view_of", "shape", "strides", "broadcast_shapes",
    "elementwise_strides", "result_dtype", "wrap_dim", "from_numpy_dtype", "scalar_type_name", "contiguous_strides",
    "is_meta", "type_name", "dtype_of", "reduce_dims", "reduced_shape", "is_non_overlapping_and_dense",
]

META: Any = None  # torchplug.device('meta'), set when the backend registers
KEYSET = 0
STATS: Any = None  # the meta allocator's DeviceStats
_NP_TO_DTYPE = {np.dtype(d.numpy_dtype): d for d in (*D.ALL_DTYPES, *D.FLOAT8_DTYPES)}
_PY_SCALARS = (bool, int, float, complex)
wrap_dim = _wrap_dim


def bind_backend(backend: Any) -> None:
    """Called after registration: remember the device and key set results are stamped with."""
    global META, KEYSET, STATS
    from torchplug import device

    META = device(backend.device_type)
    KEYSET = backend.keyset
    STATS = backend.allocator.stats_for(0)


def from_numpy_dtype(npdt: np.dtype) -> D.dtype:
    found = _NP_TO_DTYPE.get(npdt)
    return found if found is not None else D.from_numpy_dtype(npdt)


# ---- making results -------------------------------------------------------------------------------
def new(size: Sequence[int], dtype: D.dtype, stride: Sequence[int] | None = None) -> Tensor:
    """A fresh meta tensor (its own Storage); ``stride`` in elements, contiguous by default."""
    size = tuple(size)
    stride = contiguous_strides(size) if stride is None else tuple(stride)
    item = dtype.itemsize
    payload = MetaArray(size, tuple(s * item for s in stride), dtype.numpy_dtype, 0,
                        storage_bytes(size, stride, item))
    # Counted by the meta allocator: the bytes this tensor would occupy (memory_estimate).
    return make_tensor(payload, dtype, META, KEYSET, TrackedStorage(payload.nbytes, META, payload, STATS))


def new_like(t: Tensor, dtype: D.dtype | None = None) -> Tensor:
    """``empty_like(t)`` with PyTorch's preserve_format: dense strides keep ``t``'s layout."""
    return new(shape(t), dtype or t._dtype, elementwise_strides(shape(t), [t]))


def view_of(src: Tensor, size: Sequence[int], stride: Sequence[int], offset: int, dtype: D.dtype | None = None) -> Tensor:
    """A meta tensor sharing ``src``'s Storage (and version counter), ``_base`` set like a view."""
    dtype = dtype or src._dtype
    item = dtype.itemsize
    size = tuple(size)
    stride = tuple(stride)
    payload = MetaArray(size, tuple(s * item for s in stride), dtype.numpy_dtype, offset,
                        storage_bytes(size, stride, item, offset))
    t = make_tensor(payload, dtype, META, KEYSET, src._storage)
    base = t._base = src._base if src._base is not None else src
    if base._requires_grad:  # a view of a tensor that requires grad requires grad, also under no_grad
        return grad_view(t, base)
    return t


# ---- reading operands -------------------------------------------------------------------------------
def shape(t: Tensor) -> tuple[int, ...]:
    return tuple(t._data.shape)


def strides(t: Tensor) -> tuple[int, ...]:
    """Strides in elements of any backend's tensor (payload strides are bytes)."""
    item = t._dtype.itemsize
    return tuple(s // item for s in t._data.strides)


def is_meta(t: Any) -> bool:
    return isinstance(t, Tensor) and t._device.type == "meta"


def type_name(dtype: D.dtype) -> str:
    """PyTorch's C++ type name ('float', 'double', 'long int'...) used in some messages."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(dtype.name, dtype.name)


# ---- broadcasting and promotion ---------------------------------------------------------------------
def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """PyTorch's infer_size folded left to right, with its error message."""
    result: tuple[int, ...] = ()
    first = True
    for b in shapes:
        if first:
            result = tuple(b)
            first = False
            continue
        a = result
        if a == tuple(b):
            continue
        n = max(len(a), len(b))
        out = [0] * n
        for i in range(n - 1, -1, -1):
            off = n - 1 - i
            da, db = len(a) - 1 - off, len(b) - 1 - off
            sa = a[da] if da >= 0 else 1
            sb = b[db] if db >= 0 else 1
            if sa != sb and sa != 1 and sb != 1:
                raise RuntimeError(
                    f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton dimension {i}"
                )
            out[i] = sb if sa == 1 else sa
        result = tuple(out)
    return result


def result_dtype(*operands: Any) -> D.dtype:
    """PyTorch's promotion over tensors (dimensioned beat 0-dim) and wrapped Python numbers."""
    dims: list[D.dtype] = []
    zeros: list[D.dtype] = []
    scalars: list[type] = []
    for o in operands:
        if isinstance(o, Tensor):
            (dims if len(o._data.shape) else zeros).append(o._dtype)
        elif o is not None:
            if isinstance(o, np.generic):
                o = o.item()
            t = type(o)
            scalars.append(t if t in _PY_SCALARS else (bool if isinstance(o, bool) else
                                                      int if isinstance(o, int) else
                                                      complex if isinstance(o, complex) else float))
    return D._result_type_parts(tuple(dims), tuple(zeros), tuple(scalars))


def dtype_of(o: Any) -> D.dtype:
    """The dtype an operand takes part in promotion with (Python numbers as wrapped tensors)."""
    if isinstance(o, Tensor):
        return o._dtype
    return result_dtype(o)


# ---- output strides (torch._prims_common.compute_elementwise_output_strides) -------------------------
def _is_contiguous(size: Sequence[int], stride: Sequence[int]) -> bool:
    numel = 1
    for s in size:
        numel *= s
    if numel < 2:
        return True
    expected = 1
    for x, y in zip(reversed(size), reversed(stride)):
        if x == 1:
            continue
        if y != expected:
            return False
        expected *= x
    return True


def _is_channels_last(size: Sequence[int], stride: Sequence[int]) -> bool:
    if len(size) == 4:
        order = (1, 3, 2, 0)
    elif len(size) == 5:
        order = (1, 4, 3, 2, 0)
    else:
        return False
    expected = 1
    for idx in order:
        length = size[idx]
        if length == 1:
            continue
        if stride[idx] != expected:
            return False
        expected *= length
    return True


def is_non_overlapping_and_dense(size: Sequence[int], stride: Sequence[int]) -> bool:
    numel = 1
    for s in size:
        numel *= s
    if numel < 2:
        return True
    if len(size) == 1:
        return stride[0] == 1
    pairs = sorted(zip(size, stride), key=lambda p: (p[1], p[0]))
    return _is_contiguous([p[0] for p in reversed(pairs)], [p[1] for p in reversed(pairs)])


def _expanded_strides(t: Tensor, out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """``t``'s strides after broadcasting to ``out_shape``: expanded dims get stride 0."""
    size, stride = shape(t), strides(t)
    lead = len(out_shape) - len(size)
    result = [0] * lead
    for i, (s, st) in enumerate(zip(size, stride)):
        result.append(0 if (s == 1 and out_shape[lead + i] != 1) else st)
    return tuple(result)


def elementwise_strides(out_shape: Sequence[int], operands: Iterable[Any]) -> tuple[int, ...]:
    """Strides of an elementwise result: the operands' dimension order, dense.

    A port of ``torch._prims_common.compute_elementwise_output_strides`` (what PyTorch's meta
    tensors report): contiguous inputs give contiguous outputs, channels-last stays channels-last,
    and otherwise dims are ordered by the operands' strides (broadcast dims ignored).  0-dim
    operands from host devices (CPU scalars) and Python numbers do not take part.
    """
    out_shape = tuple(out_shape)
    ndim = len(out_shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (1,)
    layouts = []
    for t in operands:
        if not isinstance(t, Tensor):
            continue
        if not len(t._data.shape) and t._device.type != "meta":
            continue  # a CPU scalar
        layouts.append(_expanded_strides(t, out_shape))
    if not layouts:
        return contiguous_strides(out_shape)
    if len(layouts) == 1 and is_non_overlapping_and_dense(out_shape, layouts[0]):
        return layouts[0]
    is_contig = all(_is_contiguous(out_shape, st) for st in layouts)
    is_cl = all(_is_channels_last(out_shape, st) for st in layouts)
    if is_contig and not is_cl:
        return contiguous_strides(out_shape)
    if is_cl and not is_contig:
        perm = [0, *range(2, ndim), 1]
    else:
        perm = _logical_to_physical(out_shape, layouts)
    physical = [out_shape[p] for p in perm]
    phys_strides = contiguous_strides(tuple(physical))
    result = [0] * ndim
    for idx, p in enumerate(perm):
        result[p] = phys_strides[idx]
    return tuple(result)


def _logical_to_physical(size: tuple[int, ...], all_strides: list[tuple[int, ...]]) -> list[int]:
    def ge(a: int, b: int) -> bool:
        if b == 0:
            return True
        if a == 0:
            return False
        return a >= b or a % b == 0

    def should_swap(a: int, b: int) -> int:
        for st in all_strides:
            sa, sb = st[a], st[b]
            if sa == 0 or sb == 0:
                continue
            if sa == sb:
                if ge(size[b], size[a]):
                    continue
                return 1
            if ge(sb, sa):
                return -1
            if ge(sa, sb):
                return 1
        return 0

    ndim = len(size)
    perm = list(reversed(range(ndim)))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in reversed(range(i)):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return list(reversed(perm))


def reduce_dims(dim: Any, ndim: int) -> list[bool]:
    """Which dims a reduction over ``dim`` (None, int or list; empty = all) removes."""
    if dim is None:
        return [True] * ndim
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return [True] * ndim
    mask = [False] * ndim
    for d in dim:
        w = wrap_dim(d, ndim)
        if ndim == 0:
            continue
        if mask[w]:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        mask[w] = True
    return mask


def reduced_shape(size: Sequence[int], mask: Sequence[bool], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if m else s for s, m in zip(size, mask))
    return tuple(s for s, m in zip(size, mask) if not m)
