"""Type aliases and small helpers torch keeps in ``torch.types``/``torch.overrides``/``typing_extensions``.

The distributions only use them for annotations, number checks and one deprecation decorator.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from numbers import Number
from typing import Any, Union

import torchplug as torch

__all__ = ["Number", "_Number", "_size", "_dtype", "Device", "is_tensor_like", "deprecated"]

_Number = (int, float, bool)  # isinstance() target, as torch.types._Number
_size = Union[torch.Size, Sequence[int]]
_dtype = torch.dtype
Device = Union[torch.device, str, int, None]


def is_tensor_like(value: Any) -> bool:
    """True for a tensor or an object implementing ``__torch_function__`` (torch.overrides.is_tensor_like)."""
    return isinstance(value, torch.Tensor) or hasattr(type(value), "__torch_function__")


def deprecated(message: str, *, category: type[Warning] = FutureWarning):
    """Decorator warning ``message`` (``category``) on each call, as typing_extensions.deprecated does."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            warnings.warn(message, category, stacklevel=2)
            return fn(*args, **kwargs)

        return inner

    return wrap
