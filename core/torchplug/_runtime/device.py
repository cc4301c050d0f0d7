"""``torchplug.device``: parsing, equality, and the default device (``set_default_device``, ``with device``)."""

from __future__ import annotations

import threading
from typing import Any

from torchplug._runtime.backends import backend_for, registered_backends

__all__ = ["device", "set_default_device", "get_default_device", "as_device"]


class device:
    """A device: a registered device type plus an optional index, e.g. ``device('cuda:1')``.

    Accepts ``'type'``, ``'type:index'``, ``(type, index)``, another device, or an int
    (an index on the current accelerator).  Usable as a context manager that sets the default
    device for factory functions inside the block.
    """

    __slots__ = ("type", "index")
    type: str
    index: int | None

    def __new__(cls, type: Any, index: int | None = None) -> device:  # noqa: A002 - torch's name
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(device, index) is ambiguous; pass a type string with an index")
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            from torchplug._runtime.accelerator_choice import current_accelerator_type

            acc = current_accelerator_type()
            if acc is None:
                raise RuntimeError(
                    f"device({type}) means index {type} of the current accelerator, but no accelerator "
                    "backend is registered. Pass a device type, e.g. device('cpu')."
                )
            type, index = acc, type
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string, int or device, but got {type.__class__.__name__}")
        cached = _PARSED.get((type, index))
        if cached is not None:
            return cached
        dev_type, dev_index = _parse(type, index)
        backend_for(dev_type)  # validates the type (and loads plugins lazily)
        self = object.__new__(cls)
        object.__setattr__(self, "type", dev_type)
        object.__setattr__(self, "index", dev_index)
        _PARSED[(type, index)] = self
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("torchplug.device objects are immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, ValueError):
                return False
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type, self.index))

    def __enter__(self) -> device:
        _state.stack = (*_state.stack, self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.stack = _state.stack[:-1]


_PARSED: dict[tuple[Any, int | None], device] = {}


def _parse(text: str, index: int | None) -> tuple[str, int | None]:
    dev_type, sep, idx_text = text.partition(":")
    if sep:
        if index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {text}")
        if not idx_text.isdigit():
            raise RuntimeError(f"Invalid device string: {text!r}. Expected 'type' or 'type:index' with index >= 0.")
        index = int(idx_text)
    if not dev_type or not dev_type.replace("_", "").isalnum():
        raise RuntimeError(f"Invalid device string: {text!r}.")
    if index is not None and index < 0:
        raise RuntimeError(f"Device index must not be negative, got {index}.")
    return dev_type, index


class _DeviceState(threading.local):
    stack: tuple[device, ...] = ()
    default: device | None = None


_state = _DeviceState()


def as_device(value: Any) -> device:
    """Convert a string/int/device to a device (used by argument converters)."""
    return value if value.__class__ is device else device(value)


def set_default_device(dev: Any) -> None:
    """Set the device factory functions use when ``device=`` is not given (None resets it)."""
    _state.default = None if dev is None else as_device(dev)


def get_default_device() -> device:
    """The device factory functions use now: the innermost ``with device(...)``, else the default."""
    if _state.stack:
        return _state.stack[-1]
    if _state.default is not None:
        return _state.default
    return _host_device()


def _host_device() -> device:
    backends = registered_backends()
    for b in backends.values():
        if b.is_host:
            return device(b.device_type)
    if backends:
        return device(next(iter(backends)))
    from torchplug._base.upcalls import ensure_backends_loaded

    ensure_backends_loaded()
    for b in registered_backends().values():
        if b.is_host:
            return device(b.device_type)
    from torchplug._runtime.backends import install_hint

    raise RuntimeError(
        f"No backend is installed, so tensors have nowhere to live. {install_hint('cpu')} "
        "Check `python -m torchplug` for plugins that failed to load."
    )
