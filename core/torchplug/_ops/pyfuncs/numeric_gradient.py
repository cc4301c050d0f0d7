"""``torch.gradient``: finite-difference estimates of a function's gradient from its samples (second-order
central differences inside, first- or second-order one-sided ones at the edges), uniform spacings or sample
coordinates per dim, ATen's formulas; a composition of slices, so autograd differentiates it."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def _sl(t: Tensor, dim: int, start: int | None, stop: int | None) -> Tensor:
    return t[(slice(None),) * dim + (slice(start, stop),)]


def _cat(parts: list[Tensor], dim: int) -> Tensor:
    from torchplug._ops.torch_namespace import TORCH

    return TORCH.cat(parts, dim)


def _uniform(f: Tensor, dim: int, h: Any, edge_order: int) -> Tensor:
    center = (_sl(f, dim, 2, None) - _sl(f, dim, 0, -2)) / (2 * h)
    if edge_order == 1:
        first = (_sl(f, dim, 1, 2) - _sl(f, dim, 0, 1)) / h
        last = (_sl(f, dim, -1, None) - _sl(f, dim, -2, -1)) / h
    else:
        first = (_sl(f, dim, 0, 1) * -3.0 + _sl(f, dim, 1, 2) * 4.0 - _sl(f, dim, 2, 3)) / (2 * h)
        last = (_sl(f, dim, -3, -2) - _sl(f, dim, -2, -1) * 4.0 + _sl(f, dim, -1, None) * 3.0) / (2 * h)
    return _cat([first, center, last], dim)


def _coordinates(f: Tensor, dim: int, x: Tensor, edge_order: int) -> Tensor:
    shape = [1] * f.dim()
    shape[dim] = -1
    dx = x.diff()
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(f, dim, 0, -2) + b * _sl(f, dim, 1, -1) + c * _sl(f, dim, 2, None)
    if edge_order == 1:
        first = (_sl(f, dim, 1, 2) - _sl(f, dim, 0, 1)) / dx[0]
        last = (_sl(f, dim, -1, None) - _sl(f, dim, -2, -1)) / dx[-1]
    else:
        d0, d1 = dx[0], dx[1]
        first = (-(2.0 * d0 + d1) / (d0 * (d0 + d1)) * _sl(f, dim, 0, 1) + (d0 + d1) / (d0 * d1) * _sl(f, dim, 1, 2)
                 - d0 / (d1 * (d0 + d1)) * _sl(f, dim, 2, 3))
        e1, e2 = dx[-1], dx[-2]
        last = (e1 / (e2 * (e1 + e2)) * _sl(f, dim, -3, -2) - (e1 + e2) / (e1 * e2) * _sl(f, dim, -2, -1)
                + (2 * e1 + e2) / (e1 * (e1 + e2)) * _sl(f, dim, -1, None))
    return _cat([first, center, last], dim)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """The gradient of the function sampled by ``input`` along each dim of ``dim`` (all by default): one tensor
    per dim.  ``spacing``: a number (the same step everywhere), one number per dim, or one tensor of sample
    coordinates per dim."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    given = dim is not None
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.dim() if input.dim() else d for d in dims]
    seen = set()
    for d in dims:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            if given:
                raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                                   "dim arguments to have the same length, but got a spacing argument of length "
                                   f"{len(spacing)} and a dim argument of length {len(dims)}.")
            raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {input.dim()}', since dim argument was not given, but got a "
                               f"list of length {len(spacing)}")
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.dim() == 1:
            out.append(_coordinates(f, d, h, edge_order))
        else:
            out.append(_uniform(f, d, h.item() if isinstance(h, Tensor) else h, edge_order))
    return tuple(out)


FUNCTIONS: dict[str, Any] = {"gradient": gradient}
METHODS: dict[str, Any] = {}
