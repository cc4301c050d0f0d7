"""Composites of ``_schemas/more.py``: fmax/fmin, ldexp, dist, logcumsumexp, diff, renorm, cov/corrcoef, put,
index_reduce and fill_diagonal_, written once in terms of other ops so every backend (cpu, meta, cuda,
third-party) and autograd get them without a kernel of their own.

Each follows the ATen implementation it names (op order, dtype rules and error messages), so results
and gradients match PyTorch's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._base.layout import contiguous_format
from torchplug._dispatch.aten import A
from torchplug._ops.composites import scalar_type_name
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["COMPOSITES", "register"]

_BOOL, _INT, _FLOAT = 0, 1, 2


def _category(dt: D.dtype) -> int:
    return D.category(dt)


# ---- pointwise -----------------------------------------------------------------------------------------
def _fminmax(which: str) -> Callable[[Tensor, Tensor], Tensor]:
    compare_name = "ge.Tensor" if which == "fmax" else "le.Tensor"

    def kernel(self: Tensor, other: Tensor) -> Tensor:
        # ATen BinaryOps.cpp: NaN only when both are NaN; the gradient goes to self where
        # self >= other (fmax) or other is NaN, else to other, as where() routes it.
        if self._dtype.is_complex or other._dtype.is_complex:
            raise RuntimeError(f"{which} not implemented for complex tensors.")
        dt = D.promote_types(self._dtype, other._dtype)
        if _category(dt) < _FLOAT:
            return A.maximum(self, other) if which == "fmax" else A.minimum(self, other)
        take_self = A.logical_or(A[compare_name](self, other), A.isnan(other))
        return A["where.self"](take_self, self, other)

    kernel.__name__ = which
    return kernel


def ldexp(self: Tensor, other: Tensor) -> Tensor:
    """``self * 2**other`` in the promoted floating dtype (integers compute in the default dtype)."""
    dt = D.promote_types(self._dtype, other._dtype)
    if _category(dt) < _FLOAT:
        dt = D.get_default_dtype()
    # half types compute in float32 and round once, like ATen's opmath
    compute = D.float32 if dt in (D.float16, D.bfloat16) else dt
    power = A.pow(2.0, A._to_copy(other, dtype=compute.to_real()))
    result = A.mul(A._to_copy(self, dtype=compute), power)
    return result if compute is dt else A._to_copy(result, dtype=dt)


# ---- reductions and scans ------------------------------------------------------------------------------
def dist(self: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """``norm(self - other, p)`` (ATen: at::norm of the difference)."""
    if isinstance(p, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of norm.")
    diff = A.sub(self, other)
    if _category(diff._dtype) < _FLOAT:
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{scalar_type_name(diff._dtype)} instead."
        )
    return A.linalg_vector_norm(diff, p)


def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    """Log of the cumulative sum of exponentials along ``dim``.

    A Hillis-Steele scan of ``logaddexp`` (ceil(log2 n) steps): exact where ``log(cumsum(exp(x)))``
    would underflow, and differentiable through logaddexp's formula on every backend.
    """
    if _category(self._dtype) < _FLOAT:
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{scalar_type_name(self._dtype)}\'')
    d = _wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return A.clone(self)
    if self._dtype in (D.float16, D.bfloat16):  # in float32 and rounded once, as ATen's scan does
        return A._to_copy(logcumsumexp(A._to_copy(self, dtype=D.float32), d), dtype=self._dtype)
    n = self.shape[d]
    result = A.clone(self)
    step = 1
    while step < n:
        head = A.narrow(result, d, 0, step)
        tail = A.logaddexp(A.narrow(result, d, step, n - step), A.narrow(result, d, 0, n - step))
        result = A.cat([head, tail], d)
        step *= 2
    return result


def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along ``dim`` (ATen ReduceOps.cpp diff_helper)."""
    if self.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for extra in (prepend, append):
        if extra is not None and extra.dim() != self.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    d = _wrap_dim(dim, self.dim())
    for extra in (prepend, append):
        if extra is None:
            continue
        for i in range(self.dim()):
            if i != d and extra.shape[i] != self.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of input except along the "
                    f"differencing dimension; input.size({i}) = {self.shape[i]}, but got tensor.size({i}) = "
                    f"{extra.shape[i]}"
                )
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        self = A.cat(parts, d)
    size = self.shape[d]
    if n == 0:  # a copy, never self itself (ATen: zeros_like(self).copy_(self))
        return A.copy_(self.new_zeros(list(self.shape)), self)
    sub = A.logical_xor if self._dtype is D.bool_ else A.sub
    result = self
    length = size - 1
    for _ in range(min(n, size)):  # ATen differences min(n, size) times: the last ones are empty
        result = sub(A.narrow(result, d, 1, length), A.narrow(result, d, 0, length))
        length -= 1
    return result


