"""meta kernels for the binary pointwise primitives of ``_schemas/more.py``: nextafter, igamma/igammac,
gcd/lcm.  Dtype rules and errors mirror ``torchplug_cpu.kernels.more``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .pointwise import result

TABLE = KernelTable("Meta")

_FLOATING = frozenset((D.float16, D.bfloat16, D.float32, D.float64))
_INTEGRAL = frozenset((D.uint8, D.int8, D.int16, D.int32, D.int64))


def _binary(kname: str, accepted: frozenset[D.dtype]) -> Callable[..., Any]:
    def kernel(self: Any, other: Any) -> C.Tensor:
        dt = C.result_dtype(self, other)
        if dt not in accepted:
            raise NotImplementedError(f'"{kname}" not implemented for \'{C.scalar_type_name(dt)}\'')
        return result([self, other], dt)

    return kernel


for _name, _accepted in (("nextafter", _FLOATING), ("igamma", _FLOATING), ("igammac", _FLOATING),
                         ("gcd", _INTEGRAL), ("lcm", _INTEGRAL)):
    TABLE.add(f"aten::{_name}", _binary(f"{_name}_cpu", _accepted))
