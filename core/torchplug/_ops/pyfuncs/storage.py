"""PyTorch's ``UntypedStorage`` API on torchplug's storages: ``torchplug.UntypedStorage(n, device=...)``,
and the byte-level methods scripts call (``tolist``, ``fill_``, ``copy_``, ``clone``, ``cpu``/``to``,
indexing, ``is_shared``/``share_memory_``, ``new``, ``resize_`` (refused)...).

A tensor's storage is the runtime's :class:`~torchplug._runtime.storage.Storage` (shared by its views,
holding the version counter); the methods here are attached to that class, and work through a flat
``uint8`` tensor over the storage's bytes, so they run on any backend whose buffers are arrays.
"""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._runtime.backends import backend_for
from torchplug._runtime.device import as_device
from torchplug._tensor import shared_memory as _shm
from torchplug._tensor.tensor import Storage, Tensor, make_tensor

__all__ = ["FUNCTIONS", "METHODS", "UntypedStorage"]

# storages marked by share_memory_ (torchplug runs in one process: only the mark is kept, as PyTorch reports)


def _bytes(storage: Storage) -> Tensor:
    """A flat uint8 tensor over ``storage``'s bytes (writes go to the storage)."""
    root = storage.data
    view = getattr(root, "view", None)
    if root is None or view is None or not getattr(getattr(root, "flags", None), "c_contiguous", False):
        raise NotImplementedError(
            f"UntypedStorage byte access is not available for this {storage.device.type} storage: its buffer is not "
            "a contiguous array (meta storages have no data). Work on a tensor of the storage instead.")
    flat = root.reshape(-1).view(D.uint8.numpy_dtype)
    return make_tensor(flat, D.uint8, storage.device, backend_for(storage.device.type).keyset, storage)


def _new_storage(nbytes: int, device: Any) -> Storage:
    return A.empty([int(nbytes)], dtype=D.uint8, device=device)._storage


class _UntypedStorageMeta(type):
    """``UntypedStorage(n)`` makes a storage; every tensor's storage is an instance."""

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        dev = as_device(device) if device is not None else as_device("cpu")
        if not args:
            return _new_storage(0, dev)
        first = args[0]
        if isinstance(first, int):
            return _new_storage(first, dev)
        values = list(first)  # a sequence of byte values
        storage = _new_storage(len(values), dev)
        if values:
            A.copy_(_bytes(storage), A._to_copy(_torch().tensor(values, dtype=D.uint8), device=dev))
        return storage

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Storage)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, Storage)


class UntypedStorage(Storage, metaclass=_UntypedStorageMeta):
    """PyTorch's ``torch.UntypedStorage``: ``UntypedStorage(nbytes, device=None)`` or ``UntypedStorage(byte
    values)``; ``tensor.untyped_storage()`` is an instance (torchplug's storage, shared by views)."""

    __slots__ = ()


def _torch() -> Any:
    from torchplug._ops.torch_namespace import TORCH

    return TORCH


def _tolist(self: Storage) -> list[int]:
    """The bytes as a list of ints."""
    return _bytes(self).tolist()


def _getitem(self: Storage, index: Any) -> Any:
    if isinstance(index, slice):
        raise NotImplementedError("UntypedStorage slicing is not supported by torchplug: index a tensor of the "
                                  "storage instead (tensor.view(torch.uint8)[start:stop]).")
    return _bytes(self)[index].item()


def _setitem(self: Storage, index: Any, value: Any) -> None:
    _bytes(self)[index] = value


def _fill_(self: Storage, value: int) -> Storage:
    """Set every byte to ``value``."""
    A["fill_.Scalar"](_bytes(self), value)
    return self


def _copy_(self: Storage, src: Storage, non_blocking: bool = False) -> Storage:
    """Copy ``src``'s bytes (same size) into this storage."""
    if src._nbytes != self._nbytes:
        raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src was {src._nbytes} bytes")
    if self._nbytes:
        A.copy_(_bytes(self), _bytes(src), non_blocking)
    return self


