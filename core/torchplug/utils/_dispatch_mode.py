"""Observe every op below autograd: a minimal ``TorchDispatchMode`` for the checkpoint utilities.

A mode is a context manager with ``__torch_dispatch__(func, types, args, kwargs)``.  While one is
entered, the dispatcher's ``Python`` key is in this thread's TLS include set, and a boxed fallback
registered at that key (once, on first use) hands each op reaching it, after autograd and
ADInplaceOrView, to the innermost mode, with its arguments split as the op's Python signature
takes them.  The mode runs with itself popped, as PyTorch's do: calling ``func(*args, **kwargs)``
inside ``__torch_dispatch__`` goes to the next mode or, with none left, to the backend.  Ops that
autograd records see the mode with the autograd keys already excluded, so calling ``func`` there
records nothing a second time.  Without an entered mode the key is not in any key set, so other
calls pay nothing.
"""

from __future__ import annotations

import threading
from typing import Any

from torchplug._dispatch.codegen import python_name
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.keys import PYTHON_BIT
from torchplug._dispatch.tls import tls

__all__ = ["DispatchMode"]

_PYTHON = 1 << PYTHON_BIT
_LOCAL = threading.local()
_REGISTERED: list[Any] = []
_SPECS: dict[int, tuple[int, tuple[str, ...]]] = {}


def _stack() -> list[Any]:
    stack = getattr(_LOCAL, "modes", None)
    if stack is None:
        stack = _LOCAL.modes = []
    return stack


def _set_key(on: bool) -> None:
    if on:
        tls.include |= _PYTHON
        tls.mask |= _PYTHON
    else:
        tls.include &= ~_PYTHON


def _split(op: Any, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Kernel-style arguments (all positional) as the op's Python call takes them."""
    entry = op._entry
    spec = _SPECS.get(id(entry))
    if spec is None:
        arguments = entry.schema.arguments
        spec = _SPECS[id(entry)] = (sum(1 for a in arguments if not a.kwarg_only),
                                    tuple(python_name(a.name) for a in arguments if a.kwarg_only))
    npos, names = spec
    return tuple(args[:npos]), dict(zip(names, args[npos:]))


def _python_fallback(op: Any, *args: Any) -> Any:
    stack = _stack()
    mode = stack.pop()
    if not stack:
        _set_key(False)
    try:
        a, kw = _split(op, args)
        return mode.__torch_dispatch__(op, (), a, kw)
    finally:
        stack.append(mode)
        _set_key(True)


class DispatchMode:
    """Base class: subclasses define ``__torch_dispatch__(func, types, args=(), kwargs=None)``."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> DispatchMode:
        if not _REGISTERED:
            _REGISTERED.append(DISPATCHER.register_fallback("Python", _python_fallback,
                                                             owner="torchplug.utils (dispatch modes)"))
        _stack().append(self)
        _set_key(True)
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _stack()
        stack.remove(self)
        if not stack:
            _set_key(False)
