"""PyTorch's legacy typed constructors (``torchplug.FloatTensor``...) and ``Tensor.type()``.

``torchplug.FloatTensor(2, 3)`` makes an uninitialised 2x3 float32 tensor, ``FloatTensor([1, 2])``
one holding the data, ``FloatTensor()`` an empty one, ``FloatTensor(t)`` an alias of a float32
tensor ``t``; ``isinstance(t, torchplug.FloatTensor)`` is True for every float32 tensor on the
host device, as in PyTorch.  The classes are not Tensor subclasses (PyTorch's are not either):
what they construct is a plain ``Tensor``.  ``torchplug.cuda.FloatTensor`` and the others come
from :func:`tensor_type` for a device type whose well-known entry has ``tensor_types``.

``Tensor.type()`` returns PyTorch's strings (``'torch.FloatTensor'``,
``'torch.cuda.LongTensor'``), since that is what scripts compare against; ``Tensor.type(x)``
accepts a dtype, a typed-constructor class, or such a string spelled ``torch.*`` or ``torchplug.*``.
"""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._tensor.tensor import Size, Tensor

__all__ = ["tensortype", "TENSOR_TYPE_NAMES", "tensor_type", "host_tensor_types", "type_", "legacy_type_name", "legacy_tensor_type_name"]

# class name -> dtype, in PyTorch's order
TENSOR_TYPE_NAMES: dict[str, D.dtype] = {
    "DoubleTensor": D.float64, "FloatTensor": D.float32, "HalfTensor": D.float16, "BFloat16Tensor": D.bfloat16,
    "ByteTensor": D.uint8, "CharTensor": D.int8, "ShortTensor": D.int16, "IntTensor": D.int32,
    "LongTensor": D.int64, "BoolTensor": D.bool_,
}
_HOST = "cpu"  # PyTorch's unqualified torch.FloatTensor is the host device's
_SIGNATURES = (
    " * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n * (object data, *, torch.device device = None)\n"
)


class tensortype(type):  # noqa: N801 - PyTorch's name for the metaclass
    """Metaclass of the typed constructors: ``isinstance`` compares dtype and device type."""

    dtype: D.dtype
    _device_type: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._dtype is cls.dtype and obj._device.type == cls._device_type

    def __subclasscheck__(cls, sub: Any) -> bool:
        return type.__subclasscheck__(cls, sub)

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        return _construct(cls, args, kwargs)

    @property
    def is_cuda(cls) -> bool:
        return cls._device_type == "cuda"

    @property
    def is_sparse(cls) -> bool:
        return False

    @property
    def layout(cls) -> Any:
        from torchplug._base.layout import strided

        return strided

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


def tensor_type(name: str, device_type: str) -> tensortype:
    """The typed constructor ``name`` (``'FloatTensor'``) of ``device_type``."""
    module = "torchplug" if device_type == _HOST else f"torchplug.{device_type}"
    return tensortype(name, (), {"dtype": TENSOR_TYPE_NAMES[name], "_device_type": device_type, "__module__": module,
                                 "__doc__": f"Legacy constructor of {TENSOR_TYPE_NAMES[name]} tensors on {device_type!r}."})


def host_tensor_types() -> dict[str, tensortype]:
    """``torchplug.FloatTensor`` and the other host typed constructors, by name."""
    return {name: tensor_type(name, _HOST) for name in TENSOR_TYPE_NAMES}


def _torch_name(cls: tensortype) -> str:
    return f"torch.{cls.__qualname__}" if cls._device_type == _HOST else f"torch.{cls._device_type}.{cls.__qualname__}"


