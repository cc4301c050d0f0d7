"""The function table ``torchplug``'s namespace is built from, and ``torchplug.return_types``.

A leaf of the op layer: the generated bindings and the hand-written functions (``pyfuncs``) fill
:data:`FUNCTIONS`; ``torchplug``'s ``__init__`` publishes it; code of the layer that calls a public
function by name reads it here.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

__all__ = ["FUNCTIONS", "return_types"]

# name -> the function published as torchplug.<name>
FUNCTIONS: dict[str, Callable[..., Any]] = {}


class _ReturnTypes:
    """``torchplug.return_types``: named tuples for multi-output ops."""

    max = namedtuple("max", ["values", "indices"])
    min = namedtuple("min", ["values", "indices"])
    aminmax = namedtuple("aminmax", ["min", "max"])
    sort = namedtuple("sort", ["values", "indices"])
    topk = namedtuple("topk", ["values", "indices"])


return_types = _ReturnTypes()
