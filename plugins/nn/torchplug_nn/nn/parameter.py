"""``nn.Parameter`` and ``nn.Buffer``: tensors that register themselves when assigned to a Module."""

from __future__ import annotations

from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor, autograd_hooks

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin",
           "is_lazy"]


def _share(cls: type, data: Tensor) -> Any:
    """A new ``cls`` instance sharing ``data``'s storage and version counter (no history)."""
    from torchplug._dispatch.keys import AUTOGRAD_BAND

    t = object.__new__(cls)
    t._data = data._data
    t._dtype = data._dtype
    t._device = data._device
    t._keyset = data._keyset & ~AUTOGRAD_BAND
    t._storage = data._storage
    t._base = None
    t._requires_grad = False
    t._grad = None
    t._grad_fn = None
    t._autograd_meta = None
    return t


def _set_requires_grad(t: Tensor, flag: bool) -> None:
    if autograd_hooks.set_requires_grad is not None or (flag and autograd_hooks.load()):  # (loaded on first use)
        autograd_hooks.set_requires_grad(t, flag)
    else:
        # Without the autograd plugin the flag is still recorded (as PyTorch reports it), but no
        # graph is ever built.
        t._requires_grad = flag


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = torchplug.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        p = _share(cls, data)
        if requires_grad:
            _set_requires_grad(p, True)
        return p

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    # Without the autograd plugin the flag is still tracked on parameters (see _set_requires_grad).
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        _set_requires_grad(self, bool(flag))

    def requires_grad_(self, requires_grad: bool = True) -> Parameter:
        _set_requires_grad(self, bool(requires_grad))
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol: int) -> Any:
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:
        if data is None:
            data = torchplug.empty(0)
        t = _share(Tensor, data)
        t._is_buffer = True
        t.persistent = persistent
        return t


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (lazy modules): it holds no data until
    :meth:`materialize`, which turns it into ``cls_to_become`` in place."""

    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor uninitialized storage of ``shape`` and make it a plain ``cls_to_become``."""
        from torchplug._dispatch.keys import AUTOGRAD_BAND

        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        flag = self._requires_grad
        new = torchplug.empty(shape, device=device, dtype=dtype)
        self._data, self._dtype, self._device, self._storage = new._data, new._dtype, new._device, new._storage
        self._keyset = new._keyset & ~AUTOGRAD_BAND
        self._requires_grad = False
        self.__class__ = self.cls_to_become
        if flag:
            _set_requires_grad(self, True)

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto: int) -> Any:
        return (self.__class__, (self.requires_grad,))


def _converter(name: str) -> Any:
    # the conversions PyTorch allows before materialization: they act on the empty placeholder data, so a
    # lazy module's .to()/.double()/.cuda() decides the dtype and device the parameters materialize with
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        placeholder = _share(Tensor, self)
        converted = getattr(Tensor, name)(placeholder, *args, **kwargs)
        if converted is placeholder:
            return self
        # still uninitialized, as PyTorch's (its __torch_function__ keeps the subclass)
        result = _share(type(self), converted)
        result.__dict__.update(self.__dict__)
        if self._requires_grad:
            _set_requires_grad(result, True)
        return result

    method.__name__ = name
    method.__doc__ = f"``Tensor.{name}`` of the empty placeholder; the result is still uninitialized."
    return method


for _name in ("to", "cpu", "cuda", "half", "float", "double", "bfloat16", "char", "short", "int", "long"):
    setattr(UninitializedTensorMixin, _name, _converter(_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of a lazy module before its first forward; it becomes a ``Parameter`` (the same
    object, so optimizers built before the first forward update it)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> UninitializedParameter:
        p = _share(cls, torchplug.empty(0, device=device, dtype=dtype))
        if requires_grad:
            _set_requires_grad(p, True)
        return p

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self._device, self._dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first forward; it becomes a plain ``Tensor``."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        t = _share(cls, torchplug.empty(0, device=device, dtype=dtype))
        if requires_grad:
            _set_requires_grad(t, True)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)
