"""meta kernels for ``_schemas/names.py``: i0, special_i1, polygamma, frexp (dtype rules and errors as
``torchplug_cpu.kernels.names``)."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_FLOATING = (D.float16, D.bfloat16, D.float32, D.float64)


def _nie(kernel: str, dt: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{C.scalar_type_name(dt)}\'')


def _float(dt: D.dtype) -> D.dtype:
    return dt if dt.is_floating_point else D.get_default_dtype()


def _like(self: Any, dt: D.dtype) -> C.Tensor:
    size = self._data.shape
    return C.new(size, dt, C.elementwise_strides(size, (self,)))


def _unary(kernel: str) -> Any:
    def fn(self: Any) -> C.Tensor:
        if self._dtype.is_complex:
            raise _nie(kernel, self._dtype)
        return _like(self, _float(self._dtype))

    return fn


TABLE.add("aten::i0", _unary("i0_vml_cpu"))
TABLE.add("aten::special_i1", _unary("i1_cpu"))


@TABLE.impl("aten::polygamma")
def polygamma(n: int, self: Any) -> C.Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _unary("polygamma")(self)


@TABLE.impl("aten::frexp.Tensor")
def frexp(self: Any) -> tuple[C.Tensor, C.Tensor]:
    if self._dtype not in _FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _like(self, self._dtype), _like(self, D.int32)
