"""Tensor printing (temporary minimal version; replaced by the torch-format printer)."""

from __future__ import annotations

from typing import Any

from ._backends import backend_for

__all__ = ["tensor_repr", "set_printoptions"]


def set_printoptions(**kwargs: Any) -> None:
    pass


def tensor_repr(t: Any) -> str:
    backend = backend_for(t.device.type)
    if not backend.has_data:
        return f"tensor(..., device='{t.device}', size={tuple(t.shape)}, dtype={t.dtype})"
    return f"tensor({backend.to_host(t).tolist()}, dtype={t.dtype})"
