"""The save side: pickling objects the way ``torch.save`` does, with every global torch-spelled.

Tensors become ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
OrderedDict())`` whose storage is a persistent id ``('storage', torch.<Type>Storage, key, location,
numel)``; tensors viewing one torchplug storage share one record (tied weights stay tied).  Only
names in PyTorch's weights-only allow-list are written for tensors, parameters, dtypes, devices,
sizes and layouts, so ``torch.load(..., weights_only=True)`` and ``torchplug.load`` read the file.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

import torchplug
from torchplug._base.layout import layout as _layout_type
from torchplug._tensor.tensor import Size, Tensor

from ._checkpoint_globals import storage_type_for

__all__ = ["CheckpointPickler", "StorageRecord"]


class _Global:
    """Pickles as ``GLOBAL module name`` without importing the module (torch need not be installed)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


class _Reduce:
    """Pickles as ``func(*args)`` with ``func`` written as a plain GLOBAL."""

    __slots__ = ("func", "args")

    def __init__(self, func: _Global, args: tuple) -> None:
        self.func, self.args = func, args


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_META = _Global("torch._utils", "_rebuild_meta_tensor_no_storage")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAM_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")
_TORCH_TENSOR = _Global("torch", "Tensor")
_ORDERED_DICT = _Global("collections", "OrderedDict")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")


class StorageRecord:
    """One ``data/<key>`` record to write: a storage's bytes and how the pickle refers to it."""

    __slots__ = ("key", "dtype", "location", "numel", "source")

    def __init__(self, key: str, dtype: Any, location: str, numel: int, source: Any) -> None:
        self.key, self.dtype, self.location, self.numel = key, dtype, location, numel
        self.source = source  # () -> bytes of exactly numel * itemsize

    def data(self) -> bytes:
        """The record's bytes (read from the storage only when the archive is written)."""
        return self.source()


def _root_span(root: np.ndarray) -> tuple[int, int] | None:
    """(address, byte extent) of the memory an ndarray spans, or None for negative strides."""
    if any(s < 0 for s in root.strides):
        return None
    addr = root.__array_interface__["data"][0]
    if root.size == 0:
        return addr, 0
    extent = root.itemsize + sum((n - 1) * s for n, s in zip(root.shape, root.strides))
    return addr, extent


def _bytes_at(addr: int, nbytes: int, keep: Any) -> bytes:
    """``nbytes`` of host memory from ``addr`` (inside ``keep``'s buffer, which stays referenced)."""
    if nbytes == 0:
        return b""

    class _Span:  # an __array_interface__ over exactly the record's bytes
        __array_interface__ = {"data": (addr, True), "shape": (nbytes,), "typestr": "|u1", "version": 3}

    span = _Span()
    span.keep = keep  # type: ignore[attr-defined]
    return np.asarray(span).tobytes()


def _location(t: Tensor) -> str:
    dev = t.device
    return "cpu" if dev.type == "cpu" else str(dev)


