"""Python bindings for math ops whose signatures span overloads or return named tuples (sort, median, unique, norm...)."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.surface import return_types
from torchplug._ops.composites import check_castable, resize_output, scalar_type_name
from torchplug._tensor.tensor import Tensor

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

# named tuples PyTorch returns (torch.return_types.<name>)
for _name, _fields in (("cummax", "values indices"), ("cummin", "values indices"), ("median", "values indices"),
                       ("nanmedian", "values indices"), ("mode", "values indices"), ("kthvalue", "values indices"),
                       ("sort", "values indices"), ("topk", "values indices"), ("aminmax", "min max")):
    if not hasattr(return_types, _name):
        setattr(return_types, _name, namedtuple(_name, _fields.split()))

HANDWRITTEN = {
    "sort", "topk", "cummax", "cummin", "median", "nanmedian", "mode", "kthvalue", "quantile", "nanquantile",
    "_unique2", "unique_dim", "unique_consecutive", "var_mean", "std_mean", "aminmax", "float_power",
}


def _into(out: Any, results: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
    """Write multi-output ``results`` into the ``out=`` tensors (PyTorch's cast check and resize)."""
    if len(out) != len(results):
        raise TypeError(f"expected a tuple of {len(results)} tensors for out=, got {len(out)}")
    for o, r in zip(out, results):
        check_castable(r.dtype, o.dtype)
        resize_output(o, r.shape)
        A.copy_(o, r)
    return tuple(out)


def _named(name: str, results: tuple[Tensor, ...], out: Any) -> Any:
    if out is not None:
        results = _into(out, results)
    return getattr(return_types, name)(*results)


# ---- sorting and selection ------------------------------------------------------------------------
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool | None = False, out: Any = None) -> Any:
    """Sorted values and their indices along ``dim`` (NaN sorts as the largest value)."""
    return _named("sort", A.sort(input, dim, descending, stable=stable), out)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *, out: Any = None) -> Any:
    """The ``k`` largest (or smallest) values along ``dim`` with their indices."""
    return _named("topk", A.topk(input, k, dim, largest, sorted), out)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """The ``k``-th smallest value along ``dim`` and its index."""
    return _named("kthvalue", A.kthvalue(input, k, dim, keepdim), out)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out: Any = None) -> Any:
    """The most frequent value along ``dim`` (the smallest on ties) and its last index."""
    return _named("mode", A.mode(input, dim, keepdim), out)


def _scan(name: str) -> Callable[..., Any]:
    op = A[name]

    def function(input: Tensor, dim: int, *, out: Any = None) -> Any:
        return _named(name, op(input, dim), out)

    function.__name__ = name
    function.__doc__ = f"Running {name[3:]}imum along ``dim`` with the index where it was reached."
    return function


def _median(name: str) -> Callable[..., Any]:
    full, by_dim = A[name], A[f"{name}.dim"]

    def function(input: Tensor, dim: int | None = None, keepdim: bool = False, *, out: Any = None) -> Any:
        if dim is None:
            return full(input)
        return _named(name, by_dim(input, dim, keepdim), out)

    function.__name__ = name
    function.__doc__ = "The lower median of all elements, or (values, indices) along ``dim``."
    return function


