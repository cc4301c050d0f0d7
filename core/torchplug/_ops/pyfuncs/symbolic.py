"""``torch.sym_*``: the symbolic-shape helpers scripts call on sizes.  torchplug has no symbolic shapes (sizes
are Python ints), so each is the plain operation on its concrete values, as PyTorch's are for plain numbers."""

from __future__ import annotations

import builtins
import math
from typing import Any

__all__ = ["FUNCTIONS", "METHODS"]


def sym_float(a: Any) -> float:
    """``float(a)``."""
    return float(a)


def sym_int(a: Any) -> int:
    """``int(a)`` (truncating, as PyTorch's)."""
    return int(math.trunc(a)) if isinstance(a, float) else int(a)


def sym_max(a: Any, b: Any) -> Any:
    """The larger of ``a`` and ``b``."""
    return builtins.max(a, b)


def sym_min(a: Any, b: Any) -> Any:
    """The smaller of ``a`` and ``b``."""
    return builtins.min(a, b)


def sym_not(a: Any) -> bool:
    """``not a``."""
    return not a


def sym_sqrt(a: Any) -> float:
    """``math.sqrt(a)``."""
    return math.sqrt(a)


def sym_sum(args: Any) -> Any:
    """The sum of ``args``."""
    return builtins.sum(args)


def sym_ite(b: Any, t: Any, f: Any) -> Any:
    """``t if b else f``."""
    return t if b else f


FUNCTIONS: dict[str, Any] = {f.__name__: f for f in (sym_float, sym_int, sym_max, sym_min, sym_not, sym_sqrt,
                                                     sym_sum, sym_ite)}
METHODS: dict[str, Any] = {}
