"""Grad-mode helpers that work whether or not the autograd plugin is loaded."""

from __future__ import annotations

import contextlib
from typing import Any

from torchplug._plugins.exposure import EXPOSED

__all__ = ["no_grad", "enable_grad", "autograd_available", "is_grad_enabled"]

_NULL = contextlib.nullcontext()


def autograd_available() -> bool:
    return "no_grad" in EXPOSED


def no_grad() -> Any:
    """``torchplug.no_grad()`` when the autograd plugin is loaded, else a no-op context."""
    found = EXPOSED.get("no_grad")
    return found[0]() if found is not None else _NULL


def enable_grad() -> Any:
    found = EXPOSED.get("enable_grad")
    return found[0]() if found is not None else _NULL


def is_grad_enabled() -> bool:
    found = EXPOSED.get("is_grad_enabled")
    return bool(found[0]()) if found is not None else False
