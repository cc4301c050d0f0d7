"""Batched tensors: a value with one batch dimension at a vmap level, seen with that dimension hidden.

A ``BatchedTensor`` is a :class:`torchplug.Tensor` whose key set holds the ``Batched`` dispatch key, so
every op it reaches goes to a batching rule (or the per-sample fallback) first, as PyTorch's
FuncTorchBatched key does.  Its shape, strides, dtype and device are the *logical* ones (the value's,
without the batch dimension); ``_bt_value`` is the physical tensor, ``_bt_bdim`` where its batch
dimension is and ``_bt_level`` the vmap that added it.  Nested vmaps nest wrappers: the value of a
level-2 wrapper may itself be a level-1 wrapper.
"""

from __future__ import annotations

import threading
from typing import Any

import torchplug
from torchplug._dispatch import keys as K
from torchplug._dispatch.tls import tls

__all__ = ["call", "BatchedTensor", "BATCHED_MASK", "VmapLevel", "wrap", "unwrap", "level_of", "max_level",
           "current_levels", "push_level", "pop_level", "is_batched"]

BATCHED_MASK = 1 << K.BATCHED_BIT
_Tensor = torchplug.Tensor
_new = object.__new__


class _LogicalPayload:
    """The ``_data`` of a batched tensor: the logical shape and strides only (it owns no memory)."""

    __slots__ = ("shape", "strides", "nbytes")

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], nbytes: int) -> None:
        self.shape = shape
        self.strides = strides
        self.nbytes = nbytes


class BatchedTensor(_Tensor):
    """A tensor batched at one vmap level (see the module docstring); made only by :func:`wrap`."""

    __slots__ = ("_bt_value", "_bt_bdim", "_bt_level")

    def __repr__(self) -> str:
        return f"BatchedTensor(lvl={self._bt_level}, bdim={self._bt_bdim}, value=\n{self._bt_value!r}\n)"

    # Reading the values of one sample is a data-dependent control flow vmap cannot batch; PyTorch's messages.
    def item(self) -> Any:
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() "
            "on a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
            "somewhere inside PyTorch internals, please file a bug report.")

    def tolist(self) -> Any:
        raise RuntimeError("vmap: It looks like you're calling .tolist() on a Tensor. We don't support vmap over "
                           "reading the values of a Tensor; rewrite it with tensor operations.")

    def numpy(self, *, force: bool = False) -> Any:
        raise RuntimeError("vmap: Cannot access the data of a batched Tensor (.numpy()); return it from the "
                           "vmapped function instead.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self.numpy()

    def __bool__(self) -> bool:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
            "support that yet, please shout over at https://github.com/pytorch/functorch/issues/257 .")

    # Like PyTorch's batching rules for new_*: the new tensor is batched too (one per sample), so code that
    # fills a fresh tensor from a batched one (gradient formulas: ``g.new_zeros(shape)``) stays batched.
    def new_zeros(self, *size: Any, **kwargs: Any) -> Any:
        return _new_batched(self, "new_zeros", size, kwargs)

    def new_ones(self, *size: Any, **kwargs: Any) -> Any:
        return _new_batched(self, "new_ones", size, kwargs)

    def new_empty(self, *size: Any, **kwargs: Any) -> Any:
        return _new_batched(self, "new_empty", size, kwargs)

    def new_full(self, size: Any, fill_value: Any, **kwargs: Any) -> Any:
        return _new_batched(self, "new_full", (size,), kwargs, fill_value)

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor). If you're "
                           "using torch.compile/export/fx, it is likely that we are erroneously tracing into a custom "
                           "kernel. To fix this, please wrap the custom kernel into an opaque custom op.")


def _new_batched(t: BatchedTensor, method: str, size: Any, kwargs: dict[str, Any], *fill: Any) -> BatchedTensor:
    if "size" in kwargs:
        size = kwargs.pop("size")
    elif len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    value = t._bt_value
    n = value.shape[t._bt_bdim]
    return wrap(getattr(value, method)((n,) + tuple(size), *fill, **kwargs), 0, t._bt_level)


