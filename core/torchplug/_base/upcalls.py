"""The few calls a lower layer of the core makes into a higher one, each plugged in by that layer.

The core's layers import only downwards (see ``core/torchplug/__init__.py``).  A handful of
questions asked low down can only be answered higher up: a device lookup that finds no backend
must load the plugins first; the Tensor's ``requires_grad`` error must say whether the autograd
plugin was blocked; ``torchplug.cuda.amp`` on a placeholder module is the amp plugin's.  Instead
of importing upwards, the lower layer calls the function registered here, and ``torchplug``'s
``__init__`` (the one place that sees every layer) registers the answers once, at import.

Each slot has a default that is right when nothing is registered (no plugin system: nothing to
load, nothing exposed), so every layer can be imported and tested alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ensure_plugins_loaded", "ensure_backends_loaded", "ensure_plugin_loaded", "plugin_status", "exposed",
           "register"]


def _nothing_to_load() -> None:
    return None


def _nothing_named(name: str) -> None:
    return None


def _no_status(name: str) -> tuple[str, str] | None:
    return None


def _nothing_exposed(name: str) -> Any:
    raise AttributeError(f"module 'torchplug' has no attribute {name!r} (no plugin layer is loaded)")


_load: Callable[[], None] = _nothing_to_load
_load_backends: Callable[[], None] = _nothing_to_load
_load_one: Callable[[str], None] = _nothing_named
_status: Callable[[str], tuple[str, str] | None] = _no_status
_exposed: Callable[[str], Any] = _nothing_exposed


def ensure_plugins_loaded() -> None:
    """Discover and load every installed plugin if that has not happened yet (cheap afterwards)."""
    _load()


def ensure_backends_loaded() -> None:
    """Load what running an op needs if that has not happened yet: the backends and the plugins that may
    register kernels anywhere (the core-layer plugins load on their first use; cheap afterwards)."""
    _load_backends()


def ensure_plugin_loaded(name: str) -> None:
    """Load the core-layer plugin ``name`` (``"autograd"``...) if it is installed and waiting for its first use."""
    _load_one(name)


def plugin_status(name: str) -> tuple[str, str] | None:
    """``(status, reason)`` of the plugin called ``name`` (``'loaded'``, ``'blocked'``...), None if unknown."""
    return _status(name)


def exposed(name: str) -> Any:
    """The object a plugin exposed as ``torchplug.<name>`` (loading plugins first); AttributeError if none."""
    return _exposed(name)


def register(*, load: Callable[[], None], status: Callable[[str], tuple[str, str] | None],
             exposed: Callable[[str], Any], load_backends: Callable[[], None] | None = None,
             load_one: Callable[[str], None] | None = None) -> None:
    """Plug in the plugin layer's answers (called once by ``torchplug.__init__``).  Without ``load_backends``
    or ``load_one``, both load everything (``load``)."""
    global _load, _load_backends, _load_one, _status, _exposed
    _load, _status, _exposed = load, status, exposed
    _load_backends = load_backends or load
    _load_one = load_one or (lambda name: load())