def _quantile(name: str) -> Callable[..., Any]:
    op, out_op = A[name], A[f"{name}.out"]

    def function(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear", out: Any = None) -> Tensor:
        if not isinstance(q, Tensor):
            if not 0 <= q <= 1:
                raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
            q = A.full([], q, dtype=input.dtype, device=input.device)
        if out is not None:
            return out_op(input, q, dim, keepdim, interpolation=interpolation, out=out)
        return op(input, q, dim, keepdim, interpolation=interpolation)

    function.__name__ = name
    function.__doc__ = "The ``q``-th quantiles along ``dim`` (all elements when ``dim`` is None)."
    return function


# ---- unique ------------------------------------------------------------------------------------------
def _pick(results: tuple[Tensor, Tensor, Tensor], return_inverse: bool, return_counts: bool) -> Any:
    if not return_inverse and not return_counts:
        return results[0]
    picked = [results[0]]
    if return_inverse:
        picked.append(results[1])
    if return_counts:
        picked.append(results[2])
    return tuple(picked)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Any:
    """The distinct elements (or slices along ``dim``), optionally with inverse indices and counts."""
    if dim is None:
        results = A._unique2(input, sorted, return_inverse, return_counts)
    else:
        results = A.unique_dim(input, dim, sorted, return_inverse, return_counts)
    return _pick(results, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """Collapse runs of equal consecutive elements (or slices along ``dim``)."""
    return _pick(A.unique_consecutive(input, return_inverse, return_counts, dim), return_inverse, return_counts)


# ---- statistics -----------------------------------------------------------------------------------------
def _with_mean(which: str) -> Callable[..., Any]:
    op = A[f"{which}_mean"]

    def function(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
                 correction: Any = None) -> tuple[Tensor, Tensor]:
        if isinstance(dim, bool):  # legacy var_mean(input, unbiased)
            dim, unbiased = None, dim
        if isinstance(dim, int):
            dim = (dim,)
        if unbiased is not None and correction is not None:
            raise RuntimeError(f"{which}_mean: can't specify both unbiased and correction")
        if correction is None:
            correction = 1 if unbiased is None or unbiased else 0
        return tuple(op(input, dim, correction=correction, keepdim=keepdim))

    function.__name__ = f"{which}_mean"
    function.__doc__ = f"The {'variance' if which == 'var' else 'standard deviation'} and the mean, in one call."
    return function


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False, out: Any = None) -> Any:
    """The minimum and maximum (over everything, or along ``dim``)."""
    return _named("aminmax", A.aminmax(input, dim=dim, keepdim=keepdim), out)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, out: Any = None,
         dtype: Any = None) -> Tensor:
    """The vector norm (``p`` a number, or ``'fro'``) over ``dim`` (everything when None)."""
    if isinstance(p, str):
        if p != "fro" or (dim is not None and not isinstance(dim, int) and len(dim) > 2):
            from torchplug._ops import linalg  # 'nuc', or a matrix norm PyTorch rejects with its own message

            return linalg.matrix_norm(input, p, list(range(input.dim())) if dim is None else dim, keepdim, dtype=dtype,
                                      out=out)
        p = 2
    if isinstance(dim, int):
        dim = [dim]
    if out is not None:
        return A["linalg_vector_norm.out"](input, p, dim, keepdim, dtype=dtype, out=out)
    return A.linalg_vector_norm(input, p, dim, keepdim, dtype=dtype)


def float_power(input: Any, exponent: Any, *, out: Any = None) -> Tensor:
    """``input ** exponent`` computed in double precision (complex double for complex operands)."""
    if out is not None:
        return A["float_power.Tensor_Tensor_out"](input, exponent, out=out)
    return A["float_power.Tensor_Tensor"](input, exponent)


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    expo_complex = exponent.dtype.is_complex if isinstance(exponent, Tensor) else isinstance(exponent, complex)
    dt = D.complex128 if self.dtype.is_complex or expo_complex else D.float64
    if self.dtype is not dt:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_type_name(self.dtype)} but the operation's result "
            f"requires dtype {scalar_type_name(dt)}"
        )
    return A.copy_(self, float_power(self, exponent))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sort": sort, "topk": topk, "kthvalue": kthvalue, "mode": mode,
    "cummax": _scan("cummax"), "cummin": _scan("cummin"),
    "median": _median("median"), "nanmedian": _median("nanmedian"),
    "quantile": _quantile("quantile"), "nanquantile": _quantile("nanquantile"),
    "unique": unique, "unique_consecutive": unique_consecutive,
    "var_mean": _with_mean("var"), "std_mean": _with_mean("std"), "aminmax": aminmax, "norm": norm,
    "float_power": float_power,
}


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


METHODS: dict[str, Any] = {
    name: _method(FUNCTIONS[name]) for name in (
        "sort", "topk", "kthvalue", "mode", "cummax", "cummin", "median", "nanmedian", "quantile", "nanquantile",
        "unique", "unique_consecutive", "aminmax", "float_power",
    )
}
METHODS["float_power_"] = _float_power_
METHODS["norm"] = lambda self, p="fro", dim=None, keepdim=False, dtype=None: norm(self, p, dim, keepdim, dtype=dtype)