def wrap(value: Any, bdim: int, level: int) -> BatchedTensor:
    """A batched view of ``value`` whose dimension ``bdim`` is the batch dimension of vmap ``level``."""
    shape = value.shape
    ndim = len(shape)
    if bdim < 0:
        bdim += ndim
    item = value._dtype.itemsize
    strides = value.stride()
    logical = tuple(shape[:bdim]) + tuple(shape[bdim + 1:])
    logical_strides = tuple(s * item for s in strides[:bdim] + strides[bdim + 1:])
    n = 1
    for s in logical:
        n *= s
    t = _new(BatchedTensor)
    t._data = _LogicalPayload(logical, logical_strides, n * item)
    t._dtype = value._dtype
    t._device = value._device
    # the backend bits, so explain() shows the device; never autograd bits: autograd records on the value
    t._keyset = BATCHED_MASK | (value._keyset & K.BACKEND_BAND)
    t._storage = value._storage  # one version counter: in-place writes through the value count here too
    t._base = None
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._autograd_meta = None
    t._bt_value = value
    t._bt_bdim = bdim
    t._bt_level = level
    return t


def is_batched(t: Any) -> bool:
    """True if ``t`` is a batched tensor (at any level)."""
    return t.__class__ is BatchedTensor


def level_of(t: Any) -> int:
    """The vmap level of a batched tensor, 0 for anything else."""
    return t._bt_level if t.__class__ is BatchedTensor else 0


def unwrap(t: Any, level: int) -> tuple[Any, int | None]:
    """``(value, bdim)`` of a tensor batched at ``level``; ``(t, None)`` for anything else."""
    if t.__class__ is BatchedTensor and t._bt_level == level:
        return t._bt_value, t._bt_bdim
    return t, None


def max_level(args: tuple[Any, ...]) -> int:
    """The highest vmap level among the tensors (and tensor lists) in ``args``; 0 if none is batched."""
    best = 0
    for a in args:
        cls = a.__class__
        if cls is BatchedTensor:
            if a._bt_level > best:
                best = a._bt_level
        elif cls is list or cls is tuple:
            for b in a:
                if b.__class__ is BatchedTensor and b._bt_level > best:
                    best = b._bt_level
    return best


# ---- the stack of active vmap levels -----------------------------------------------------------------
class VmapLevel:
    """One active vmap: its level number, batch size and randomness mode."""

    __slots__ = ("level", "batch_size", "randomness")

    def __init__(self, level: int, batch_size: int, randomness: str) -> None:
        self.level = level
        self.batch_size = batch_size
        self.randomness = randomness


class _State(threading.local):
    def __init__(self) -> None:
        self.levels: list[VmapLevel] = []
        self.counter = 0


_STATE = _State()


def current_levels() -> list[VmapLevel]:
    """The active vmap levels of this thread, outermost first."""
    return _STATE.levels


def find_level(level: int) -> VmapLevel | None:
    for lv in reversed(_STATE.levels):
        if lv.level == level:
            return lv
    return None


def push_level(batch_size: int, randomness: str) -> tuple[VmapLevel, tuple[int, int]]:
    """Enter a vmap level: a fresh level number, and the Batched key in the TLS include set."""
    _STATE.counter += 1
    lv = VmapLevel(_STATE.counter, batch_size, randomness)
    _STATE.levels.append(lv)
    saved = (tls.include, tls.mask)
    tls.include = saved[0] | BATCHED_MASK
    tls.mask = saved[1] | BATCHED_MASK
    return lv, saved


def pop_level(lv: VmapLevel, saved: tuple[int, int]) -> None:
    """Leave the vmap level entered by :func:`push_level`."""
    _STATE.levels.remove(lv)
    tls.include, tls.mask = saved


# ---- calling an op with kernel-style (all positional) arguments -----------------------------------------
_CALL_SPECS: dict[int, tuple[int, tuple[str, ...]]] = {}


def call(op: Any, args: Any) -> Any:
    """Call ``op`` (an OpOverload) with its arguments in schema order, as kernels receive them
    (keyword-only arguments positionally): they go through the dispatcher again from the top."""
    entry = op._entry
    spec = _CALL_SPECS.get(id(entry))
    if spec is None:
        from torchplug._dispatch.codegen import python_name

        arguments = entry.schema.arguments
        npos = sum(1 for a in arguments if not a.kwarg_only)
        spec = (npos, tuple(python_name(a.name) for a in arguments if a.kwarg_only))
        _CALL_SPECS[id(entry)] = spec
    npos, kwnames = spec
    if not kwnames or len(args) <= npos:
        return entry.call(*args)
    return entry.call(*args[:npos], **dict(zip(kwnames, args[npos:])))
