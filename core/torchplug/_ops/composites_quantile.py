"""quantile/nanquantile as ATen's quantile_compute, step for step (sort, gather below and above the rank, lerp
between them, the q dim moved first by in-place views), registered as their CompositeImplicitAutograd kernels:
the backends keep their direct kernels for calls autograd does not record, and a recorded call decomposes into
these ops, so the graph is PyTorch's (SqueezeBackward4 over LerpBackward1 over GatherBackward0...)."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor, _wrap_dim

__all__ = ["COMPOSITES", "register"]

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(self: Tensor, q: Tensor, interpolation: str) -> None:
    # (PyTorch's messages say quantile() for nanquantile too)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self._dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._dtype is not self._dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q._device.type != "meta" and not bool(A.all(A.logical_and(A.ge(q, 0), A.le(q, 1))).item()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")


def _quantile(ignore_nan: bool) -> Any:
    def quantile(self: Tensor, q: Tensor, dim: int | None = None, keepdim: bool = False,
                 interpolation: str = "linear") -> Tensor:
        _check(self, q, interpolation)
        ndim = self.dim()
        if dim is not None and ndim > 0:
            d = _wrap_dim(dim, ndim)
            out_shape = list(self.shape)
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        else:
            d = None if dim is None else _wrap_dim(dim, max(ndim, 1))
            out_shape = [1] * ndim if keepdim else []
        if dim is None:
            sorted_ = A.sort(A.flatten(self))[0]
        elif d == ndim - 1 or ndim == 0:
            sorted_ = A.sort(self)[0]
        else:
            sorted_ = A.sort(A.transpose(A.unsqueeze(self, -1), d, -1))[0]
        out_shape.insert(0, q.numel())  # q as a 1-d tensor from here on
        in_shape = out_shape[1:] + [sorted_.shape[-1]]
        sorted_ = A.view(sorted_, in_shape)
        nan = A.isnan(sorted_)
        if ignore_nan:  # ranks from the non-NaN count; all NaN: rank 0, the quantile is NaN
            ranks = A.mul(q, A.sub(A.sum(A.logical_not(nan), [-1], True), 1))
            ranks = A["masked_fill_.Scalar"](ranks, A.lt(ranks, 0), 0)
        else:  # a NaN in the row: the last rank, the quantile is NaN
            last = sorted_.shape[-1] - 1
            scaled, any_nan = A.broadcast_tensors([A["mul.Scalar"](q, last), A.any(nan, [-1], True)])
            ranks = A["masked_fill.Scalar"](scaled, any_nan, last)
        # (ATen rounds ranks in place; out of place here, since an in-place op would also zero the tangent a
        # forward-AD ``weights`` shares with ranks. Nothing recorded depends on it: the ranks become indices.)
        if interpolation == "lower":
            ranks = A.floor(ranks)
        elif interpolation == "higher":
            ranks = A.ceil(ranks)
        elif interpolation == "nearest":
            ranks = A.round(ranks)
        below = A._to_copy(ranks, dtype=D.int64)
        values = A.gather(sorted_, -1, below)
        if interpolation in ("linear", "midpoint"):
            weights = (A.full(list(ranks.shape), 0.5, dtype=ranks._dtype, device=ranks._device)
                       if interpolation == "midpoint" else A.sub(ranks, below))
            above = A._to_copy(A.ceil(ranks), dtype=D.int64)
            values = A["lerp_.Tensor"](values, A.gather(sorted_, -1, above), weights)
        if q.dim() == 0:
            return values.squeeze_(-1)
        return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)

    return quantile


COMPOSITES: dict[str, tuple[str, Any]] = {
    "quantile": ("CompositeImplicitAutograd", _quantile(False)),
    "nanquantile": ("CompositeImplicitAutograd", _quantile(True)),
}


def register(lib: Any) -> None:
    """Register the composites through ``lib`` (called by ``register_core``)."""
    for name, (key, fn) in COMPOSITES.items():
        lib.impl(name, fn, key)
