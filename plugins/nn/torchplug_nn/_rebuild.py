"""What a checkpoint's rebuild calls mean in torchplug: tensors, parameters and checked constructors.

A checkpoint's pickle rebuilds every tensor by calling one of PyTorch's ``torch._utils._rebuild_*``
functions on a storage record; this module holds torchplug's equivalents, plus the constructors a
weights-only load lets a checkpoint call (``torch.Size``, ``collections.OrderedDict``, ...).  Every
one checks its arguments, because in a weights-only load they come from an untrusted file: a
malformed call is an ``UnpicklingError``, an impossible layout a ``RuntimeError``, and nothing here
iterates over a tensor or allocates memory that the checkpoint's records do not already hold.
"""

from __future__ import annotations

import collections
import pickle
import reprlib
import threading
from typing import Any

import torchplug
from torchplug._tensor.tensor import Size, Tensor

__all__ = [
    "LoadedStorage", "StorageType", "load_context",
    "rebuild_tensor", "rebuild_tensor_v2", "rebuild_tensor_v3", "rebuild_parameter",
    "rebuild_parameter_with_state", "rebuild_meta_tensor_no_storage", "rebuild_device_tensor_from_cpu_tensor",
    "rebuild_from_type_v2", "get_layout", "make_size", "make_device", "make_ordered_dict", "make_counter",
    "make_set", "make_complex", "make_bytearray", "codecs_encode", "make_parameter",
]

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


def describe(obj: Any) -> str:
    """A bounded repr for error messages (checkpoint values can be huge)."""
    return _short.repr(obj)


class StorageType:
    """What a checkpoint's storage class (``torch.FloatStorage``, ...) means: the records' dtype."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str, dtype: Any) -> None:
        self.name, self.dtype = name, dtype

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


class LoadedStorage:
    """One storage record of a checkpoint, read once and viewed by every tensor that refers to it.

    ``flat`` is a 1-D tensor of ``dtype`` holding the whole record on its final device; tensors are
    views of it, so views saved from one storage come back sharing one torchplug Storage.
    """

    __slots__ = ("key", "dtype", "flat", "_as")

    def __init__(self, key: str, dtype: Any, flat: Tensor) -> None:
        self.key, self.dtype, self.flat = key, dtype, flat
        self._as: dict[Any, Tensor] = {}

    def typed(self, dtype: Any) -> Tensor:
        """The record as a flat tensor of ``dtype`` (``_rebuild_tensor_v3`` reads byte records as any dtype)."""
        if dtype is self.dtype:
            return self.flat
        view = self._as.get(dtype)
        if view is None:
            nbytes = self.flat.numel() * self.flat.element_size()
            if nbytes % dtype.itemsize:
                raise RuntimeError(
                    f"storage record data/{self.key} holds {nbytes} bytes, which is not a whole number of "
                    f"{dtype} elements ({dtype.itemsize} bytes each); the checkpoint is corrupted."
                )
            view = self._as[dtype] = self.flat.view(dtype)
        return view

    def __repr__(self) -> str:
        return f"<storage record data/{self.key}: {self.flat.numel()} x {self.dtype} on {self.flat.device}>"


class _LoadContext(threading.local):
    """Per-thread state of the load in progress (torch keeps map_location the same way)."""

    def __init__(self) -> None:
        super().__init__()
        self.map_location: Any = None


load_context = _LoadContext()


# ---- argument checks --------------------------------------------------------------------------
def _malformed(func: str, what: str, got: Any) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(f"{func}: {what}, got {describe(got)} ({type(got).__name__})")


def _ints(func: str, what: str, value: Any, *, nonneg: bool) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)):  # torch.Size is a tuple
        raise _malformed(func, f"{what} must be a tuple of ints", value)
    out = []
    for v in value:
        if not isinstance(v, int):
            raise _malformed(func, f"{what} must be a tuple of ints", value)
        if nonneg and v < 0:
            raise RuntimeError(f"{func}: {what} must be non-negative, got {describe(value)}")
        out.append(int(v))
    return tuple(out)


def _flag(func: str, what: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _malformed(func, f"{what} must be a bool", value)
    return value


def _dtype(func: str, value: Any) -> Any:
    if not isinstance(value, torchplug.dtype):
        raise _malformed(func, "dtype must be a torch dtype", value)
    return value


def _storage(func: str, value: Any) -> LoadedStorage:
    if not isinstance(value, LoadedStorage):
        raise _malformed(func, "the first argument must be a storage of this checkpoint", value)
    return value


def _hooks(func: str, value: Any) -> None:
    # Hooks are never saved (torch writes an empty OrderedDict); anything but a dict is malformed.
    if value is not None and not isinstance(value, dict):
        raise _malformed(func, "backward_hooks must be an OrderedDict", value)


def _view(func: str, flat: Tensor, offset: Any, size: Any, stride: Any) -> Tensor:
    """A tensor viewing ``flat``'s storage, bounds-checked against the record (never a copy)."""
    if not isinstance(offset, int) or offset < 0:
        raise RuntimeError(f"{func}: storage offset must be a non-negative int, got {describe(offset)}")
    size = _ints(func, "size", size, nonneg=True)
    stride = _ints(func, "stride", stride, nonneg=True)
    if len(size) != len(stride):
        raise RuntimeError(f"{func}: size {size} and stride {stride} have different lengths")
    try:
        # as_strided checks the extent against the storage; detach drops the view's _base so the
        # result is a leaf that shares the record's Storage, like torch's set_().
        return flat.as_strided(size, stride, offset).detach()
    except (ValueError, OverflowError, MemoryError) as exc:  # numpy rejects absurd shapes this way
        raise RuntimeError(f"{func}: cannot view the storage with size {size}, stride {stride}: {exc}") from None


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


