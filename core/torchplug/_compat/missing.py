"""AttributeErrors that say a PyTorch name is not supported yet, for modules and for Tensor.

Only failed lookups reach this code: a module's ``__getattr__`` runs when normal lookup fails,
and Tensor's placeholders exist only for names torchplug lacks, so supported names pay nothing.
Tensor gets class-level placeholders rather than a ``__getattr__`` because a class with
``__getattr__`` makes every attribute load on its instances take CPython's slow path; they
are left out of ``dir(tensor)`` (``dir(torchplug.Tensor)``, the class's own listing, shows them).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Callable

from torchplug._compat.reference import MODULES, has_name, torch_version, torchplug_name

__all__ = ["unsupported_error", "missing_attribute", "fallback_getattr", "attach", "attach_loaded",
           "attach_device_module", "Unsupported", "install_tensor_placeholders", "is_unsupported"]

COMPAT_COMMAND = "python -m torchplug --compat"


def unsupported_error(torch_module: str, name: str) -> AttributeError:
    """The error for ``torchplug.<module>.<name>`` that PyTorch has and torchplug does not provide."""
    version = torch_version().split("+")[0]
    return AttributeError(
        f"{torchplug_name(torch_module)}.{name} is not supported yet: PyTorch {version} has "
        f"{torch_module}.{name}, torchplug does not provide it. docs/compat.md lists what torchplug supports, "
        f"and `{COMPAT_COMMAND} --module {torch_module}` prints the names still missing there."
    )


def missing_attribute(torch_module: str, name: str, module_name: str) -> AttributeError:
    """``unsupported_error`` for a name PyTorch has, else Python's own message for a missing attribute."""
    if has_name(torch_module, name):
        return unsupported_error(torch_module, name)
    return AttributeError(f"module {module_name!r} has no attribute {name!r}")


def _is_default_message(exc: AttributeError, name: str) -> bool:
    """Whether ``exc`` is the plain "has no attribute" answer (not an explanation worth keeping)."""
    text = str(exc)
    return text.startswith("module ") and text.endswith(f"has no attribute {name!r}") or text == name


def fallback_getattr(torch_module: str, module_name: str,
                     previous: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``torchplug``'s counterpart of ``torch_module``.

    ``previous`` (the module's own ``__getattr__``: lazy names, plugin exposure) answers first;
    only its plain "has no attribute" failure becomes the not-supported-yet message.
    """

    def __getattr__(name: str) -> Any:
        if previous is not None:
            try:
                return previous(name)
            except AttributeError as exc:
                if not _is_default_message(exc, name):
                    raise
        if name.startswith("__"):  # the import system probes __path__, __file__...: no file read
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise missing_attribute(torch_module, name, module_name)

    __getattr__._torchplug_compat = torch_module  # type: ignore[attr-defined]
    return __getattr__


def attach(module: ModuleType, torch_module: str) -> None:
    """Give ``module`` the not-supported-yet ``__getattr__`` (keeping the one it has); idempotent."""
    previous = vars(module).get("__getattr__")
    if getattr(previous, "_torchplug_compat", None) is not None:
        return
    module.__getattr__ = fallback_getattr(torch_module, module.__name__, previous)  # type: ignore[method-assign]


def attach_device_module(module: ModuleType, device_type: str) -> ModuleType:
    """``torchplug.<device type>`` (a backend's device module or the placeholder), attached when
    PyTorch has ``torch.<device type>`` in the reference; returns ``module``."""
    if f"torch.{device_type}" in MODULES:
        attach(module, f"torch.{device_type}")
    return module


def _loaded(torch_module: str, exposed: Mapping[str, Any]) -> ModuleType | None:
    """torchplug's module for ``torch_module`` if it is already imported or in ``exposed`` (imports nothing)."""
    current: Any = sys.modules.get("torchplug")
    path = "torchplug"
    for part in torch_module.split(".")[1:]:
        found = vars(current).get(part) if current is not None else None
        if found is None and path == "torchplug":
            found = exposed.get(part)
        path = f"{path}.{part}"
        if found is None:
            found = sys.modules.get(path)
        if not isinstance(found, ModuleType):
            return None
        current = found
    return current


def attach_loaded(exposed: Mapping[str, Any] | None = None) -> None:
    """Attach to every reference module's torchplug counterpart that is loaded now.

    Called after a plugin exposes a module and after torchplug imports a core submodule, so
    ``torchplug.nn.functional.missing`` explains itself however the module arrived.  ``exposed``: what
    plugins expose as ``torchplug.<name>`` (name -> object), passed by the plugin layer."""
    for torch_module in MODULES:
        if torch_module in ("torch", "torch.Tensor"):
            continue  # torchplug itself: its __getattr__ (and exposure.resolve) asks directly
        module = _loaded(torch_module, exposed or {})
        if module is not None:
            attach(module, torch_module)


class Unsupported:
    """Placeholder on ``torchplug.Tensor`` for a PyTorch Tensor attribute torchplug lacks.

    Any access raises the not-supported-yet AttributeError, so ``hasattr`` is False and a later
    real definition (``setattr(Tensor, name, ...)``) simply replaces it.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        raise unsupported_error("torch.Tensor", self.name)

    def __repr__(self) -> str:
        return f"<unsupported torchplug.Tensor.{self.name}>"


def is_unsupported(obj: Any) -> bool:
    """Whether ``obj`` (e.g. from ``inspect.getattr_static``) is a not-supported-yet placeholder."""
    return isinstance(obj, Unsupported)


def install_tensor_placeholders(tensor_cls: type, torch_names: Any) -> list[str]:
    """Put an :class:`Unsupported` on ``tensor_cls`` for each name it lacks; returns those names."""
    added = []
    for name in torch_names:
        if not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, Unsupported(name))
            added.append(name)
    if added and "__dir__" not in vars(tensor_cls):
        def __dir__(self: Any) -> list[str]:
            """The attributes that work: placeholders of unsupported names are left out."""
            return [n for n in object.__dir__(self) if not isinstance(vars(tensor_cls).get(n), Unsupported)]

        tensor_cls.__dir__ = __dir__  # type: ignore[method-assign]
    return added
