"""The ``*_copy`` functions (``torch.t_copy``, ``torch.expand_copy``, ``torch.split_copy``...): each view op's
result copied into fresh contiguous memory, PyTorch's functionalization variants.  Autograd differentiates
the view and the copy, so gradients are the view op's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def _fresh(t: Tensor) -> Tensor:
    return t.clone(memory_format=_contiguous())


def _contiguous() -> Any:
    from torchplug._ops.torch_namespace import TORCH

    return TORCH.contiguous_format


def _write_out(result: Any, out: Any) -> Any:
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            o.resize_(r.shape).copy_(r)
        return out
    return out.resize_(result.shape).copy_(result)


def _copy_variant(name: str, view: Callable[..., Any], *, many: bool = False) -> Callable[..., Any]:
    def copy(input: Tensor, *args: Any, out: Any = None, **kwargs: Any) -> Any:
        kwargs.pop("implicit", None)  # expand_copy's tracing flag: no meaning in eager mode
        result = view(input, *args, **kwargs)
        result = tuple(_fresh(t) for t in result) if many else _fresh(result)
        return _write_out(result, out)

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"``{name.removesuffix('_copy')}`` of ``input``, copied into new memory (PyTorch's {name})."
    return copy


_VIEWS: dict[str, Callable[..., Any]] = {
    "alias_copy": lambda t: t.view_as(t),
    "as_strided_copy": lambda t, size, stride, storage_offset=None: t.as_strided(size, stride, storage_offset),
    "expand_copy": lambda t, size: t.expand(size),
    "permute_copy": lambda t, dims: t.permute(dims),
    "select_copy": lambda t, dim, index: t.select(dim, index),
    "slice_copy": lambda t, dim=0, start=None, end=None, step=1: t[(slice(None),) * (dim % max(t.dim(), 1))
                                                                    + (slice(start, end, step),)],
    "squeeze_copy": lambda t, dim=None: t.squeeze() if dim is None else t.squeeze(dim),
    "t_copy": lambda t: t.t(),
    "transpose_copy": lambda t, dim0, dim1: t.transpose(dim0, dim1),
    "unfold_copy": lambda t, dimension, size, step: t.unfold(dimension, size, step),
    "unsqueeze_copy": lambda t, dim: t.unsqueeze(dim),
    "view_copy": lambda t, size: t.view(size),
    "view_as_real_copy": lambda t: _torch().view_as_real(t),
    "view_as_complex_copy": lambda t: _torch().view_as_complex(t),
}
_MANY: dict[str, Callable[..., Any]] = {
    "split_copy": lambda t, split_size, dim=0: t.split(split_size, dim),
    "split_with_sizes_copy": lambda t, split_sizes, dim=0: t.split_with_sizes(split_sizes, dim),
    "unbind_copy": lambda t, dim=0: t.unbind(dim),
}


def _torch() -> Any:
    from torchplug._ops.torch_namespace import TORCH

    return TORCH


FUNCTIONS: dict[str, Any] = {
    **{name: _copy_variant(name, view) for name, view in _VIEWS.items()},
    **{name: _copy_variant(name, view, many=True) for name, view in _MANY.items()},
}
METHODS: dict[str, Any] = {}