_MATH_BITS = {"conj": "CONJ_MASK", "neg": "NEG_MASK"}


def _metadata(func: str, metadata: Any) -> int:
    """The key-set bits torch's tensor metadata sets (the conjugate and negative bits of lazy views)."""
    if metadata is None:
        return 0
    if not isinstance(metadata, dict):
        raise _malformed(func, "metadata must be a dict", metadata)
    set_bits = sorted(str(k) for k, v in metadata.items() if v)
    unknown = [k for k in set_bits if k not in _MATH_BITS]
    if unknown:
        raise RuntimeError(f"{func}: the checkpoint marks a tensor with {unknown}, tensor metadata torchplug does "
                           f"not know (it reads {sorted(_MATH_BITS)}).")
    from torchplug._tensor import math_bits as _math_bits

    return sum(getattr(_math_bits, _MATH_BITS[k]) for k in set_bits)


def _with_bits(t: Tensor, bits: int) -> Tensor:
    # the storage holds the values before the lazy conjugation/negation: the bits make it read as saved
    t._keyset |= bits
    return t


# ---- torch._utils rebuild functions ------------------------------------------------------------
def rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor``: a view of a storage record."""
    rec = _storage("_rebuild_tensor", storage)
    return _view("_rebuild_tensor", rec.flat, storage_offset, size, stride)


def rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                      backward_hooks: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: a view of a storage record with its requires_grad flag."""
    func = "_rebuild_tensor_v2"
    rec = _storage(func, storage)
    _hooks(func, backward_hooks)
    bits = _metadata(func, metadata)
    t = _with_bits(_view(func, rec.flat, storage_offset, size, stride), bits)
    return _finish(t, _flag(func, "requires_grad", requires_grad))


def rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any,
                      backward_hooks: Any, dtype: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v3``: like v2 for an untyped (byte) record read as ``dtype``."""
    func = "_rebuild_tensor_v3"
    rec = _storage(func, storage)
    _hooks(func, backward_hooks)
    bits = _metadata(func, metadata)
    flat = rec.typed(_dtype(func, dtype))
    t = _with_bits(_view(func, flat, storage_offset, size, stride), bits)
    return _finish(t, _flag(func, "requires_grad", requires_grad))


def make_parameter(data: Any = None, requires_grad: Any = True) -> Tensor:
    """``torch.nn.Parameter(data, requires_grad)`` as a checkpoint may call it."""
    from .nn.parameter import Parameter

    if data is not None and not isinstance(data, Tensor):
        raise _malformed("Parameter", "data must be a tensor", data)
    return Parameter(data, _flag("Parameter", "requires_grad", requires_grad))


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Tensor:
    """``torch._utils._rebuild_parameter``: an ``nn.Parameter`` sharing ``data``'s storage."""
    func = "_rebuild_parameter"
    _hooks(func, backward_hooks)
    if not isinstance(data, Tensor):
        raise _malformed(func, "data must be a tensor", data)
    return make_parameter(data, _flag(func, "requires_grad", requires_grad))


