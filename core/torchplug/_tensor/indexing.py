"""``Tensor.__getitem__`` / ``__setitem__``: PyTorch's (NumPy's) indexing semantics.

Indices are applied left to right as PyTorch does (torch/csrc/autograd/python_variable_indexing.cpp
and ATen's TensorIndexing.h):

* basic indices make views through ops: an int ``select``s, a slice ``slice``s, ``None``
  ``unsqueeze``s, ``...`` skips the unindexed dims; the result shares storage and version counter;
* Python bools, tensors, lists/ndarrays (advanced indices) are collected, with ``None`` for the
  dims they skip, into the list ``aten::index.Tensor`` (a copy) or ``aten::index_put_`` (in place)
  takes; that kernel applies NumPy's rules, including moving the broadcast index dims to the front
  when the advanced indices are separated by a basic one;
* a bool index adds a dim of size 1 and indexes it with ``[0]`` (True) or ``[]`` (False); a 0-dim
  integer tensor is an int; a bool/uint8 mask covers as many dims as it has.

Assignment writes through one mutating op (``copy_``, ``fill_`` or ``index_put_``), so the
version counter moves once per assignment.  A lone int or slice skips the general parser.
"""

from __future__ import annotations

import operator
import sys
import warnings
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._tensor.mem_overlap import assert_no_internal_overlap
from torchplug._tensor.tensor import Tensor

__all__ = ["install_indexing", "getitem", "setitem"]

_SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result"
)
_ZERO_DIM_INDEX = (
    "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a "
    "0-dim tensor to a number"
)
_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool_)
_MASK_DTYPES = (D.uint8, D.bool_)
# c10's names for the C++ types in "value cannot be converted to type ... without overflow".
# (Half and BFloat16 values are checked as double.)
_CPP_TYPE = {
    "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
    "float16": "double", "bfloat16": "double", "float32": "float", "float64": "double",
}
_MAXSIZE = sys.maxsize
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_ROUNDED = (D.float16, D.bfloat16)


# ---- helpers ------------------------------------------------------------------------------------
def _type_name(obj: Any) -> str:
    """CPython's tp_name: builtins bare, extension types (numpy) with their module."""
    cls = type(obj)
    module = cls.__module__
    if module == "builtins" or module == "__main__":
        return cls.__name__
    if module.split(".")[0] == "numpy":
        return f"numpy.{cls.__name__}"
    return cls.__name__


def _invalid_index(obj: Any) -> IndexError:
    return IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
        f"(got {_type_name(obj)})"
    )


def _is_sequence(obj: Any) -> bool:
    """Python's PySequence_Check: has ``__getitem__`` and is not a mapping."""
    return not isinstance(obj, (dict, np.generic)) and hasattr(type(obj), "__getitem__")


def _select(t: Any, dim: int, index: int, real_dim: int) -> Any:
    shape = t._data.shape
    if not shape:
        if index == 0:
            raise IndexError(_ZERO_DIM_INDEX)
        size = 0  # what PyTorch reports for any other index into a 0-dim tensor
    else:
        size = shape[dim]
    if index < -size or index >= size:
        raise IndexError(f"index {index} is out of bounds for dimension {real_dim} with size {size}")
    return A.select(t, dim, index)


