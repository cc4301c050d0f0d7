"""Fuzz-case inputs: tensor specs (dtype, shape, memory layout, values) built once as NumPy data.

A :class:`TensorSpec` says everything about one tensor argument.  :func:`materialize` turns a
call's arguments into tensors of ``torch`` or ``torchplug`` from the same NumPy buffer through the
same view operations, so both libraries see equal values, shapes, strides and storage offsets.
:func:`source` writes the same tensor as a line of Python (the reproducer printed for a failure).

Layouts: ``contig``; ``perm`` (a contiguous buffer in another dimension order, permuted back);
``step`` (every other element of a wider last dimension); ``offset`` (a flat buffer read from
element ``k``, so ``storage_offset() == k``); ``expand`` (size-1 dimensions broadcast with stride 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TensorSpec", "DtypeArg", "Call", "materialize", "source", "spec_data", "FLOATS", "COMPLEX", "INTS",
           "ALL", "REALS", "np_dtype", "is_float", "is_complex", "is_int"]

INTS = ("uint8", "int8", "int16", "int32", "int64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
REALS = ("bool",) + INTS + FLOATS
ALL = REALS + COMPLEX


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def is_complex(dtype: str) -> bool:
    return dtype in COMPLEX


def is_int(dtype: str) -> bool:
    return dtype in INTS


def np_dtype(name: str) -> Any:
    """The NumPy dtype of a dtype name (bfloat16 through ml_dtypes)."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@dataclass(frozen=True)
class TensorSpec:
    """One tensor argument.

    Args:
        shape: logical shape (``()`` is 0-d; a 0 makes it empty).
        dtype: dtype name.
        layout: ``contig``, ``perm``, ``step``, ``offset`` or ``expand``.
        perm: for ``perm``, the order of the buffer's dimensions (``shape[perm[i]]`` is buffer dim i).
        base: for ``expand``, the shape of the data before ``expand(shape)``.
        offset: for ``offset``, the storage offset.
        seed: seeds the values.
        low, high: value range (integers inclusive).
        special: put nan/inf/-inf/-0.0 at seeded positions (floating and complex dtypes).
        unique: a dim along which integer values are distinct (indices that must not repeat); -1: none.
        grad: the buffer is a leaf with ``requires_grad=True`` (floating dtypes).
    """

    shape: tuple[int, ...]
    dtype: str
    layout: str = "contig"
    perm: tuple[int, ...] = ()
    base: tuple[int, ...] = ()
    offset: int = 0
    seed: int = 0
    low: float = -4
    high: float = 4
    special: bool = False
    unique: int = -1
    grad: bool = False

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class DtypeArg:
    """A dtype argument (``dtype=torch.float64``): ``module.<name>`` of each library."""

    name: str


@dataclass
class Call:
    """One fuzz case: the op's name in the table, the arguments (specs and plain values) and notes."""

    op: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad: bool = False  # also compare input gradients of a backward pass through the result
    data_dependent: bool = False  # the output shape depends on values (a boolean mask index)

    def tensors(self) -> list[TensorSpec]:
        """Every tensor spec among the arguments, in order."""
        out: list[TensorSpec] = []
        _collect(self.args, out)
        _collect(tuple(self.kwargs.values()), out)
        return out


def _collect(value: Any, out: list[TensorSpec]) -> None:
    if isinstance(value, TensorSpec):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, out)


# ---- values -------------------------------------------------------------------------------------------------------
def spec_data(spec: TensorSpec) -> np.ndarray:
    """The logical values of ``spec`` (before the layout), as a NumPy array of its dtype."""
    shape = spec.base if spec.layout == "expand" else spec.shape
    rng = np.random.default_rng(spec.seed)
    n = int(np.prod(shape, dtype=np.int64))
    dt = spec.dtype
    if dt == "bool":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt in INTS:
        lo, hi = int(spec.low), int(spec.high)
        info = np.iinfo(dt)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        if spec.unique >= 0 and len(shape) > spec.unique and shape[spec.unique] <= hi - lo + 1 <= 4096 and n:
            # each fiber along dim `unique` holds distinct values (indices that must not repeat)
            moved = tuple(s for i, s in enumerate(shape) if i != spec.unique)
            keys = rng.random(moved + (hi - lo + 1,)).argsort(axis=-1)[..., : shape[spec.unique]] + lo
            flat = np.moveaxis(keys, -1, spec.unique).reshape(-1)
        else:
            flat = rng.integers(lo, hi, n, dtype=np.int64, endpoint=True)
        flat = flat.astype(dt)
    else:
        # multiples of 1/16: exact in every floating dtype for |x| < 16, so no conversion rounding
        lo, hi = float(spec.low), float(spec.high)
        flat = np.round(rng.uniform(lo, hi, n) * 16) / 16
        if dt in COMPLEX:
            flat = flat + 1j * (np.round(rng.uniform(lo, hi, n) * 16) / 16)
        if spec.special and n:
            k = min(n, 1 + int(rng.integers(0, 4)))
            where = rng.choice(n, k, replace=False)
            flat[where] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0]), k)
        flat = flat.astype(np_dtype(dt))
    return flat.reshape(shape)


def _filler(dtype: str) -> Any:
    # values in the gaps of a stepped or offset buffer: a kernel that reads them shows it
    return True if dtype == "bool" else 7


