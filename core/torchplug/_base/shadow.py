"""Say so when another ``torchplug`` (a folder in the current directory) hides the installed package.

A folder named ``torchplug`` without an ``__init__.py`` in the current directory (or anywhere
earlier on ``sys.path``) becomes a namespace package that wins over an editable install, so
``import torchplug`` succeeds and ``torchplug.tensor`` is an ``AttributeError``. This package's own
modules can still be imported under it (``python -m torchplug``, ``import torchplug.utils.data``);
the first of them to load calls :func:`check_not_shadowed`, which costs one attribute read when
nothing is wrong.
"""

from __future__ import annotations

import os
import sys

__all__ = ["shadowing_message", "check_not_shadowed"]

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the torchplug package folder


def shadowing_message(name: str = "torchplug") -> str | None:
    """Why ``sys.modules[name]`` is not this package (the explanation and the fix), or None when it is."""
    module = sys.modules.get(name)
    if module is None or getattr(module, "__file__", None) is not None:
        return None
    found = [os.path.abspath(p) for p in getattr(module, "__path__", ())]
    where = ", ".join(repr(p) for p in found) or "an entry of sys.path"
    in_cwd = any(os.path.dirname(p) == os.path.abspath(os.getcwd()) for p in found)
    return (
        f"`import {name}` found the folder {where}, a directory without an __init__.py, instead of the "
        f"installed {name} package at {_HERE!r}: a folder named '{name}' "
        + ("in the current directory " if in_cwd else "earlier on sys.path ")
        + f"hides it (Python imports it as a namespace package, so `{name}.tensor` and the rest are missing). "
        f"Rename or move that folder, or run Python from another directory."
    )


def check_not_shadowed(name: str = "torchplug") -> None:
    """Raise ImportError with :func:`shadowing_message` when a namespace folder hides the package."""
    message = shadowing_message(name)
    if message is not None:
        raise ImportError(message, name=name)