def _typename(obj: Any) -> str:
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _invalid_combination(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n{_SIGNATURES}")


def _construct(cls: tensortype, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:
    from torchplug._tensor import creation as C
    from torchplug._runtime.backends import registered_backends
    from torchplug._runtime.device import device as _device

    if set(kwargs) - {"device"}:
        raise _invalid_combination(args, kwargs)
    if cls._device_type not in registered_backends():
        from torchplug._base.upcalls import ensure_backends_loaded

        ensure_backends_loaded()
        if cls._device_type not in registered_backends():
            from torchplug._runtime.backends import missing_backend_message

            raise TypeError(f"type {_torch_name(cls)} not available. " + missing_backend_message(cls._device_type))
    dev = kwargs.get("device")
    if dev is None:
        dev = _device(cls._device_type)
    else:
        dev = _device(dev)
        if dev.type != cls._device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} but device type: "
                               f"{dev.type} was passed")
    dtype = cls.dtype
    if not args:
        return C.empty(0, dtype=dtype, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first._dtype is not dtype or first._device.type != dev.type:
            raise TypeError(f"expected {_torch_name(cls)} (dtype={dtype}, device={dev.type}) "
                            f"(got a tensor with dtype={first._dtype}, device={first._device})")
        from torchplug._dispatch.aten import A

        return A.alias(first)
    if len(args) == 1 and isinstance(first, Size):
        return C.empty(tuple(first), dtype=dtype, device=dev)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return C.empty(args, dtype=dtype, device=dev)
    if len(args) == 1:
        if isinstance(first, str):
            raise TypeError(f"new(): invalid data type '{type(first).__name__}'")
        if not hasattr(first, "__len__") or getattr(first, "ndim", 1) == 0:  # numbers, NumPy scalars, 0-d arrays
            raise TypeError(f"new(): data must be a sequence (got {_typename(first)})")
        return C.tensor(first, dtype=dtype, device=dev)
    if isinstance(first, int) and not isinstance(first, bool):
        bad = next(a for a in args if not (isinstance(a, int) and not isinstance(a, bool)))
        pos = args.index(bad) + 1
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                        f"\"type must be tuple of ints,but got {type(bad).__name__}\"")
    raise _invalid_combination(args, kwargs)


# ---- Tensor.type() -------------------------------------------------------------------------------------------
def _scalar_name(dtype: D.dtype) -> str:
    from torchplug._base.dtype import scalar_type_name

    return scalar_type_name(dtype)


def legacy_type_name(t: Tensor) -> str:
    """PyTorch's ``Tensor.type()`` string: ``torch.FloatTensor``, ``torch.cuda.LongTensor``."""
    where = "" if t._device.type == _HOST else f"{t._device.type}."
    return f"torch.{where}{_scalar_name(t._dtype)}Tensor"


def legacy_tensor_type_name(t: Tensor) -> str:
    """PyTorch's legacy type string used in some messages: ``torchplug.FloatTensor``, ``torchplug.meta.LongTensor``."""
    dev = "" if t.device.type == "cpu" else f"{t.device.type}."
    return f"torchplug.{dev}{_scalar_name(t.dtype)}Tensor"


def _parse_type_string(text: str) -> tuple[str | None, D.dtype]:
    """``'torch.cuda.FloatTensor'`` (or ``torchplug.``) -> ('cuda', float32); ValueError otherwise."""
    parts = text.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "torchplug") and parts[-1].endswith("Tensor"):
        scalar = parts[-1][: -len("Tensor")]
        for dtype in (*D.ALL_DTYPES, *D.FLOAT8_DTYPES):
            if _scalar_name(dtype) == scalar:
                return (parts[1] if len(parts) == 3 else _HOST), dtype
    raise ValueError(f"invalid type: {text!r}")


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """Without arguments, PyTorch's type string (``'torch.FloatTensor'``); with a dtype, a typed
    constructor class or a type string, the tensor converted to it (``self`` when it already is)."""
    if dtype is None:
        return legacy_type_name(self)
    if isinstance(dtype, D.dtype):
        return self.to(dtype, non_blocking=non_blocking)
    if isinstance(dtype, tensortype):
        device_type, target = dtype._device_type, dtype.dtype
    elif dtype is Tensor:
        device_type, target = _HOST, D.get_default_dtype()
    elif isinstance(dtype, str):
        device_type, target = _parse_type_string(dtype)
    else:
        raise ValueError(f"invalid type: {getattr(dtype, '__name__', type(dtype).__name__)!r}")
    if device_type == self._device.type:
        return self.to(target, non_blocking=non_blocking)
    return self.to(device_type, target, non_blocking=non_blocking)