def _set_state(func: str, obj: Any, state: Any) -> Any:
    """Restore the attributes torch saved with a tensor (``_utils._set_obj_state``), checked.

    Only plain attribute names go into ``__dict__``: a checkpoint must not replace the tensor's
    internals (its slots) or dunder attributes.
    """
    if state is None:
        return obj
    slots: Any = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if slots:
        raise _malformed(func, "a tensor's saved state cannot set slot attributes", slots)
    if not state:
        return obj
    if not isinstance(state, dict):
        raise _malformed(func, "a tensor's saved state must be a dict of attributes", state)
    reserved = set(Tensor.__slots__)
    for key in state:
        if not isinstance(key, str) or key.startswith("__") or key in reserved or not key.isidentifier():
            raise _malformed(func, "a tensor's saved attribute names must be plain identifiers", key)
    obj.__dict__.update(state)
    return obj


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any) -> Tensor:
    """``torch._utils._rebuild_parameter_with_state``: a parameter plus its Python attributes."""
    param = rebuild_parameter(data, requires_grad, backward_hooks)
    return _set_state("_rebuild_parameter_with_state", param, state)


def rebuild_meta_tensor_no_storage(dtype: Any, size: Any, stride: Any, requires_grad: Any) -> Tensor:
    """``torch._utils._rebuild_meta_tensor_no_storage``: a meta tensor (torch saves those without data)."""
    func = "_rebuild_meta_tensor_no_storage"
    dt = _dtype(func, dtype)
    size = _ints(func, "size", size, nonneg=True)
    stride = _ints(func, "stride", stride, nonneg=True)
    if len(size) != len(stride):
        raise RuntimeError(f"{func}: size {size} and stride {stride} have different lengths")
    t = torchplug.empty_strided(size, stride, dtype=dt, device="meta")
    return _finish(t, _flag(func, "requires_grad", requires_grad))


def rebuild_device_tensor_from_cpu_tensor(data: Any, dtype: Any, device: Any, requires_grad: Any) -> Tensor:
    """``torch._utils._rebuild_device_tensor_from_cpu_tensor``: a CPU copy moved to its device."""
    func = "_rebuild_device_tensor_from_cpu_tensor"
    if not isinstance(data, Tensor):
        raise _malformed(func, "data must be a tensor", data)
    if not isinstance(device, str):
        raise _malformed(func, "device must be a string", device)
    from ._storage_loader import restore_location_name

    t = data.to(dtype=_dtype(func, dtype), device=restore_location_name(device, load_context.map_location))
    return _finish(t, _flag(func, "requires_grad", requires_grad))


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """``torch._tensor._rebuild_from_type_v2``: a tensor (or Parameter) plus its saved attributes.

    ``func`` was resolved through the allow-list like every other global; ``new_type`` must be
    torchplug's ``Tensor`` or ``nn.Parameter`` (torchplug tensors cannot be re-classed otherwise).
    """
    from .nn.parameter import Parameter

    name = "_rebuild_from_type_v2"
    if not callable(func):
        raise _malformed(name, "the rebuild function must be callable", func)
    if not isinstance(args, tuple):
        raise _malformed(name, "args must be a tuple", args)
    ret = func(*args)
    if not isinstance(ret, Tensor):
        raise _malformed(name, "the rebuild function must return a tensor", ret)
    if new_type is Parameter and type(ret) is not Parameter:
        ret = Parameter(ret, ret.requires_grad)
    elif new_type is not type(ret):
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise _malformed(name, "the tensor type must be a Tensor class", new_type)
        raise RuntimeError(
            f"{name}: the checkpoint holds a tensor of subclass {new_type.__module__}.{new_type.__qualname__}; "
            "torchplug can rebuild only Tensor and nn.Parameter from a checkpoint."
        )
    return _set_state(name, ret, state)


