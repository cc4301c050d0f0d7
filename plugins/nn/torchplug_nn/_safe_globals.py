"""The user's additions to the weights-only allow-list (``torch.serialization.add_safe_globals`` & co).

Semantics follow PyTorch: entries are functions/classes, named by ``{__module__}.{__qualname__}``,
or ``(obj, "module.name")`` tuples naming them explicitly; the list is a set (adding twice keeps one
entry); ``safe_globals([...])`` adds its entries on enter and removes exactly those entries on exit.
Unlike PyTorch, a malformed entry is rejected when it is added rather than at the next load.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals", "user_allowed_globals"]

_marked: set[Any] = set()


def _entry_name(entry: Any) -> tuple[str, Any]:
    """The ``module.name`` a checkpoint uses for ``entry``, and the object it stands for."""
    if isinstance(entry, tuple):
        if len(entry) != 2:
            raise ValueError(
                f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(entry)}"
            )
        obj, name = entry
        if type(name) is not str:
            raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(name)}")
        return name, obj
    module = getattr(entry, "__module__", None)
    qualname = getattr(entry, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str):
        raise TypeError(
            f"add_safe_globals: {entry!r} has no __module__/__qualname__ to name it by; pass it as a tuple "
            "(obj, 'module.name') with the name the checkpoint uses."
        )
    return f"{module}.{qualname}", entry


def add_safe_globals(safe_globals: Iterable[Callable[..., Any] | tuple[Callable[..., Any], str]]) -> None:
    """Mark these functions/classes as safe for ``weights_only`` load: checkpoints may then name them
    (by ``{__module__}.{__qualname__}``, or by the string of an ``(obj, "module.name")`` tuple), call
    them, instantiate them and set their state.  Only add what you trust."""
    entries = list(safe_globals)
    for entry in entries:
        _entry_name(entry)
    _marked.update(entries)


def get_safe_globals() -> list[Callable[..., Any] | tuple[Callable[..., Any], str]]:
    """The user-added globals that are safe for ``weights_only`` load."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every global added with :func:`add_safe_globals`."""
    _marked.clear()


class safe_globals:  # noqa: N801 - PyTorch's spelling
    """Context manager that adds globals as safe for ``weights_only`` load while it is active.

    On exit it removes the entries it was given (even ones that had been added before), as PyTorch does.
    """

    def __init__(self, safe_globals: list[Callable[..., Any] | tuple[Callable[..., Any], str]]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _marked.difference_update(self.safe_globals)


def user_allowed_globals() -> dict[str, Any]:
    """``{"module.name": obj}`` for every user-added global (a snapshot, taken once per load)."""
    return dict(_entry_name(entry) for entry in _marked)
