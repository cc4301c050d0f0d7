"""``torchplug.types``: the type aliases PyTorch's ``torch.types`` gives annotations (``Number``, ``Device``,
``_size``, ``_dtype``...).

torchplug has no symbolic shapes, so ``IntLikeType``/``FloatLikeType``/``BoolLikeType`` are the plain Python
types (torch adds ``SymInt``/``SymFloat``/``SymBool`` to them) and there is no ``py_sym_types``.
"""

from __future__ import annotations

import os
from builtins import bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int, str as _str
from collections.abc import Sequence
from typing import IO, Any, TypeAlias, Union

from torchplug._base.dtype import dtype as _dtype
from torchplug._base.layout import layout as _layout
from torchplug._runtime.device import device as _device
from torchplug._tensor.tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors: TypeAlias = Union[Tensor, Sequence[Union[Tensor, None]]]
_size: TypeAlias = Union[Size, list[int], tuple[int, ...]]
IntLikeType: TypeAlias = int
FloatLikeType: TypeAlias = float
BoolLikeType: TypeAlias = bool
Number: TypeAlias = Union[int, float, bool]
_Number = (int, float, bool)
FileLike: TypeAlias = Union[str, "os.PathLike[str]", IO[bytes]]
Device: TypeAlias = Union[_device, str, int, None]


class Storage:
    """The storage interface annotations refer to (as in torch, a typing stand-in: the storages themselves are
    ``torchplug.UntypedStorage`` and the typed storages)."""

    device: _device
    dtype: _dtype

    def element_size(self) -> int:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError

    def data_ptr(self) -> int:
        raise NotImplementedError

    def cpu(self) -> Any:
        raise NotImplementedError


_ = (_bool, _bytes, _complex, _float, _int, _str, _layout)  # re-exported private aliases (torch.types has them)
