"""meta kernels for reductions: reduced shapes (dim/keepdim), result dtypes, contiguous outputs.

One builder covers every reduction; each op is a row: how its ``dim`` argument is read, its
dtype rule, and whether reducing a zero-size dimension is an error (no identity element).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")


# ---- dtype rules: (input dtype, dtype argument or None, op name) -> result dtype ------------------------
def _sum_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    if requested is not None:
        return requested
    return D.int64 if D.category(dt) < 2 else dt


def _mean_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    result = requested or dt
    if D.category(result) < 2:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {C.scalar_type_name(result)}"
        )
    return result


def _same_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    return dt


def _var_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    if D.category(dt) < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return dt.to_real()


def _bool_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    return D.uint8 if dt is D.uint8 else D.bool_  # all/any keep uint8, as PyTorch does


def _index_dtype(dt: D.dtype, requested: D.dtype | None, name: str) -> D.dtype:
    return D.int64


# ---- the builder --------------------------------------------------------------------------------------------
def _reduce(self: C.Tensor, dim: Any, keepdim: bool, name: str, needs_identity: bool) -> tuple[int, ...]:
    size = C.shape(self)
    mask = C.reduce_dims(dim, len(size))
    if needs_identity:
        if name in ("argmax", "argmin") and self._dtype is D.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if name in ("amax", "amin") and not dim and any(s == 0 for s in size):
            # every dim reduced (dim=None or []): torch cpu's check for an unspecified dim
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        if dim is None and any(s == 0 for s in size):
            # argmax/argmin over a flattened empty tensor
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                + (" Specify the reduction dim with the 'dim' argument." if name in ("max", "min") else "")
            )
        for d, (s, m) in enumerate(zip(size, mask)):
            if m and s == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if dim is None and name in ("argmax", "argmin"):
        return (1,) * len(size) if keepdim else ()
    return C.reduced_shape(size, mask, keepdim)


def _kernel(name: str, dtype_rule: Callable[..., D.dtype], signature: str, needs_identity: bool) -> Callable[..., Any]:
    if signature == "dim_keepdim_dtype":  # sum, mean, prod: (self, dim, keepdim, dtype)
        def kernel(self: C.Tensor, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> C.Tensor:
            out = dtype_rule(self._dtype, dtype, name)
            return C.new(_reduce(self, dim, keepdim, name, needs_identity), out)
    elif signature == "dim_correction_keepdim":  # var, std: (self, dim, correction, keepdim)
        def kernel(self: C.Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> C.Tensor:
            out = dtype_rule(self._dtype, None, name)
            return C.new(_reduce(self, dim, keepdim, name, needs_identity), out)
    elif signature == "dim_keepdim":  # amax, amin, argmax, argmin, all, any: (self, dim, keepdim)
        def kernel(self: C.Tensor, dim: Any = None, keepdim: bool = False) -> C.Tensor:
            out = dtype_rule(self._dtype, None, name)
            return C.new(_reduce(self, dim, keepdim, name, needs_identity), out)
    elif signature == "all":  # max(), min(): (self)
        def kernel(self: C.Tensor) -> C.Tensor:
            if self.numel() == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
                    "dim with the 'dim' argument."
                )
            return C.new((), dtype_rule(self._dtype, None, name))
    elif signature == "values_indices":  # max.dim, min.dim: (self, dim, keepdim) -> (values, indices)
        def kernel(self: C.Tensor, dim: int, keepdim: bool = False) -> tuple[C.Tensor, C.Tensor]:
            size = _reduce(self, dim, keepdim, name, needs_identity)
            return C.new(size, dtype_rule(self._dtype, None, name)), C.new(size, D.int64)
    else:
        raise ValueError(signature)
    kernel.__qualname__ = kernel.__name__ = f"meta_{name}"
    return kernel


# op -> (dtype rule, argument layout, reducing a zero-size dim is an error)
REDUCTIONS: dict[str, tuple[Callable[..., D.dtype], str, bool]] = {
    "sum": (_sum_dtype, "dim_keepdim_dtype", False),
    "prod": (_sum_dtype, "dim_keepdim_dtype", False),
    "mean": (_mean_dtype, "dim_keepdim_dtype", False),
    "var": (_var_dtype, "dim_correction_keepdim", False),
    "std": (_var_dtype, "dim_correction_keepdim", False),
    "amax": (_same_dtype, "dim_keepdim", True),
    "amin": (_same_dtype, "dim_keepdim", True),
    "argmax": (_index_dtype, "dim_keepdim", True),
    "argmin": (_index_dtype, "dim_keepdim", True),
    "all": (_bool_dtype, "dim_keepdim", False),
    "any": (_bool_dtype, "dim_keepdim", False),
    "max": (_same_dtype, "all", True),
    "min": (_same_dtype, "all", True),
    "max.dim": (_same_dtype, "values_indices", True),
    "min.dim": (_same_dtype, "values_indices", True),
}

for _op, (_rule, _sig, _identity) in REDUCTIONS.items():
    TABLE.add(f"aten::{_op}", _kernel(_op.split(".")[0], _rule, _sig, _identity))