# ---- constructors a checkpoint may call -------------------------------------------------------
_LAYOUTS = {"torch.strided": "strided"}


def get_layout(name: Any) -> Any:
    """``torch.serialization._get_layout``: a layout from its name (torch pickles layouts that way)."""
    if not isinstance(name, str):
        raise _malformed("_get_layout", "the layout name must be a string", name)
    attr = _LAYOUTS.get(name)
    if attr is None:
        raise RuntimeError(f"_get_layout: the checkpoint uses layout {name!r}; torchplug has only torch.strided")
    return getattr(torchplug, attr)


_PLAIN = (tuple, list, dict, str, bytes, bytearray, set, frozenset)


def _plain_args(func: str, args: tuple, most: int) -> None:
    # Iterating a tensor from the checkpoint (a zero-stride view can claim 10**12 rows) would
    # create one Python object per row; constructors only take plain containers from the pickle.
    if len(args) > most:
        raise _malformed(func, f"takes at most {most} argument(s)", args)
    for a in args:
        if not isinstance(a, _PLAIN):
            raise _malformed(func, "accepts only plain containers from a checkpoint", a)


def make_size(*args: Any) -> Size:
    """``torch.Size(sizes)``."""
    if len(args) != 1:
        raise _malformed("torch.Size", "takes one tuple of ints", args)
    return Size(_ints("torch.Size", "sizes", args[0], nonneg=False))


def make_device(*args: Any) -> Any:
    """``torch.device(type[, index])``; the device string is parsed, never used to import anything."""
    if not 1 <= len(args) <= 2 or not isinstance(args[0], str) or (len(args) == 2 and not isinstance(args[1], (int, type(None)))):
        raise _malformed("torch.device", "takes a device string and an optional index", args)
    return torchplug.device(*args)


def make_ordered_dict(*args: Any) -> collections.OrderedDict:
    """``collections.OrderedDict(items)``."""
    _plain_args("OrderedDict", args, 1)
    return collections.OrderedDict(*args)


def make_counter(*args: Any) -> collections.Counter:
    """``collections.Counter(items)``."""
    _plain_args("Counter", args, 1)
    return collections.Counter(*args)


def make_set(*args: Any) -> set:
    """``set(items)``."""
    _plain_args("set", args, 1)
    return set(*args)


def make_complex(*args: Any) -> complex:
    """``complex(real, imag)``."""
    if len(args) > 2 or not all(isinstance(a, (int, float, complex, str)) for a in args):
        raise _malformed("complex", "takes up to two numbers", args)
    return complex(*args)


_ENCODINGS = {"latin1", "latin-1", "utf-8", "utf8", "ascii"}


def make_bytearray(*args: Any) -> bytearray:
    """``bytearray(data[, encoding])``; a size argument (an allocation the file does not hold) is refused."""
    if not args:
        return bytearray()
    if isinstance(args[0], (bytes, bytearray)) and len(args) == 1:
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], str) and args[1].lower() in _ENCODINGS:
        return bytearray(args[0], args[1])
    raise _malformed("bytearray", "takes bytes, or a string and its encoding", args)


def codecs_encode(*args: Any) -> bytes:
    """``_codecs.encode(text, 'latin1')``: how protocol-2 pickles spell a ``bytes`` value."""
    if not 1 <= len(args) <= 2 or not isinstance(args[0], str):
        raise _malformed("_codecs.encode", "takes a string and a text encoding", args)
    encoding = args[1] if len(args) == 2 else "utf-8"
    if not isinstance(encoding, str) or encoding.lower() not in _ENCODINGS:
        raise _malformed("_codecs.encode", f"encoding must be one of {sorted(_ENCODINGS)}", encoding)
    return args[0].encode(encoding)
