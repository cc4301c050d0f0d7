"""PyTorch's memory-overlap checks for the tensors an op writes (ATen's MemoryOverlap.cpp).

The core's ADInplaceOrView kernel applies them once, for every in-place and ``out=`` overload
of an aten op, so every backend (cpu, meta, cuda, third-party) refuses the same writes:

* internal overlap (``assert_no_internal_overlap``): a written tensor with a dimension of size > 1
  and stride 0 (an ``expand``-ed view) would write several results into one memory location;
* partial overlap (``assert_no_partial_overlap``): an input that shares some, but not all, of the
  written tensor's memory would be read after part of it was overwritten;
* any overlap (``assert_no_overlap``, ``index_put_`` only): an input sharing memory at all.

Like PyTorch, only what is cheap to detect is refused: a written tensor with no zero stride, or
an input on another storage, costs one attribute test.  Which ops check what mirrors ATen (some
ops are idempotent and allowed to write through an expanded view, some only warn); the tables
below were taken from torch 2.13's behaviour.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "INTERNAL_OVERLAP_MESSAGE",
    "PARTIAL_OVERLAP_MESSAGE",
    "has_internal_overlap",
    "assert_no_internal_overlap",
    "overlap_status",
    "assert_no_partial_overlap",
    "assert_no_overlap",
    "OverlapPolicy",
    "overlap_policy",
]

INTERNAL_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation."
)
PARTIAL_OVERLAP_MESSAGE = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation."
)

# ---- what torch checks, per op (schema name + overload) ------------------------------------------------
# Written through an expanded view without complaint: idempotent writes (fill_, threshold_, tril_) and
# ops whose kernels build their TensorIterator with check_mem_overlap(false) (reductions, mv, bmm).
_NO_INTERNAL_CHECK = frozenset(
    """fill_.Scalar zero_ tril_ triu_ tril.out triu.out threshold_ baddbmm_ addmv_ bmm.out mv.out
    narrow_copy.out histc.out embedding_renorm_ sum.out nansum.out prod.out amax.out amin.out argmax.out
    argmin.out all.out any.out std.out var.out linalg_vector_norm.out""".split()
)
# Written through an expanded view with PyTorch's deprecation warning.
_WARN_INTERNAL = {
    "masked_fill_.Scalar": ("masked_fill_", "tensor[mask] = scalar"),
    "masked_fill_.Tensor": ("masked_fill_", "tensor[mask] = scalar"),
    "index_fill_.int_Scalar": ("index_fill_", "tensor[mask] = scalar"),
    "index_fill_.int_Tensor": ("index_fill_", "tensor[mask] = scalar"),
    "index_put_": ("index_put_", "tensor[indices] = tensor"),
}
# Non-pointwise ops whose written tensor may not partially overlap an input (TensorIterator-based
# kernels and the indexing ops that call assert_no_partial_overlap); pointwise ops always check.
_PARTIAL_CHECK = frozenset(
    """copy_ cat.out stack.out index_select.out gather.out cumsum.out cumprod.out cumsum_ cumprod_ take.out
    index_add_ index_add.out index_copy_ index_copy.out scatter_.src scatter_.value scatter.src_out scatter.value_out scatter_add_
    scatter_add.out scatter_reduce_.two scatter_reduce.two_out""".split()
)
# Pointwise ops that do not (threshold_ is idempotent in ATen; fill_.Tensor reads a 0-dim value).
_NO_PARTIAL_CHECK = frozenset("threshold_ fill_.Tensor masked_fill_.Tensor".split())
# Ops whose written tensor may share no memory at all with these inputs (ATen's assert_no_overlap).
_NO_OVERLAP = {"index_put_": ("indices", "values")}


def _dropout_writes(args: Sequence[Any]) -> bool:
    # dropout_(self, p, train) returns self untouched for p == 0, eval mode or an empty self.
    return args[1] != 0 and bool(args[2]) and args[0]._data.size != 0


# Ops that write only for some arguments: the checks run only when they do write.
_WRITES_IF: dict[str, Callable[[Sequence[Any]], bool]] = {
    "dropout_": _dropout_writes,
    "feature_dropout_": _dropout_writes,
    "alpha_dropout_": _dropout_writes,
    "feature_alpha_dropout_": _dropout_writes,
}


# ---- the checks ---------------------------------------------------------------------------------------
def has_internal_overlap(t: Any) -> bool:
    """True when ``t`` has a dim of size > 1 with stride 0 (PyTorch's ``MemOverlap::Yes``)."""
    payload = t._data
    strides = payload.strides
    if 0 not in strides:
        return False
    shape = payload.shape
    if 0 in shape:  # an empty tensor is non-overlapping and dense: nothing is written
        return False
    return any(st == 0 and size > 1 for size, st in zip(shape, strides))


def assert_no_internal_overlap(t: Any) -> None:
    """Raise PyTorch's RuntimeError when writing ``t`` would write one memory location twice."""
    if has_internal_overlap(t):
        raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)