def _slice_bound(value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None


def _slice(t: Any, dim: int, s: slice, skip_full: bool = True) -> Any:
    """``t.slice(dim, ...)``; inside a tuple index PyTorch skips a slice that keeps the whole dim."""
    step = 1 if s.step is None else _slice_bound(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start = 0 if s.start is None else _slice_bound(s.start)
    stop = _MAXSIZE if s.stop is None else _slice_bound(s.stop)
    if step < 0:
        raise ValueError("step must be greater than zero")
    shape = t._data.shape
    if not shape:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if skip_full and start == 0 and step == 1 and stop >= shape[dim]:
        return t
    return A.slice(t, dim, start, stop, step)


def _bool_index(flag: bool, device: Any) -> Any:
    """The index of the size-1 dim a Python bool adds: ``[0]`` for True, ``[]`` for False."""
    if flag:
        return A.zeros([1], dtype=D.int64, device=device)
    return A.empty([0], dtype=D.int64, device=device)


def _sequence_index(obj: Any, device: Any) -> Any:
    """A list/ndarray index as a tensor: bool and uint8 data stay masks, anything else becomes int64."""
    from torchplug._tensor.creation import tensor

    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(obj).__name__}'")
    t = tensor(obj, device=device)
    if t._dtype is D.int64 or t._dtype in _MASK_DTYPES:
        return t
    return tensor(obj, dtype=D.int64, device=device)


def _as_tuple(index: Any) -> tuple[Any, ...] | None:
    """PyTorch's treatSequenceAsTuple: a short sequence holding a slice/None/.../sequence/tensor is a tuple."""
    if isinstance(index, tuple):
        return tuple(index)
    if isinstance(index, (Tensor, np.ndarray)) or not _is_sequence(index):
        return None
    try:
        n = len(index)
    except TypeError:
        return None
    if n >= 32:
        return None
    for i in range(n):
        try:
            obj = index[i]
        except Exception:  # noqa: BLE001 - PyTorch clears any error here and moves on
            return None
        if isinstance(obj, (Tensor, slice)) or obj is None or obj is Ellipsis or _is_sequence(obj):
            warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=3)
            return tuple(index)
    return None


def _count_specified(items: tuple[Any, ...]) -> int:
    count = 0
    for obj in items:
        if isinstance(obj, Tensor):
            count += obj.dim() if obj._dtype in _MASK_DTYPES else 1
        elif not (obj is None or obj is Ellipsis or obj is True or obj is False or isinstance(obj, np.bool_)):
            count += 1
    return count


def _record(indices: list[Any] | None, dim: int, index: Any) -> list[Any]:
    """Add an advanced index to ``index.Tensor``'s list.

    The list is in index coordinates, not dims: a k-dim mask takes one slot and covers k dims.
    The first entry is preceded by a ``None`` per dim before it; after that every slice, ``None``
    and ellipsis dim appends its own ``None`` (PyTorch's recordTensorIndex).
    """
    if index._dtype not in _INDEX_DTYPES:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if indices is None:
        indices = [None] * dim
    indices.append(index)
    return indices


