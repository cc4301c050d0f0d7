"""Shared helpers for built-in layers: ``device=``/``dtype=`` factory kwargs and n-tuples."""

from __future__ import annotations

from typing import Any

import torchplug

__all__ = ["empty", "ntuple", "single", "pair", "triple"]


def empty(*shape: int, device: Any = None, dtype: Any = None) -> Any:
    return torchplug.empty(shape, device=device, dtype=dtype)


def ntuple(x: Any, n: int) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,) * n


def single(x: Any) -> tuple:
    return ntuple(x, 1)


def pair(x: Any) -> tuple:
    return ntuple(x, 2)


def triple(x: Any) -> tuple:
    return ntuple(x, 3)
