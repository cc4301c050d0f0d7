"""Placeholder device modules: ``torchplug.cuda``, ``torchplug.mps``, ... when no backend provides the type.

PyTorch code asks ``torch.cuda.is_available()`` before anything else, so the well-known device
modules (``torchplug._backends.WELL_KNOWN_DEVICE_TYPES`` with ``module=True``) always exist.
Without a backend, :func:`placeholder_module` answers the questions that need no device the
way a PyTorch build without that device does (``is_available()`` False, ``device_count()`` 0,
``is_bf16_supported()`` False, seeding ignored) and every other name of the generic surface
(``torchplug._device_module.SURFACE``) plus the type's ``extras`` raises ``RuntimeError``
saying which distribution provides the device and the command that installs it.

:func:`attach_legacy_names` gives a well-known device module, placeholder or real, PyTorch's
legacy names: ``torchplug.cuda.amp`` (the amp plugin's deprecated aliases) and
``torchplug.cuda.FloatTensor`` and the other typed constructors.  Nothing here is specific to
one device: the table says which names each type has.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

__all__ = ["placeholder_module", "is_placeholder", "missing_backend_message", "attach_legacy_names", "QUIET_ANSWERS"]

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
_LEGACY_CACHE: dict[tuple[str, str], Any] = {}


def missing_backend_message(device_type: str, what: str = "") -> str:
    """Why ``device_type`` cannot be used (blocked/failed plugin, or not installed) and how to fix it."""
    from ._backends import install_hint, missing_device_reason

    reasons = [r for hook in missing_device_reason if (r := hook(device_type))]
    if reasons:  # installed but blocked or broken: installing again would not help
        body = f"the {device_type!r} device type is not available. " + " ".join(reasons)
    else:
        body = f"no backend for the {device_type!r} device type is installed. {install_hint(device_type)}".rstrip()
    return f"{what} needs a {device_type!r} device, but {body}" if what else body[0].upper() + body[1:]


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
    from . import _allocator, _streams
    from ._backends import WELL_KNOWN_DEVICE_TYPES
    from ._device_module import SURFACE

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
    attach_legacy_names(mod, device_type)
    return mod


def attach_legacy_names(module: ModuleType, device_type: str) -> None:
    """Give a well-known device module PyTorch's legacy attributes (``amp``, ``FloatTensor``...),
    resolved on first use; other names still raise AttributeError."""
    from ._backends import WELL_KNOWN_DEVICE_TYPES

    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    if known is None or not (known.amp or known.tensor_types) or "__getattr__" in vars(module):
        return

    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):  # the import system probes __path__, __file__...
            raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
        key = (device_type, attr)
        found = _LEGACY_CACHE.get(key)
        if found is not None:
            return found
        if attr == "amp" and known.amp:
            from ._plugins.exposure import resolve

            return resolve("amp").device_amp_module(device_type)  # the amp plugin owns these aliases
        if known.tensor_types:
            from ._legacy_types import TENSOR_TYPE_NAMES, tensor_type

            if attr in TENSOR_TYPE_NAMES:
                return _LEGACY_CACHE.setdefault(key, tensor_type(attr, device_type))
        raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    if not hasattr(module, "__path__"):
        # A package path (empty) lets ``import torchplug.cuda.amp`` reach the alias finder, which
        # resolves submodules through these attributes.
        module.__path__ = []  # type: ignore[attr-defined]


def drop_cached(device_type: str) -> None:
    """Forget a placeholder that ``torchplug.<type>``/``sys.modules`` hold (a backend arrived)."""
    package = sys.modules.get("torchplug")
    name = f"torchplug.{device_type}"
    if package is not None and is_placeholder(package.__dict__.get(device_type)):
        del package.__dict__[device_type]
    if is_placeholder(sys.modules.get(name)):
        del sys.modules[name]