def _dense_extent(t: Any) -> tuple[int, int] | None:
    """[start, end) in storage bytes when ``t`` is non-overlapping and dense, else None (TOO_HARD)."""
    payload = t._data
    item = t._dtype.itemsize
    dims = sorted((abs(st), size) for size, st in zip(payload.shape, payload.strides) if size != 1)
    expected = item
    for st, size in dims:
        if st != expected:
            return None
        expected *= size
    start = t.storage_offset() * item
    for size, st in zip(payload.shape, payload.strides):
        if st < 0:
            start += (size - 1) * st
    return start, start + expected


def overlap_status(a: Any, b: Any) -> str:
    """PyTorch's get_overlap_status: 'no', 'full', 'partial' or 'too_hard' (layouts it cannot compare)."""
    if a is b:
        return "full"
    if a._storage is not b._storage or a._data.size == 0 or b._data.size == 0:
        return "no"
    ea = _dense_extent(a)
    eb = _dense_extent(b)
    if ea is None or eb is None:
        return "too_hard"
    if ea[0] < eb[1] and eb[0] < ea[1]:
        return "full" if ea == eb else "partial"
    return "no"


def assert_no_partial_overlap(written: Any, other: Any) -> None:
    """Raise when ``other`` shares part (not all) of ``written``'s memory."""
    if overlap_status(written, other) == "partial":
        raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)


def assert_no_overlap(written: Any, other: Any) -> None:
    """Raise when ``other`` shares any of ``written``'s memory (full overlap included)."""
    if overlap_status(written, other) in ("partial", "full"):
        raise RuntimeError(PARTIAL_OVERLAP_MESSAGE)


# ---- per-op policy ------------------------------------------------------------------------------------
def _tensors(value: Any) -> Sequence[Any]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return [v for v in value if v is not None]
    return (value,)


class OverlapPolicy:
    """The overlap checks one mutating op makes on its arguments, decided once per op.

    Attributes:
        written: indices of the written arguments.
        internal: 'raise', 'warn' or None.
        partial: indices of the inputs that may not partially overlap a written tensor.
        disjoint: indices of the inputs that may not overlap a written tensor at all.
    """

    __slots__ = ("written", "internal", "warning", "partial", "disjoint", "writes_if")

    def __init__(self, written: tuple[int, ...], internal: str | None, warning: str, partial: tuple[int, ...],
                 disjoint: tuple[int, ...], writes_if: Callable[[Sequence[Any]], bool] | None) -> None:
        self.written = written
        self.internal = internal
        self.warning = warning
        self.partial = partial
        self.disjoint = disjoint
        self.writes_if = writes_if

    def check(self, args: Sequence[Any]) -> None:
        """Raise (or warn) as PyTorch does before ``args`` are written."""
        if self.writes_if is not None and not self.writes_if(args):
            return
        for i in self.written:
            for out in _tensors(args[i]):
                self._check_one(out, args)

    def _check_one(self, out: Any, args: Sequence[Any]) -> None:
        if self.internal is not None and has_internal_overlap(out):
            if self.internal == "raise":
                raise RuntimeError(INTERNAL_OVERLAP_MESSAGE)
            warnings.warn(self.warning, UserWarning, stacklevel=5)
        storage = out._storage
        for i in self.partial:
            for other in _tensors(args[i]):
                if getattr(other, "_storage", None) is storage:
                    assert_no_partial_overlap(out, other)
        for i in self.disjoint:
            for other in _tensors(args[i]):
                if getattr(other, "_storage", None) is storage:
                    assert_no_overlap(out, other)


def overlap_policy(schema: Any, tags: Sequence[str] = ()) -> OverlapPolicy | None:
    """The checks for the mutating aten op ``schema`` (None for ops PyTorch does not check, e.g. custom ops)."""
    if schema.namespace != "aten" or not schema.is_mutable:
        return None
    key = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
    written = tuple(schema.mutated_argument_indices)
    if key in _NO_INTERNAL_CHECK:
        internal, warning = None, ""
    elif key in _WARN_INTERNAL:
        op, example = _WARN_INTERNAL[key]
        internal = "warn"
        warning = (
            f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor before performing this "
            f"operation. This also applies to advanced indexing e.g. {example}"
        )
    else:
        internal, warning = "raise", ""
    inputs = tuple(
        i for i, a in enumerate(schema.arguments) if a.type.base == "Tensor" and i not in written
    )
    checks_partial = key in _PARTIAL_CHECK or ("pointwise" in tags and key not in _NO_PARTIAL_CHECK)
    partial = inputs if checks_partial else ()
    names = _NO_OVERLAP.get(key, ())
    disjoint = tuple(i for i in inputs if schema.arguments[i].name in names)
    if internal is None and not partial and not disjoint:
        return None
    return OverlapPolicy(written, internal, warning, partial, disjoint, _WRITES_IF.get(schema.name))
