"""``torchplug.utils.deterministic``: ``fill_uninitialized_memory``.

With ``torchplug.use_deterministic_algorithms(True)`` and this flag True (the default), as in
PyTorch, uninitialized memory is filled so results cannot depend on stale bytes: ``empty``,
``empty_like``, ``empty_strided``, ``Tensor.new_empty`` and the part ``Tensor.resize_`` adds hold NaN
(floating and complex: NaN + 0j) or the dtype's largest value (integers; True for bool).
"""

from __future__ import annotations

import sys
from types import ModuleType

from torchplug._base import flags as _flags
from torchplug._tensor.empty import fill_if_deterministic

__all__ = ["fill_uninitialized_memory", "fill_if_deterministic"]


class _DeterministicModule(ModuleType):
    """The module's class: ``fill_uninitialized_memory`` reads and writes the core's flag (as torch's does)."""

    @property
    def fill_uninitialized_memory(self) -> bool:
        return _flags.get_fill_uninitialized_memory()

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, value: bool) -> None:
        _flags.set_fill_uninitialized_memory(value)


sys.modules[__name__].__class__ = _DeterministicModule
