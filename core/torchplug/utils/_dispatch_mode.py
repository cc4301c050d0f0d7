"""Observe every op below autograd: a minimal ``TorchDispatchMode`` for the checkpoint utilities.

A mode is a context manager with ``__torch_dispatch__(func, types, args, kwargs)``.  While one is
entered, the dispatcher's ``Python`` key is in this thread's TLS include set, and a boxed fallback
registered at that key hands each op reaching it, after autograd and ADInplaceOrView, to the
innermost mode, with its arguments split as the op's Python signature takes them.  The mode runs
with itself popped, as PyTorch's do: calling ``func(*args, **kwargs)`` inside ``__torch_dispatch__``
goes to the next mode or, with none left, below the Python key to the backend.  Ops that autograd
records reach the mode with the autograd keys already excluded, so calling ``func`` there records
nothing a second time.

The fallback is registered (over any other at the key) only while some thread has a mode entered,
and removed when the last one exits, so a ``Library.fallback(..., "Python")`` of the user's works
outside modes and other calls never see the key.
"""

from __future__ import annotations

import threading
from typing import Any

from torchplug._dispatch.codegen import python_name
from torchplug._dispatch.dispatcher import DISPATCHER
from torchplug._dispatch.keys import PYTHON_BIT, below
from torchplug._dispatch.tls import tls

__all__ = ["DispatchMode"]

_PYTHON = 1 << PYTHON_BIT
_BELOW_PYTHON = below(PYTHON_BIT)
_LOCAL = threading.local()
_LOCK = threading.Lock()
_ACTIVE: list[Any] = [0, None]  # threads with a mode entered, the fallback's registration
_SPECS: dict[int, tuple[int, tuple[str, ...]]] = {}


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


def _python_fallback(keyset: int, op: Any, *args: Any) -> Any:
    stack = getattr(_LOCAL, "modes", None)
    if not stack:  # no mode on this thread (or all popped while one runs): the key passes through
        return op.redispatch(keyset & _BELOW_PYTHON, *args)
    mode = stack.pop()
    try:
        a, kw = _split(op, args)
        return mode.__torch_dispatch__(op, (), a, kw)
    finally:
        stack.append(mode)


class DispatchMode:
    """Base class: subclasses define ``__torch_dispatch__(func, types, args=(), kwargs=None)``."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))

    def __enter__(self) -> DispatchMode:
        stack = getattr(_LOCAL, "modes", None)
        if stack is None:
            stack = _LOCAL.modes = []
        if not stack:
            with _LOCK:
                if _ACTIVE[0] == 0:
                    _ACTIVE[1] = DISPATCHER.register_fallback(
                        "Python", _python_fallback, owner="torchplug.utils (dispatch modes)", with_keyset=True,
                        allow_override=True)
                _ACTIVE[0] += 1
            _LOCAL.saved = (tls.include & _PYTHON, tls.mask & _PYTHON)
            tls.include |= _PYTHON
            tls.mask |= _PYTHON
        stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        stack = _LOCAL.modes
        stack.remove(self)
        if not stack:
            include, mask = _LOCAL.saved
            tls.include = (tls.include & ~_PYTHON) | include
            tls.mask = (tls.mask & ~_PYTHON) | mask
            with _LOCK:
                _ACTIVE[0] -= 1
                if _ACTIVE[0] == 0:
                    DISPATCHER.deregister(_ACTIVE[1])
                    _ACTIVE[1] = None
