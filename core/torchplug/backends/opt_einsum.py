"""``torchplug.backends.opt_einsum``: how ``torchplug.einsum`` orders the contractions of 3+ operands.

With ``enabled`` (the default when the ``opt_einsum`` package imports) the order comes from
``opt_einsum.contract_path`` with ``strategy`` (``'auto'``, ``'greedy'`` or ``'optimal'``);
disabled, operands are contracted left to right, as in PyTorch.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

from torchplug._ops.einsum_path import _enabled, _set_enabled, _set_strategy, _strategy, get_opt_einsum, is_available, path_strategy  # noqa: F401
from torchplug.backends._flags import Flag, flag_context, install

__all__ = ["is_available", "get_opt_einsum", "flags", "enabled", "strategy"]

def flags(enabled: bool | None = None, strategy: str | None = None) -> AbstractContextManager[None]:
    """Set ``enabled``/``strategy`` inside a ``with`` block and restore them after (None: unchanged)."""
    return flag_context(sys.modules[__name__], enabled=enabled, strategy=strategy)


install(__name__, enabled=Flag(_enabled, _set_enabled), strategy=Flag(_strategy, _set_strategy))
