"""Placeholder device modules: ``torchplug.cuda``, ``torchplug.mps``, ... when no backend provides the type.

PyTorch code asks ``torch.cuda.is_available()`` before anything else, so the well-known device
modules (``torchplug._runtime.backends.WELL_KNOWN_DEVICE_TYPES`` with ``module=True``) always exist.
Without a backend, :func:`placeholder_module` answers the questions that need no device the
way a PyTorch build without that device does (``is_available()`` False, ``device_count()`` 0,
``is_bf16_supported()`` False, seeding ignored) and every other name of the generic surface
(``torchplug._runtime.device_module.SURFACE``) plus the type's ``extras`` raises ``RuntimeError``
saying which distribution provides the device and the command that installs it.

PyTorch's legacy names on these modules (``torchplug.cuda.amp``, ``torchplug.cuda.FloatTensor``) are
attached by the plugin layer (:mod:`torchplug._plugins.legacy_names`), which knows the amp plugin and the
Tensor types.  Nothing here is specific to one device: the table says which names each type has.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from torchplug._runtime.backends import missing_backend_message

__all__ = ["placeholder_module", "is_placeholder", "drop_cached", "QUIET_ANSWERS"]

# What a PyTorch build without the device answers without raising (a factory per name, so a
# caller that mutates a returned list does not change the next answer).
QUIET_ANSWERS: dict[str, Any] = {
    "is_available": lambda: False,
    "is_initialized": lambda: False,
    "device_count": lambda: 0,
    "is_bf16_supported": lambda: False,
    "is_tf32_supported": lambda: False,
    "get_arch_list": lambda: [],
    "manual_seed": lambda: None,
    "manual_seed_all": lambda: None,
    "seed": lambda: None,
    "seed_all": lambda: None,
}

_PLACEHOLDERS: dict[str, ModuleType] = {}


def is_placeholder(module: Any) -> bool:
    """True for a module made by :func:`placeholder_module`."""
    return getattr(module, "_torchplug_placeholder", False) is True


def placeholder_module(device_type: str) -> ModuleType:
    """The stand-in ``torchplug.<device_type>`` for a well-known device type without a backend."""
    found = _PLACEHOLDERS.get(device_type)
    if found is None:
        found = _PLACEHOLDERS.setdefault(device_type, _build(device_type))
    return found


def _build(device_type: str) -> ModuleType:
    from torchplug._runtime import allocator as _allocator
    from torchplug._runtime import streams as _streams
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES
    from torchplug._runtime.device_module import SURFACE

    known = WELL_KNOWN_DEVICE_TYPES[device_type]
    name = f"torchplug.{device_type}"
    mod = ModuleType(name, f"Placeholder for the {device_type!r} device module: no backend provides {device_type!r} "
                           "here, so it is never available; see missing_backend_message().")

    def raiser(fn_name: str) -> Any:
        def unavailable(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError(missing_backend_message(device_type, f"{name}.{fn_name}()"))

        unavailable.__name__ = unavailable.__qualname__ = fn_name
        unavailable.__module__ = name
        unavailable.__doc__ = f"Raises: no backend provides the {device_type!r} device type."
        return unavailable

    def quiet(fn_name: str) -> Any:
        answer = QUIET_ANSWERS[fn_name]

        def placeholder(*args: Any, **kwargs: Any) -> Any:
            return answer()

        placeholder.__name__ = placeholder.__qualname__ = fn_name
        placeholder.__module__ = name
        placeholder.__doc__ = f"What a build without the {device_type!r} device answers: {answer()!r}."
        return placeholder

    def unusable_class(cls_name: str, base: type) -> type:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError(missing_backend_message(device_type, f"{name}.{cls_name}"))

        return type(cls_name, (base,), {"__init__": __init__, "_device_type": device_type, "__module__": name,
                                        "__doc__": f"Unusable: no backend provides the {device_type!r} device type."})

    class device:  # noqa: N801 - torch's name
        """``with device(i)``: a no-op for None or a negative index, as in PyTorch; otherwise raises."""

        def __init__(self, device: Any) -> None:
            if device is not None and not (isinstance(device, int) and device < 0):
                raise RuntimeError(missing_backend_message(device_type, f"{name}.device({device!r})"))

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: Any) -> bool:
            return False

    device.__module__ = name

    def set_device(device: Any) -> None:
        """A no-op for a negative index (as in PyTorch); otherwise raises."""
        if isinstance(device, int) and not isinstance(device, bool) and device < 0:
            return
        raise RuntimeError(missing_backend_message(device_type, f"{name}.set_device()"))

    def stream(stream: Any) -> Any:
        """``with stream(None)`` is a no-op, as in PyTorch; a stream of this type cannot exist."""
        if stream is None:
            return _streams.StreamContext(None)
        raise RuntimeError(missing_backend_message(device_type, f"{name}.stream()"))

    def set_stream(stream: Any) -> None:
        if stream is not None:
            raise RuntimeError(missing_backend_message(device_type, f"{name}.set_stream()"))

    special = {
        "device": device, "set_device": set_device, "stream": stream, "set_stream": set_stream,
        "Stream": unusable_class("Stream", _streams.Stream), "Event": unusable_class("Event", _streams.Event),
        "StreamContext": _streams.StreamContext, "OutOfMemoryError": _allocator.OutOfMemoryError,
    }
    for fn_name in (*SURFACE, *known.extras):
        if fn_name in special:
            obj = special[fn_name]
        elif fn_name in QUIET_ANSWERS:
            obj = quiet(fn_name)
        else:
            obj = raiser(fn_name)
        setattr(mod, fn_name, obj)
    for fn_name, obj in special.items():  # functions defined here, attributed to the module they live in
        if callable(obj) and getattr(obj, "__module__", None) == __name__:
            obj.__module__ = name
    mod.__all__ = sorted(n for n in (*SURFACE, *known.extras) if not n.startswith("_"))
    mod.device_type = device_type
    mod._torchplug_placeholder = True
    return mod


def drop_cached(device_type: str) -> None:
    """Forget a placeholder that ``torchplug.<type>``/``sys.modules`` hold (a backend arrived)."""
    package = sys.modules.get("torchplug")
    name = f"torchplug.{device_type}"
    if package is not None and is_placeholder(package.__dict__.get(device_type)):
        del package.__dict__[device_type]
    if is_placeholder(sys.modules.get(name)):
        del sys.modules[name]
