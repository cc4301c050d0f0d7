"""The process-group backends: entry points of ``torchplug.distributed_backends`` plus ``register_backend``."""

from __future__ import annotations

from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "ALIASES", "backend_classes", "backend_class", "register_backend", "canonical_name"]

ENTRY_POINT_GROUP = "torchplug.distributed_backends"
# Names PyTorch scripts use for a backend torchplug provides under another name.
ALIASES = {"gloo": "mpi"}

_REGISTERED: dict[str, Any] = {}  # by register_backend, ahead of the entry points
_LOADED: dict[str, Any] | None = None
_FAILED: dict[str, str] = {}


def _entry_points() -> dict[str, Any]:
    global _LOADED
    if _LOADED is None:
        from importlib.metadata import entry_points

        loaded: dict[str, Any] = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                loaded[ep.name.lower()] = ep.load()
            except Exception as exc:  # a broken backend is reported (doctor, errors), never fatal to the others
                _FAILED[ep.name.lower()] = f"{type(exc).__name__}: {exc}"
        _LOADED = loaded
    return _LOADED


def backend_classes() -> dict[str, Any]:
    """Every backend class by name (registered by hand first, then entry points)."""
    return {**_entry_points(), **_REGISTERED}


def failed_backends() -> dict[str, str]:
    """Backends whose entry point failed to load, with the error."""
    _entry_points()
    return dict(_FAILED)


def canonical_name(name: str) -> str:
    """``name`` lower-cased with its alias resolved (``gloo`` -> ``mpi``) unless a backend has that name."""
    lowered = name.lower()
    if lowered in backend_classes():
        return lowered
    return ALIASES.get(lowered, lowered)


def backend_class(name: str) -> Any:
    """The class of backend ``name``; ValueError listing the known ones if there is none."""
    classes = backend_classes()
    canonical = canonical_name(name)
    cls = classes.get(canonical)
    if cls is None:
        known = ", ".join(sorted(set(classes) | set(ALIASES)))
        broken = f" ({canonical!r} failed to load: {_FAILED[canonical]})" if canonical in _FAILED else ""
        raise ValueError(f"Unknown backend type {name}{broken}: the installed process-group backends are {known}; "
                         f"a package adds one under the entry-point group {ENTRY_POINT_GROUP!r}")
    return cls


def register_backend(name: str, cls: Any) -> None:
    """Make ``cls`` (a :class:`torchplug_distributed.backends.base.Backend` subclass) available as ``name``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"Backend name must be a non-empty string, got {name!r}")
    _REGISTERED[name.lower()] = cls
