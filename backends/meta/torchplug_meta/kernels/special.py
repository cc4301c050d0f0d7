"""meta kernels for the ``special_*`` primitives of ``_schemas/special.py``: broadcast shapes and the dtype
rules of the cpu kernels (``torchplug._ops.special_support``)."""

from __future__ import annotations

from typing import Any

from torchplug._schemas.special import BINARY, POLYNOMIALS, UNARY
from torchplug._ops.special_support import float_result
from torchplug.library import KernelTable

from .. import _common as C
from .pointwise import result

TABLE = KernelTable("Meta")


def _unary(op: str) -> Any:
    def kernel(self: C.Tensor) -> C.Tensor:
        return result([self], float_result(op, self._dtype))

    kernel.__name__ = op
    return kernel


def _binary(op: str) -> Any:
    def kernel(self: Any, other: Any) -> C.Tensor:
        return result([self, other], float_result(op, C.result_dtype(self, other)))

    kernel.__name__ = op
    return kernel


for _name in UNARY:
    TABLE.add(f"aten::special_{_name}", _unary(f"special_{_name}"))
for _name in (*BINARY, *POLYNOMIALS):
    TABLE.add(f"aten::special_{_name}", _binary(f"special_{_name}"))