def renorm(self: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:
    """Sub-tensors along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it (ATen Normalization)."""
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_num(maxnorm)}")
    if self.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} dimensions")
    if isinstance(p, complex) or p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    d = _wrap_dim(dim, self.dim())
    reduce_dims = [i for i in range(self.dim()) if i != d]
    acc = D.float32 if self._dtype in (D.float16, D.bfloat16) else None
    norm = A.linalg_vector_norm(self, p, reduce_dims, True, dtype=acc)
    factor = A["where.self"](A["gt.Tensor"](norm, maxnorm), A.div(maxnorm, A.add(norm, 1e-7)), 1.0)
    if factor._dtype is not self._dtype.to_real():
        factor = A._to_copy(factor, dtype=self._dtype.to_real())
    # ATen allocates renorm's result contiguous whatever self's layout
    out = A.empty(list(self.shape), dtype=self._dtype, device=self._device)
    return A.copy_(out, A.mul(self, factor))


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def cov(self: Tensor, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """Covariance of the rows' variables over the columns' observations (ATen Correlation.cpp)."""
    if self.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions"
        )
    if self._dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = A.reshape(self, [1, -1]) if self.dim() < 2 else self
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, integral=False)
        w = aweights if w is None else A.mul(w, aweights)
    if w is None:
        w_sum: Any = observations
        avg = A.div(A.sum(x, [1]), w_sum)
    else:
        w_sum = A.sum(w)
        if not w_sum.is_meta and not bool(A["ne.Tensor"](w_sum, 0).item()):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = A.div(A.sum(A.mul(x, w), [1]), w_sum)
    if w is not None and correction != 0:
        if aweights is not None:
            norm_factor = A.sub(w_sum, A.div(A["mul.Scalar"](A.sum(A.mul(w, aweights)), correction), w_sum))
        else:
            norm_factor = A.sub(w_sum, correction)
    else:
        norm_factor = A.sub(w_sum, correction) if isinstance(w_sum, Tensor) else w_sum - correction
    if isinstance(norm_factor, Tensor):  # (a meta tensor has no value to check)
        low = not norm_factor.is_meta and bool(A["le.Tensor"](norm_factor, 0).item())
    else:
        low = norm_factor <= 0
    if low:
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.",
            UserWarning, stacklevel=3,
        )
        norm_factor = A.mul(norm_factor, 0) if isinstance(norm_factor, Tensor) else 0
    centered = A.sub(x, A.unsqueeze(avg, 1))
    weighted = centered if w is None else A.mul(centered, w)
    weighted = A.t(weighted)
    if weighted._dtype.is_complex:
        weighted = A.conj_physical(weighted)
    product = A.mm(centered, weighted)
    return A.squeeze(A.div(product, norm_factor), None)


