"""Storages and legacy Tensor methods of the script surface: ``TypedStorage``/``UntypedStorage`` and the
``FloatStorage``-style classes, ``is_storage``, ``Tensor.storage``/``storage_type``/``share_memory_``/
``is_shared``/``is_set_to``, ``new``, ``sum_to_size``, ``chalf`` (refused), ``apply_``/``map_``/``map2_``,
``resize``/``resize_as`` and ``new_empty_strided``."""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._tensor import shared_memory as _shm
from torchplug._tensor.tensor import Storage, Tensor
from torchplug._ops.pyfuncs.storage import CONVERSIONS as STORAGE_CONVERSIONS
from torchplug._ops.torch_namespace import TORCH

__all__ = ["FUNCTIONS", "METHODS", "TypedStorage"]


def _torch() -> Any:
    return TORCH


# ---- storages -------------------------------------------------------------------------------------------------


class TypedStorage:
    """Deprecated typed view of a tensor's :class:`UntypedStorage` (what ``tensor.storage()`` returns)."""

    is_sparse = False
    dtype: D.dtype

    def __init__(self, *args: Any, wrap_storage: Any = None, dtype: Any = None, device: Any = None,
                 _internal: bool = False, _flat: Tensor | None = None) -> None:
        torch = _torch()
        if not _internal:
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                          "only storage class. This should only matter to you if you are using storages directly.  To "
                          "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                          UserWarning, stacklevel=2)
        if _flat is None:
            dtype = getattr(type(self), "_fixed_dtype", None) or dtype or D.get_default_dtype()
            if args and isinstance(args[0], int):
                _flat = torch.empty(args[0], dtype=dtype, device=device)
            elif args:
                _flat = torch.tensor(list(args[0]), dtype=dtype, device=device)
            else:
                _flat = torch.empty(0, dtype=dtype, device=device)
        self._flat = _flat
        self.dtype = _flat.dtype

    @property
    def device(self) -> Any:
        return self._flat.device

    @property
    def _untyped_storage(self) -> Storage:
        return self._flat.untyped_storage()

    def untyped(self) -> Storage:
        """The untyped storage underneath."""
        return self._flat.untyped_storage()

    def size(self) -> int:
        """The number of elements."""
        return self._flat.numel()

    def __len__(self) -> int:
        return self._flat.numel()

    def __getitem__(self, index: Any) -> Any:
        value = self._flat[index]
        return value.item() if value.dim() == 0 else value.tolist()

    def __setitem__(self, index: Any, value: Any) -> None:
        self._flat[index] = value

    def __iter__(self) -> Any:
        return iter(self.tolist())

    def tolist(self) -> list:
        """The elements as a Python list."""
        return self._flat.tolist()

    def element_size(self) -> int:
        return self._flat.element_size()

    def nbytes(self) -> int:
        return self._flat.numel() * self._flat.element_size()

    def data_ptr(self) -> int:
        return self._flat.data_ptr()

    def is_shared(self) -> bool:
        return _shm.is_shared(self._flat.untyped_storage())

    def share_memory_(self) -> TypedStorage:
        _shm.share_storage(self._flat)
        return self

    # -- copies and conversions (the untyped storage's rules, per element) -------------------------------
    def clone(self) -> TypedStorage:
        """A copy of the elements in a new storage."""
        return TypedStorage(_internal=True, _flat=self._flat.clone())

    def copy_(self, source: Any, non_blocking: bool = False) -> TypedStorage:
        """Copy ``source``'s elements (a typed storage of the same size) into this one."""
        src = source._flat if isinstance(source, TypedStorage) else source
        self._flat.copy_(src, non_blocking)
        return self

    def fill_(self, value: Any) -> TypedStorage:
        """Set every element to ``value``."""
        self._flat.fill_(value)
        return self

    def to(self, *, device: Any, non_blocking: bool = False) -> TypedStorage:
        """This storage on ``device`` (a copy unless already there)."""
        moved = self._flat.to(device, non_blocking=non_blocking)
        return self if moved is self._flat else TypedStorage(_internal=True, _flat=moved)

    def cpu(self) -> TypedStorage:
        """This storage on the cpu (a copy unless already there)."""
        return self.to(device="cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False) -> TypedStorage:
        return self.to(device="cuda" if device is None else device, non_blocking=non_blocking)

    def get_device(self) -> Any:
        return self._untyped_storage.get_device()

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def is_pinned(self, device: Any = "cuda") -> bool:
        return False

    def pin_memory(self, device: Any = "cuda") -> TypedStorage:
        raise RuntimeError("Cannot pin a TypedStorage in torchplug: pin the tensor instead (Tensor.pin_memory()).")

    def resizable(self) -> bool:
        return False

    def resize_(self, size: int) -> TypedStorage:
        self._untyped_storage.resize_(int(size) * self.element_size())
        return self

    @property
    def filename(self) -> None:
        return None

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """The legacy type name (``'torch.FloatStorage'``), or a copy converted to that storage type."""
        if dtype is None:
            return _storage_type_name(self.dtype, self.device.type)
        target = getattr(dtype, "_fixed_dtype", None) or dtype
        return TypedStorage(_internal=True, _flat=self._flat.to(target))

    def pickle_storage_type(self) -> str:
        """The storage type name torch.save records (``'FloatStorage'``)."""
        return _storage_type_name(self.dtype, "cpu").removeprefix("torch.")

    def _new_wrapped_storage(self, untyped: Storage) -> TypedStorage:
        raise NotImplementedError("TypedStorage._new_wrapped_storage is not supported in torchplug")

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[{_storage_type_name(self.dtype, self.device.type)} of size {len(self)}]"


def _typed_conversion(dtype: D.dtype) -> Any:
    def convert(self: TypedStorage) -> TypedStorage:
        return TypedStorage(_internal=True, _flat=self._flat.to(dtype))

    convert.__doc__ = f"A copy of the elements converted to {dtype}."
    return convert


for _conv_name, _conv_dtype in STORAGE_CONVERSIONS.items():
    setattr(TypedStorage, _conv_name, _typed_conversion(_conv_dtype))


def _storage_type_name(dtype: D.dtype, device_type: str) -> str:
    from torchplug._ops.composites import scalar_type_name

    prefix = "torch." if device_type == "cpu" else f"torch.{device_type}."
    return f"{prefix}{scalar_type_name(dtype)}Storage"


def _typed_storage_class(dtype: D.dtype) -> type:
    from torchplug._ops.composites import scalar_type_name

    name = f"{scalar_type_name(dtype)}Storage"
    cls = _STORAGE_CLASSES.get(name)
    if cls is None:
        cls = _STORAGE_CLASSES[name] = type(name, (TypedStorage,), {
            "_fixed_dtype": dtype, "__module__": "torchplug",
            "__doc__": f"Legacy typed storage of {dtype} elements (deprecated in PyTorch)."})
    return cls


_STORAGE_CLASSES: dict[str, type] = {}
for _dt in (D.float64, D.float32, D.float16, D.bfloat16, D.uint8, D.int8, D.int16, D.int32, D.int64, D.bool_,
            D.complex64, D.complex128):
    _typed_storage_class(_dt)


def _storage(self: Tensor) -> TypedStorage:
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                  "storage class. This should only matter to you if you are using storages directly.  To access "
                  "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    nelem = self.untyped_storage().nbytes // self.element_size()
    flat = A.as_strided(self, [nelem], [1], 0)
    return TypedStorage(_internal=True, _flat=flat)  # PyTorch's tensor.storage() is a TypedStorage, not FloatStorage


def _storage_type(self: Tensor) -> type:
    return _typed_storage_class(self.dtype)


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (untyped or typed)."""
    return isinstance(obj, (Storage, TypedStorage))


# ---- Tensor-only helpers ----------------------------------------------------------------------------------------
def _is_shared(self: Tensor) -> bool:
    return _shm.is_shared(self.untyped_storage())


def _share_memory_(self: Tensor) -> Tensor:
    # a cpu storage moves into a shared-memory segment that torchplug.multiprocessing sends by name
    _shm.share_storage(self)
    return self


def _is_set_to(self: Tensor, tensor: Tensor) -> bool:
    return (self.untyped_storage() is tensor.untyped_storage() and self.storage_offset() == tensor.storage_offset()
            and self.shape == tensor.shape and self.stride() == tensor.stride())


def _new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Legacy constructor with ``self``'s dtype and device: ``new(2, 3)`` (uninitialized), ``new([1, 2])``,
    ``new()`` (empty), ``new(other)`` (an alias of a tensor of the same type)."""
    from torchplug._tensor.legacy_types import _construct, tensortype

    cls = tensortype(f"{self.dtype}", (), {"dtype": self.dtype, "_device_type": self.device.type})
    kwargs.setdefault("device", self.device)
    return _construct(cls, args, kwargs)


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Sum ``self`` down to ``size`` (which ``self`` must be expandable from)."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = tuple(size[0])
    target = tuple(size)
    shape = tuple(self.shape)
    lead = len(shape) - len(target)
    ok = lead >= 0 and all(t == s or t == 1 for t, s in zip(target, shape[lead:]))
    if not ok:
        raise RuntimeError(f"size {{{', '.join(map(str, target))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    result = self
    if lead:
        result = result.sum(list(builtins.range(lead)))
    dims = [i for i, (t, s) in enumerate(zip(target, shape[lead:])) if t == 1 and s != 1]
    if dims:
        result = result.sum(dims, keepdim=True)
    return result


def _chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    raise TypeError("Tensor.chalf(): complex32 (torch.chalf) is not supported in torchplug; use "
                    "Tensor.cfloat() (complex64) instead")


def _host_only(name: str, self: Tensor) -> None:
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:
    """Replace each element ``x`` by ``callable(x)`` in place (cpu tensors only; slow, as in PyTorch)."""
    _host_only("apply_", self)
    values = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(_torch().tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])`` in place (``tensor`` broadcast to ``self``; cpu only)."""
    _host_only("map_", self)
    other = tensor.expand_as(self).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(_torch().tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:
    """``self[i] = callable(self[i], x[i], y[i])`` in place (cpu only)."""
    _host_only("map2_", self)
    xs = x.expand_as(self).reshape(-1).tolist()
    ys = y.expand_as(self).reshape(-1).tolist()
    values = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)]
    self.copy_(_torch().tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def _resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated non-in-place resize: a reshaped copy; the element count must stay the same."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    numel = 1
    for s in sizes:
        numel *= s
    if numel != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while preserving the "
                           "number of elements. ")
    return self.contiguous().view(sizes).clone() if self.requires_grad is False else self.reshape(sizes)


def _resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _resize(self, *tensor.shape)


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                       device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    result = _torch().empty_strided(size, stride, dtype=dtype or self.dtype,
                                    device=self.device if device is None else device)
    return result.requires_grad_(requires_grad) if requires_grad else result


def _false(self: Tensor) -> bool:
    return False


FUNCTIONS: dict[str, Any] = {
    "is_storage": is_storage, "TypedStorage": TypedStorage,
    "Storage": _STORAGE_CLASSES["FloatStorage"], **_STORAGE_CLASSES,
}

METHODS: dict[str, Any] = {
    "is_sparse": property(_false), "is_quantized": property(_false), "is_nested": property(_false),
    "is_mkldnn": property(_false), "is_sparse_csr": property(_false),
    **{f"is_{device}": property(_false) for device in ("xla", "ipu", "maia", "mtia", "vulkan")},
    "is_distributed": _false,
    "is_shared": _is_shared, "share_memory_": _share_memory_, "is_set_to": _is_set_to,
    "storage": _storage, "storage_type": _storage_type, "new": _new, "sum_to_size": _sum_to_size, "chalf": _chalf,
    "apply_": _apply_, "map_": _map_, "map2_": _map2_, "resize": _resize, "resize_as": _resize_as,
    "const_data_ptr": lambda self: self.data_ptr(), "new_empty_strided": _new_empty_strided,
}