class CheckpointPickler(pickle._Pickler):  # type: ignore[misc, name-defined]
    """Pure-Python pickler: torchplug objects become torch's reduce forms, storages persistent ids."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: Any, protocol: int) -> None:
        super().__init__(file, protocol)
        self.records: list[StorageRecord] = []
        # id(Storage) -> (record, the storage (kept alive so its id stays unique), host base address or None)
        self._by_storage: dict[int, tuple[StorageRecord, Any, int | None]] = {}

    # -- torch-spelled globals and reduces ---------------------------------------------------------
    def _save_global_ref(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_ref

    def _save_reduce_ref(self, obj: _Reduce) -> None:
        self.save(obj.func)
        self.save(obj.args)
        self.write(pickle.REDUCE)

    dispatch[_Reduce] = _save_reduce_ref

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, StorageRecord):
            return ("storage", _Global("torch", storage_type_for(obj.dtype)), obj.key, obj.location, obj.numel)
        return None

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, Tensor):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return None
            super().save(self._tensor_reduce(obj), save_persistent_id)
            self.memoize(obj)
            return None
        if isinstance(obj, Size):
            return super().save(_Reduce(_TORCH_SIZE, (tuple(int(s) for s in obj),)), save_persistent_id)
        if isinstance(obj, torchplug.dtype):
            return super().save(_Global("torch", obj.name), save_persistent_id)
        if isinstance(obj, torchplug.device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return super().save(_Reduce(_TORCH_DEVICE, args), save_persistent_id)
        if isinstance(obj, _layout_type):
            return super().save(_Reduce(_GET_LAYOUT, (f"torch.{str.__str__(obj)}",)), save_persistent_id)
        return super().save(obj, save_persistent_id)

    # -- tensors -------------------------------------------------------------------------------------
    def _tensor_reduce(self, t: Tensor) -> _Reduce:
        from .nn.parameter import Parameter

        is_param = isinstance(t, Parameter)
        requires_grad = bool(t.requires_grad) and not is_param  # a parameter's flag goes on the Parameter
        size, stride = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
        if t.is_meta:
            # No data to save; torch writes meta tensors the same way (storage sharing is not kept).
            rebuilt = _Reduce(_REBUILD_META, (t.dtype, size, stride, requires_grad))
        else:
            record, offset, stride = self._record_for(t, stride)
            args = (record, offset, size, stride, requires_grad, _Reduce(_ORDERED_DICT, ()))
            # a lazily conjugated/negated view saves its storage as is and the bit, as torch's metadata
            bits = {name: True for name, on in (("conj", t.is_conj()), ("neg", t.is_neg())) if on}
            rebuilt = _Reduce(_REBUILD_V2, args + (bits,) if bits else args)
        state = dict(t.__dict__)
        if is_param:
            if state:
                return _Reduce(_REBUILD_PARAM_STATE, (rebuilt, bool(t.requires_grad), _Reduce(_ORDERED_DICT, ()), state))
            return _Reduce(_REBUILD_PARAM, (rebuilt, bool(t.requires_grad), _Reduce(_ORDERED_DICT, ())))
        if not state and type(t) is Tensor:
            return rebuilt
        cls = _TORCH_TENSOR if type(t) is Tensor else _Global(type(t).__module__, type(t).__qualname__)
        return _Reduce(_REBUILD_FROM_TYPE, (_REBUILD_V2, cls, rebuilt.args, state))

    def _record_for(self, t: Tensor, stride: tuple[int, ...]) -> tuple[StorageRecord, int, tuple[int, ...]]:
        """The record holding ``t``'s storage (one per torchplug storage), t's offset and strides in it."""
        if any(s < 0 for s in stride):
            return self._private_record(t)  # torch has no negative strides: save the values alone
        storage = t.untyped_storage()
        entry = self._by_storage.get(id(storage))
        if entry is not None:
            record = entry[0]
            if record.dtype is not t.dtype:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
            return record, self._offset(t, entry[2]), stride
        root = getattr(storage, "data", None)
        span = _root_span(root) if isinstance(root, np.ndarray) and t.is_cpu else None
        itemsize = t.element_size()
        key = str(len(self.records))
        if span is not None:
            addr, extent = span
            numel = extent // itemsize
            record = StorageRecord(key, t.dtype, _location(t), numel,
                                   lambda a=addr, n=numel * itemsize, k=root: _bytes_at(a, n, k))
            self._by_storage[id(storage)] = (record, storage, addr)
            self.records.append(record)
            return record, self._offset(t, addr), stride
        if t.is_cpu:
            return self._private_record(t)  # a host buffer laid out backwards (negative strides)
        # Device storage: copy the whole storage to the host once, when the archive is written.
        numel = storage.nbytes // itemsize
        whole = t.detach().as_strided((numel,), (1,), 0)
        record = StorageRecord(key, t.dtype, _location(t), numel, lambda w=whole: _host_bytes(w.cpu()))
        self._by_storage[id(storage)] = (record, storage, None)
        self.records.append(record)
        return record, t.storage_offset(), stride

    def _private_record(self, t: Tensor) -> tuple[StorageRecord, int, tuple[int, ...]]:
        """A record of ``t``'s values alone, contiguous (sharing with other tensors cannot be kept)."""
        flat = t.detach().contiguous().reshape(-1)
        record = StorageRecord(str(len(self.records)), t.dtype, _location(t), flat.numel(), lambda f=flat: _host_bytes(f))
        self.records.append(record)
        return record, 0, _contiguous_strides(tuple(int(s) for s in t.shape))

    @staticmethod
    def _offset(t: Tensor, base_addr: int | None) -> int:
        if base_addr is None:
            return t.storage_offset()
        # In elements from the start of the memory the record holds (the storage's root array may
        # itself be a strided view, so its first address, not storage_offset(), is the origin).
        return (t._data.__array_interface__["data"][0] - base_addr) // t.element_size()


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _host_bytes(t: Tensor) -> bytes:
    # Native byte order, like the host path; the archive's byteorder record names it.
    return np.ascontiguousarray(t.detach().numpy()).tobytes()
