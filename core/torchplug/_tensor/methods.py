"""Tensor methods that are Python conveniences over ops: ``to``, ``cpu``, ``float()``, ``new_*``, ``contiguous``."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._runtime.device import as_device, device
from torchplug._tensor.legacy_types import type_
from torchplug._tensor.tensor import Tensor

__all__ = ["install_tensor_methods"]


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)`` and keyword forms."""
    dev, dt = kwargs.pop("device", None), kwargs.pop("dtype", None)
    for arg in args:
        if isinstance(arg, Tensor):
            dev, dt = arg.device, arg.dtype
        elif isinstance(arg, D.dtype):
            dt = arg
        elif isinstance(arg, (str, int, device)) and not isinstance(arg, bool):
            dev = arg
        elif arg in (float, int, bool, complex):
            dt = {float: D.float64, int: D.int64, bool: D.bool_, complex: D.complex128}[arg]
        else:
            raise TypeError(f"to() received an invalid combination of arguments: got {type(arg).__name__}")
    unknown = set(kwargs) - {"non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(unknown)}")
    return (None if dev is None else as_device(dev)), dt


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Convert dtype and/or move device; returns ``self`` when nothing changes (unless ``copy=True``)."""
    copy = kwargs.get("copy", False)
    non_blocking = kwargs.get("non_blocking", False)
    dev, dt = _parse_to(args, dict(kwargs))
    if dev is not None and dev.type == self._device.type and dev.index is None:
        dev = self._device
    same_dev = dev is None or dev == self._device
    same_dt = dt is None or dt is self._dtype
    if same_dev and same_dt and not copy:
        return self
    return A._to_copy(self, dtype=dt or self._dtype, device=dev or self._device, non_blocking=non_blocking)


def _caster(dtype: D.dtype) -> Any:
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        return to(self, dtype)

    cast.__name__ = dtype.name
    cast.__doc__ = f"``self.to({dtype})``"
    return cast


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self`` if already contiguous, else a contiguous copy."""
    return self if self.is_contiguous() else A.clone(self, memory_format="contiguous_format")


def _new(kind: str) -> Any:
    from torchplug._tensor import creation as C

    def new(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any) -> Tensor:
        dtype = dtype or self._dtype
        device = device if device is not None else self._device
        if kind == "tensor":
            return C.tensor(args[0], dtype=dtype, device=device, requires_grad=requires_grad)
        if kind == "full":
            return C.full(args[0], args[1], dtype=dtype, device=device, requires_grad=requires_grad)
        if not args:
            if "size" not in kw:
                raise TypeError(f'new_{kind}() missing 1 required positional arguments: "size"')
            args = (kw["size"],)
        return getattr(C, kind)(*args, dtype=dtype, device=device, requires_grad=requires_grad)

    new.__name__ = f"new_{kind}"
    return new


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """A copy in host memory (``self`` if already there)."""
    from torchplug._runtime.backends import registered_backends

    for b in registered_backends().values():
        if b.is_host:
            return to(self, b.device_type)
    from torchplug._runtime.backends import install_hint

    raise RuntimeError(f"cpu(): no host backend is installed. {install_hint('cpu')}")


def _host_root(t: Tensor) -> Any:
    """The host array behind ``t``'s storage (None for a tensor not in host memory)."""
    from torchplug._runtime.backends import backend_for

    return t._storage.data if backend_for(t._device.type).is_host else None


def _pinning_backend(device: Any) -> Any:
    from torchplug._runtime import accelerator
    from torchplug._runtime.backends import backend_for

    if device is None:
        dev = accelerator.current_accelerator(check_available=True)
        if dev is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        device = dev.type
    backend = backend_for(device if isinstance(device, str) else device.type)
    if backend.host_pinning is None:
        raise RuntimeError(f"The '{backend.device_type}' backend cannot pin host memory (it provides no host_pinning).")
    return backend


def pin_memory(self: Tensor, device: Any = None) -> Tensor:
    """A copy of this host tensor in page-locked memory of the current (or given) accelerator,
    for asynchronous ``to(device, non_blocking=True)`` copies; ``self`` if it already is."""
    if _host_root(self) is None:
        raise RuntimeError(f"cannot pin '{self._device.type}' memory: only host (cpu) tensors can be pinned")
    backend = _pinning_backend(device)
    if backend.host_pinning.is_pinned(self._storage.data):
        return self
    from torchplug._tensor.creation import from_numpy

    return from_numpy(backend.host_pinning.pin(self.detach().contiguous().numpy()))


def is_pinned(self: Tensor, device: Any = None) -> bool:
    """Whether this host tensor lives in page-locked memory of an accelerator backend."""
    from torchplug._runtime.backends import registered_backends

    root = _host_root(self)
    if root is None:
        return False
    for backend in registered_backends().values():
        if backend.host_pinning is not None and (device is None or backend.device_type == str(device).split(":")[0]):
            if backend.host_pinning.is_pinned(root):
                return True
    return False


def _record_stream(self: Tensor, stream: Any) -> None:
    """Keep this tensor's memory from reuse until work queued on ``stream`` completes."""
    from torchplug._runtime.stream_uses import record_stream

    record_stream(self, stream)


def _legacy_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.Tensor(data)`` / ``torch.Tensor(*sizes)``: the legacy constructor (default dtype, copies)."""
    from torchplug._tensor.creation import legacy_tensor_new

    return legacy_tensor_new(cls, *args, **kwargs)


def _reduce_ex(self: Tensor, protocol: int) -> Any:
    from torchplug._runtime.backends import backend_for
    from torchplug._tensor.creation import rebuild_tensor

    return (rebuild_tensor, (self.tolist() if backend_for(self._device.type).has_data else None,
                             self._dtype.name, str(self._device), tuple(self.shape), self._requires_grad))


def install_tensor_methods() -> None:
    """Give Tensor the members built on the layer's other modules: the legacy constructor, ``repr``, pickling,
    conversions and the ``new_*`` factories (the class itself knows only metadata and storage)."""
    from torchplug._tensor.printing import tensor_repr

    T = Tensor
    T.__new__ = staticmethod(_legacy_new)  # type: ignore[assignment]
    T.__repr__ = tensor_repr  # type: ignore[method-assign]
    T.__reduce_ex__ = _reduce_ex  # type: ignore[method-assign]
    T.to = to
    T.cpu = cpu
    T.pin_memory = pin_memory
    T.is_pinned = is_pinned
    T.record_stream = _record_stream
    T.contiguous = contiguous
    T.type = type_
    for name, dt in (("float", D.float32), ("double", D.float64), ("half", D.float16), ("bfloat16", D.bfloat16),
                     ("long", D.int64), ("int", D.int32), ("short", D.int16), ("char", D.int8), ("byte", D.uint8),
                     ("bool", D.bool_), ("cfloat", D.complex64), ("cdouble", D.complex128)):
        setattr(T, name, _caster(dt))
    for kind in ("tensor", "zeros", "ones", "empty", "full"):
        setattr(T, f"new_{kind}", _new(kind))
    T.type_as = lambda self, other: to(self, other.dtype)
    T.is_nonzero = lambda self: bool(self)
    T.dim_order = lambda self: tuple(sorted(range(self.dim()), key=lambda d: -self.stride()[d]))
