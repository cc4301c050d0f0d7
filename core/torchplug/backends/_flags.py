"""Settable, checked module attributes for ``torchplug.backends.*`` (PyTorch's ``ContextProp``).

:func:`install` turns a module's flags into properties of its class, so ``module.flag = value``
runs a setter that checks the value; :func:`flag_context` backs the ``flags(...)`` context managers.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

__all__ = ["BoolFlag", "Flag", "install", "flag_context", "disable_global_flags", "flags_frozen"]

_frozen = False


def disable_global_flags() -> None:
    """After this, ``torchplug.backends`` flags change only inside their ``flags()`` context managers."""
    global _frozen
    _frozen = True


def flags_frozen() -> bool:
    """Whether :func:`disable_global_flags` was called."""
    return _frozen


@contextlib.contextmanager
def _unfrozen() -> Iterator[None]:
    global _frozen
    old, _frozen = _frozen, False
    try:
        yield
    finally:
        _frozen = old


class Flag:
    """A module attribute read through ``getter()`` and written through ``setter(value)``."""

    def __init__(self, getter: Callable[[], Any], setter: Callable[[Any], None]) -> None:
        self.getter = getter
        self.setter = setter

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self.getter()

    def __set__(self, obj: Any, value: Any) -> None:
        if _frozen:
            raise RuntimeError(f"not allowed to set {obj.__name__} flags after disable_global_flags; "
                               "please use flags() context manager instead")
        self.setter(value)


class BoolFlag(Flag):
    """A boolean flag held in ``store[key]``; other values raise PyTorch's RuntimeError."""

    def __init__(self, store: dict[str, Any], key: str, setter_name: str,
                 on_set: Callable[[bool], None] | None = None) -> None:
        def setter(value: Any) -> None:
            if not isinstance(value, bool):
                raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
            store[key] = value
            if on_set is not None:
                on_set(value)

        super().__init__(lambda: store[key], setter)


def install(module_name: str, **flags: Flag) -> None:
    """Make ``flags`` properties of the module ``module_name`` (its class becomes a subclass of ModuleType)."""
    module = sys.modules[module_name]
    module.__class__ = type(f"{module_name.rsplit('.', 1)[-1]}_module", (ModuleType,), dict(flags))


@contextlib.contextmanager
def flag_context(module: ModuleType, **values: Any) -> Iterator[None]:
    """Set the given flags of ``module`` (None: leave as is) inside the block, then restore them."""
    given = {k: v for k, v in values.items() if v is not None}
    with _unfrozen():
        saved = {k: getattr(module, k) for k in given}
        for k, v in given.items():
            setattr(module, k, v)
    try:
        yield
    finally:
        with _unfrozen():
            for k, v in saved.items():
                setattr(module, k, v)