def _buffer(spec: TensorSpec) -> np.ndarray:
    """The contiguous NumPy buffer the tensor is a view of."""
    data = spec_data(spec)
    if spec.layout == "perm" and spec.perm:
        return np.array(data.transpose(spec.perm), order="C")
    if spec.layout == "step" and data.ndim:
        buf = np.full(data.shape[:-1] + (2 * data.shape[-1],), _filler(spec.dtype), dtype=data.dtype)
        buf[..., ::2] = data
        return buf
    if spec.layout == "offset":
        buf = np.full((spec.offset + data.size,), _filler(spec.dtype), dtype=data.dtype)
        buf[spec.offset:] = data.reshape(-1)
        return buf
    return np.array(data, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


# ---- tensors of either library -----------------------------------------------------------------------------------
def _from_numpy(module: Any, arr: np.ndarray, device: str) -> Any:
    dtype = getattr(module, "bfloat16" if arr.dtype == np_dtype("bfloat16") else arr.dtype.name)
    if arr.size == 0:
        # NumPy gives empty arrays its own strides; the libraries' own empty tensors have C strides
        t = module.zeros(arr.shape, dtype=dtype)
    elif module.__name__ == "torch" and dtype is module.bfloat16:
        t = module.from_numpy(arr.astype(np.float32)).to(dtype)
    else:
        t = module.from_numpy(arr.copy())
    return t if device == "cpu" else t.to(device)


def _tensor(module: Any, spec: TensorSpec, device: str) -> tuple[Any, Any]:
    """(the tensor, its leaf buffer)."""
    buf = _from_numpy(module, _buffer(spec), device)
    if spec.grad:
        buf.requires_grad_(True)
    t = buf
    if spec.layout == "perm" and spec.perm:
        t = t.permute(*_inverse(spec.perm))
    elif spec.layout == "step" and spec.shape:
        t = t[..., ::2]
    elif spec.layout == "offset":
        t = t[spec.offset:].view(spec.shape)
    elif spec.layout == "expand":
        t = t.expand(*spec.shape)
    return t, buf


def materialize(value: Any, module: Any, device: str, leaves: list[Any] | None = None) -> Any:
    """``value`` with every :class:`TensorSpec` replaced by a tensor of ``module`` on ``device``.

    The leaf buffers of specs with ``grad=True`` are appended to ``leaves`` (in spec order).
    """
    if isinstance(value, TensorSpec):
        t, buf = _tensor(module, value, device)
        if value.grad and leaves is not None:
            leaves.append(buf)
        return t
    if isinstance(value, DtypeArg):
        return getattr(module, value.name)
    if isinstance(value, list):
        return [materialize(v, module, device, leaves) for v in value]
    if isinstance(value, tuple):
        return tuple(materialize(v, module, device, leaves) for v in value)
    if isinstance(value, dict):
        return {k: materialize(v, module, device, leaves) for k, v in value.items()}
    return value


# ---- reproducer source -------------------------------------------------------------------------------------------
def _num(x: Any) -> str:
    return repr(x)  # nan, inf and -inf read back with ``from math import nan, inf``


def source(value: Any) -> str:
    """Python source for ``value`` (``torch`` names the library; ``nan``/``inf`` come from ``math``)."""
    if isinstance(value, TensorSpec):
        return _tensor_source(value)
    if isinstance(value, DtypeArg):
        return f"torch.{value.name}"
    if isinstance(value, slice):
        parts = ["" if v is None else source(v) for v in (value.start, value.stop, value.step)]
        text = f"{parts[0]}:{parts[1]}"
        return text + (f":{parts[2]}" if value.step is not None else "")
    if value is Ellipsis:
        return "..."
    if isinstance(value, list):
        return "[" + ", ".join(source(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(source(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, float):
        return _num(value)
    return repr(value)


def _tensor_source(spec: TensorSpec) -> str:
    buf = _buffer(spec)
    dt = f"torch.{spec.dtype}"
    if buf.size == 0:
        text = f"torch.zeros({tuple(buf.shape)}, dtype={dt})"
    else:
        text = f"torch.tensor({_complex_literal(buf)}, dtype={dt})"
    if spec.grad:
        text += ".requires_grad_()"
    if spec.layout == "perm" and spec.perm:
        text += f".permute{_inverse(spec.perm)}"
    elif spec.layout == "step" and spec.shape:
        text += "[..., ::2]"
    elif spec.layout == "offset":
        text += f"[{spec.offset}:].view({tuple(spec.shape)})"
    elif spec.layout == "expand":
        text += f".expand({tuple(spec.shape)})"
    return text


def _complex_literal(arr: np.ndarray) -> str:
    if arr.dtype == np_dtype("bfloat16") or arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    if np.iscomplexobj(arr):
        return _nested(arr, lambda z: f"complex({_num(float(z.real))}, {_num(float(z.imag))})")
    if arr.dtype == np.bool_:
        return repr(arr.tolist())
    if arr.dtype.kind in "iu":
        return repr(arr.tolist())
    return _nested(arr, lambda x: _num(float(x)))


def _nested(arr: np.ndarray, fmt: Any) -> str:
    if arr.ndim == 0:
        return fmt(arr[()])
    return "[" + ", ".join(_nested(a, fmt) for a in arr) + "]"