def _check_weights(name: str, w: Tensor, observations: int, integral: bool) -> None:
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} dimensions")
    if integral and _category(w._dtype) != _INT:
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{scalar_type_name(w._dtype)} dtype")
    if not integral and not w._dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} with "
                           f"{scalar_type_name(w._dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input but "
                           f"got {w.numel()} != {observations}")
    if observations and not w.is_meta and bool(A["lt.Tensor"](A.amin(w, []), 0).item()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(self: Tensor) -> Tensor:
    """Pearson correlation coefficients: cov normalized by the standard deviations, clipped to [-1, 1]."""
    if self.dim() > 2:
        raise RuntimeError(
            f"corrcoef(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions"
        )
    c = cov(self)
    if c.dim() == 0:
        return A.div(c, c)
    d = A.diagonal(c, 0, 0, 1)
    stddev = A.sqrt(_real(d) if d._dtype.is_complex else d)
    c = A.div(c, A.reshape(stddev, [-1, 1]))
    c = A.div(c, A.reshape(stddev, [1, -1]))
    if c._dtype.is_complex:  # each part clipped on its own, as ATen does
        parts = A.view_as_real(A.clone(c, memory_format="contiguous_format"))
        return A.complex(A.clamp(A.select(parts, -1, 0), -1, 1), A.clamp(A.select(parts, -1, 1), -1, 1))
    return A.clamp(c, -1, 1)


def _real(t: Tensor) -> Tensor:
    return A.select(A.view_as_real(A.clone(t, memory_format="contiguous_format")), -1, 0)


# ---- indexing --------------------------------------------------------------------------------------------
def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``self`` with ``source`` written at the flat (row-major) positions ``index``."""
    if index._dtype is not D.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_type_name(index._dtype)}")
    if self._dtype is not source._dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{scalar_type_name(self._dtype)} and source.dtype = {scalar_type_name(source._dtype)}"
        )
    if source.numel() != index.numel():
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{source.numel()}, index.numel() = {index.numel()}"
        )
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    result = A.clone(self)
    if index.numel() == 0:
        return result
    numel = self.numel()
    flat = A.reshape(index, [-1])
    if not flat.is_meta and bool(A.any(A.logical_or(A["ge.Tensor"](flat, numel), A["lt.Tensor"](flat, -numel))).item()):
        bad = int(A.masked_select(flat, A.logical_or(A["ge.Tensor"](flat, numel), A["lt.Tensor"](flat, -numel)))[0].item())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} elements.")
    flat = A.remainder(flat, numel)  # negative positions count from the end
    coords = []
    for size in reversed(self.shape or (1,)):
        coords.append(A.remainder(flat, size))
        flat = A.floor_divide(flat, size)
    target = result if self.dim() else A.reshape(result, [1])
    A["index_put_"](target, coords[::-1], A.reshape(source, [-1]), accumulate)
    return result


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_INDEX_REDUCE_WARNED = False


def index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, include_self: bool = True) -> Tensor:
    """``self`` with ``source``'s slices reduced into the rows ``index`` names along ``dim`` (via scatter_reduce)."""
    global _INDEX_REDUCE_WARNED
    if not _INDEX_REDUCE_WARNED:  # torch: TORCH_WARN_ONCE
        _INDEX_REDUCE_WARNED = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(
            f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}."
        )
    d = _wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise IndexError(
            f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
            f"{scalar_type_name(index._dtype)} and size: {list(index.shape)}"
        )
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {scalar_type_name(index._dtype)}")
    if self._dtype is not source._dtype:
        raise RuntimeError(
            f"index_reduce_(): self ({scalar_type_name(self._dtype)}) and source ({scalar_type_name(source._dtype)}) "
            "must have the same scalar type"
        )
    source_size = source.shape[d] if source.dim() else 1
    if index.numel() != source_size:
        raise RuntimeError(
            f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim): ({source_size}), "
            f"for dim: {d}"
        )
    if self.dim() != source.dim() or any(a != b for i, (a, b) in enumerate(zip(self.shape, source.shape)) if i != d):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = "
            f"{list(self.shape)} source.shape = {list(source.shape)}"
        )
    size = self.shape[d] if self.dim() else 1
    if index.numel() and not index.is_meta:
        low, high = int(A.amin(index, []).item()), int(A.amax(index, []).item())
        if low < 0 or high >= size:
            raise IndexError("index out of range in self")
    if self.dim() == 0:
        self_v, source_v = A.reshape(self, [1]), A.reshape(source, [1])
    else:
        self_v, source_v = self, source
    shape = [1] * source_v.dim()
    shape[d] = index.numel()
    expanded = A.expand(A.reshape(A._to_copy(index, dtype=D.int64), shape), list(source_v.shape))
    result = A["scatter_reduce.two"](self_v, d, expanded, source_v, reduce, include_self=include_self)
    return A.reshape(result, []) if self.dim() == 0 else result


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims equal, or a tall matrix wrapping every ``width + 1`` rows) in place."""
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if n > 2 and any(s != height for s in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    offset = self.storage_offset()
    size = min(height, width)
    stride = sum(self.stride())
    A["fill_.Scalar"](A.as_strided(self, [size], [stride], offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        wrapped = A.as_strided(self, [wrap_size], [stride], offset + self.stride(0) * (width + 1))
        A["fill_.Scalar"](wrapped, fill_value)
    return self


# ---- scatter(reduce=) ------------------------------------------------------------------------------------
_SCATTER_REDUCTIONS = {"add": "sum", "multiply": "prod"}


def _scatter_how(reduce: str) -> str:
    how = _SCATTER_REDUCTIONS.get(reduce)
    if how is None:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return how


def scatter_reduce_legacy(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str) -> Tensor:
    """``scatter(self, dim, index, src, reduce='add'|'multiply')``: scatter_reduce with self included.
    A separate op (as PyTorch's ``scatter.reduce``) because its derivative is not implemented."""
    return A["scatter_reduce.two"](self, dim, index, src, _scatter_how(reduce))


def scatter_value_reduce(self: Tensor, dim: int, index: Tensor, value: Any, reduce: str) -> Tensor:
    """``scatter(self, dim, index, value, reduce=...)``: the number reduced into every indexed position."""
    how = _scatter_how(reduce)
    src = A.full(list(index.shape), value, dtype=self._dtype, device=self._device)
    return A["scatter_reduce.two"](self, dim, index, src, how)


def _random_like(fill: str) -> Callable[..., Any]:
    """ATen's rand_like/randn_like: ``empty_like(self)`` (its layout kept where dense) drawn in place."""

    def kernel(self: Tensor, generator: Any = None, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:
        from torchplug._tensor.creation import _empty_preserving  # (creation needs the op table built first)

        if memory_format is contiguous_format:
            t = A.empty(list(self.shape), dtype=dtype or self._dtype, device=device or self._device)
        else:
            t = _empty_preserving(self, dtype, device)
        return A.uniform_(t, 0.0, 1.0, generator=generator) if fill == "uniform" else \
            A.normal_(t, 0.0, 1.0, generator=generator)

    def default(self: Tensor, dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: Any = None,
                memory_format: Any = None) -> Tensor:
        return kernel(self, None, dtype, layout, device, pin_memory, memory_format)

    return default, kernel


_RAND_LIKE, _RAND_LIKE_GENERATOR = _random_like("uniform")
_RANDN_LIKE, _RANDN_LIKE_GENERATOR = _random_like("normal")


# op name -> (key, kernel), the format of ``_composites.COMPOSITES``.
COMPOSITES: dict[str, tuple[str, Callable[..., Any]]] = {
    # explicit: one FmaxBackward0/FminBackward0/LdexpBackward0/DistBackward0 node with its own formula, as PyTorch
    "fmax": ("CompositeExplicitAutograd", _fminmax("fmax")),
    "fmin": ("CompositeExplicitAutograd", _fminmax("fmin")),
    "ldexp.Tensor": ("CompositeExplicitAutograd", ldexp),
    "dist": ("CompositeExplicitAutograd", dist),
    "logcumsumexp": ("CompositeExplicitAutograd", logcumsumexp),  # one LogcumsumexpBackward0 node, as PyTorch
    "diff": ("CompositeImplicitAutograd", diff),
    "renorm": ("CompositeExplicitAutograd", renorm),  # one RenormBackward0 node, as PyTorch records
    "cov": ("CompositeImplicitAutograd", cov),
    "corrcoef": ("CompositeImplicitAutograd", corrcoef),
    "put": ("CompositeExplicitAutograd", put),  # one PutBackward0 node, as PyTorch records
    "index_reduce": ("CompositeExplicitAutograd", index_reduce),  # one IndexReduceBackward0 node, as PyTorch
    "fill_diagonal_": ("CompositeImplicitAutograd", fill_diagonal_),
    "scatter.reduce": ("CompositeExplicitAutograd", scatter_reduce_legacy),
    "scatter.value_reduce": ("CompositeExplicitAutograd", scatter_value_reduce),
    "rand_like": ("CompositeExplicitAutograd", _RAND_LIKE),
    "rand_like.generator": ("CompositeExplicitAutograd", _RAND_LIKE_GENERATOR),
    "randn_like": ("CompositeExplicitAutograd", _RANDN_LIKE),
    "randn_like.generator": ("CompositeExplicitAutograd", _RANDN_LIKE_GENERATOR),
}


def _logcumsumexp_out(self: Tensor, dim: int, out: Tensor) -> Tensor:
    # ATen's logcumsumexp_out: the result is computed in self's dtype and out must have it
    if out._dtype is not self._dtype:
        raise RuntimeError(
            f"expected scalar_type {scalar_type_name(self._dtype)} but found {scalar_type_name(out._dtype)}"
        )
    return _out_via(out, logcumsumexp(self, dim))


def _out_via(out: Tensor, result: Tensor) -> Tensor:
    from torchplug._ops.composites import resize_output

    resize_output(out, result.shape)
    return A.copy_(out, result)


def register(lib: Any) -> None:
    """Register every composite of this module through ``lib`` (called by ``register_core``)."""
    for name, (key, fn) in COMPOSITES.items():
        lib.impl(name, fn, key)
    # shadow the generic out= composite the core made: torch's out dtype rule is stricter here
    lib.impl("logcumsumexp.out", _logcumsumexp_out, "CompositeExplicitAutograd", allow_override=True)