def _to_device(self: Storage, device: Any) -> Storage:
    dev = as_device(device)
    if dev == self.device:
        return self
    copy = _new_storage(self._nbytes, dev)
    return _copy_(copy, self)


def _clone(self: Storage) -> Storage:
    """A new storage (same device) holding a copy of the bytes."""
    return _copy_(_new_storage(self._nbytes, self.device), self)


def _cpu(self: Storage) -> Storage:
    """This storage if on the cpu, else a cpu copy."""
    return _to_device(self, "cpu")


def _to(self: Storage, *, device: Any, non_blocking: bool = False) -> Storage:
    """This storage on ``device`` (a copy unless already there)."""
    return _to_device(self, device)


def _new(self: Storage) -> Storage:
    """An empty storage on the same device."""
    return _new_storage(0, self.device)


def _resize_(self: Storage, size: int) -> Storage:
    if int(size) == self._nbytes:
        return self
    raise RuntimeError(
        "Trying to resize storage that is not resizable: torchplug's tensors view a storage's buffer directly, so "
        "it cannot be reallocated in place. Resize the tensor instead (Tensor.resize_) or make a new storage "
        "with torch.UntypedStorage(nbytes).")


def _is_shared(self: Storage) -> bool:
    return _shm.is_shared(self)


def _share_memory_(self: Storage) -> Storage:
    _shm.share_storage(self)  # a cpu storage moves into a shared-memory segment (see torchplug.multiprocessing)
    return self


def _pin_memory(self: Storage, device: Any = "cuda") -> Storage:
    raise RuntimeError("Cannot pin an UntypedStorage in torchplug: pin the tensor instead (Tensor.pin_memory()).")


def _repr(self: Storage) -> str:
    try:
        body = "".join(f" {b}\n" for b in _tolist(self))
    except Exception:  # noqa: BLE001 - a repr never raises: storages without byte access show only their size
        body = ""
    return f"{body}[torch.storage.UntypedStorage(device={self.device}) of size {self._nbytes}]"


# the element-type conversions (``storage.float()``): each byte becomes one element, as PyTorch's _to
CONVERSIONS: dict[str, D.dtype] = {
    "bfloat16": D.bfloat16, "bool": D.bool_, "byte": D.uint8, "char": D.int8, "complex_double": D.complex128,
    "complex_float": D.complex64, "double": D.float64, "float": D.float32, "half": D.float16, "int": D.int32,
    "long": D.int64, "short": D.int16,
}


def _conversion(dtype: D.dtype) -> Any:
    def convert(self: Storage) -> Any:
        from torchplug._ops.pyfuncs.surface_tensor import TypedStorage

        return TypedStorage(_internal=True, _flat=A._to_copy(_bytes(self), dtype=dtype))

    convert.__doc__ = f"A typed storage of {dtype} with one element per byte of this storage."
    return convert


def _device_move(device_type: str) -> Any:
    def move(self: Storage, device: Any = None, non_blocking: bool = False) -> Storage:
        target = device_type if device is None else (f"{device_type}:{device}" if isinstance(device, int) else device)
        return _to_device(self, target)

    move.__doc__ = f"This storage on the {device_type} device (a copy unless already there)."
    return move


# attached to the runtime's Storage class (every tensor's untyped_storage())
_STORAGE_METHODS: dict[str, Any] = {
    **{name: _conversion(dt) for name, dt in CONVERSIONS.items()},
    "cuda": _device_move("cuda"), "mps": _device_move("mps"),
    "tolist": _tolist, "__getitem__": _getitem, "__setitem__": _setitem, "fill_": _fill_, "copy_": _copy_,
    "clone": _clone, "cpu": _cpu, "to": _to, "new": _new, "resize_": _resize_, "is_shared": _is_shared,
    "share_memory_": _share_memory_, "pin_memory": _pin_memory, "__repr__": _repr,
}
for _name, _fn in _STORAGE_METHODS.items():
    setattr(Storage, _name, _fn)

FUNCTIONS: dict[str, Any] = {"UntypedStorage": UntypedStorage}
METHODS: dict[str, Any] = {}