def _apply(self: Any, items: tuple[Any, ...]) -> tuple[Any, list[Any] | None]:
    """Apply the basic indices (views); collect the advanced ones as ``index.Tensor``'s list."""
    ndim = len(self._data.shape)
    specified = _count_specified(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = 0
    indices: list[Any] | None = None
    for pos, obj in enumerate(items):
        cls = obj.__class__
        if cls is int:
            result = _select(result, dim, obj, pos)
        elif cls is slice:
            result = _slice(result, dim, obj)
            dim += 1
            if indices is not None:
                indices.append(None)
        elif obj is Ellipsis:
            dim += ndim - specified
            if indices is not None:
                indices.extend([None] * (ndim - specified))
        elif obj is None:
            result = A.unsqueeze(result, dim)
            dim += 1
            if indices is not None:
                indices.append(None)
        elif cls is bool or cls is np.bool_:
            result = A.unsqueeze(result, dim)
            indices = _record(indices, dim, _bool_index(bool(obj), self._device))
            dim += 1
        elif isinstance(obj, Tensor):
            dtype = obj._dtype
            if not obj._data.shape and not dtype.is_floating_point and not dtype.is_complex:
                if dtype in _MASK_DTYPES:  # a 0-dim mask: like a Python bool
                    result = A.unsqueeze(result, dim)
                    indices = _record(indices, dim, _bool_index(bool(obj.item()), self._device))
                    dim += 1
                else:  # a 0-dim integer tensor: like an int
                    result = _select(result, dim, int(obj.item()), pos)
            else:
                indices = _record(indices, dim, obj)
                dim += obj.dim() if dtype in _MASK_DTYPES else 1
        elif _is_sequence(obj):
            index = _sequence_index(obj, self._device)
            indices = _record(indices, dim, index)
            dim += index.dim() if index._dtype in _MASK_DTYPES else 1
        else:
            try:
                value = operator.index(obj)
            except TypeError:
                raise _invalid_index(obj) from None
            result = _select(result, dim, value, pos)
    return result, indices


# ---- __getitem__ --------------------------------------------------------------------------------
def getitem(self: Any, index: Any) -> Any:
    """``self[index]``: a view for basic indexing, a copy (``index.Tensor``) for advanced indexing."""
    cls = index.__class__
    if cls is int:
        return _select(self, 0, index, 0)
    if cls is slice:
        return _slice(self, 0, index, skip_full=False)
    if index is None:
        return A.unsqueeze(self, 0)
    if index is Ellipsis:
        return A.alias(self)
    items = _as_tuple(index)
    result, indices = _apply(self, (index,) if items is None else items)
    if indices is None:
        return A.alias(result) if result is self else result
    return A["index.Tensor"](result, indices)


# ---- __setitem__ --------------------------------------------------------------------------------
def _check_value(self: Any, value: Any) -> Any:
    """A tensor or a Python/NumPy number to assign; PyTorch's errors for anything else."""
    if isinstance(value, Tensor):
        return value
    # Python numbers (and their subclasses, e.g. numpy.float64) and NumPy integers, as in PyTorch.
    if isinstance(value, (int, float, complex, np.integer)):
        if isinstance(value, complex) and value.imag != 0 and self._dtype.name in _CPP_TYPE:
            raise RuntimeError(f"value cannot be converted to type {_CPP_TYPE[self._dtype.name]} without overflow")
        if isinstance(value, complex) and not self._dtype.is_complex:
            return bool(value) if self._dtype is D.bool_ else value.real
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError("Overflow when unpacking long long")  # PyTorch reads ints as C long long
        if value.__class__ is float and self._dtype in _ROUNDED:
            # PyTorch converts the number to a half/bfloat16 tensor unchecked: out of range is
            # +-inf (or the largest finite value it rounds to), where fill_ would refuse it.
            from torchplug._tensor.creation import unchecked_low_precision

            value = unchecked_low_precision(value, self._dtype)
        return value
    from torchplug._tensor.legacy_types import legacy_tensor_type_name as _tensor_type_name

    raise TypeError(f"can't assign a {_type_name(value)} to a {_tensor_type_name(self)}")


def _strip_leading_ones(value: Any) -> Any:
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return A.view(value, list(shape[k:])) if k else value


def _copy_to(dst: Any, value: Any) -> None:
    """Write ``value`` (a number or a tensor broadcastable to ``dst``) into the view ``dst``."""
    if not isinstance(value, Tensor):
        # PyTorch copies a number in as a 0-dim tensor, so an expanded dst is refused as copy_
        # refuses it (fill_ alone would write it).
        assert_no_internal_overlap(dst)
        A["fill_.Scalar"](dst, value)
        return
    if value._data.shape != dst._data.shape:
        value = A.expand(_strip_leading_ones(value), list(dst._data.shape))
    A.copy_(dst, value)


def _index_put(dst: Any, indices: list[Any], value: Any) -> None:
    if isinstance(value, Tensor):
        value = _strip_leading_ones(value)
    else:
        value = A.full([], value, dtype=dst._dtype, device=dst._device)
    A["index_put_"](dst, indices, value, False)


def setitem(self: Any, index: Any, value: Any) -> None:
    """``self[index] = value``: ``copy_``/``fill_`` into a view, or ``index_put_`` for advanced indices."""
    value = _check_value(self, value)
    cls = index.__class__
    if cls is int:
        _copy_to(_select(self, 0, index, 0), value)
        return
    if cls is slice:
        _copy_to(_slice(self, 0, index), value)
        return
    if index is False:
        return  # selects nothing
    if index is True or index is None:
        _copy_to(A.unsqueeze(self, 0), value)
        return
    if index is Ellipsis:
        _copy_to(self, value)
        return
    if (isinstance(index, Tensor) and index._dtype is D.uint8 and (not isinstance(value, Tensor) or not value._data.shape)
            and index._data.shape and index._data.shape == self._data.shape[: index._data.ndim]):
        # PyTorch sends a lone mask with a scalar value to masked_fill_, which refuses uint8 masks (a
        # 0-dim mask is a Python bool; a mask of the wrong shape fails index_put_'s shape check first).
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
    items = _as_tuple(index)
    view, indices = _apply(self, (index,) if items is None else items)
    if indices is None:
        _copy_to(view, value)
    else:
        _index_put(view, indices, value)


def install_indexing() -> None:
    """Install ``Tensor.__getitem__`` and ``Tensor.__setitem__`` (called once when the package loads)."""
    Tensor.__getitem__ = getitem
    Tensor.__setitem__ = setitem
