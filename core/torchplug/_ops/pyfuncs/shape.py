"""Python bindings for shape and indexing ops with varargs or several overloads (meshgrid, tensor_split,
repeat_interleave, index_fill, searchsorted, atleast_*, ...)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._ops.composites import resize_output, scalar_type_name
from torchplug._tensor.tensor import Tensor

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

HANDWRITTEN = {
    "broadcast_tensors", "tensor_split", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "roll", "repeat",
    "repeat_interleave", "index_fill", "searchsorted", "bucketize", "cartesian_prod", "block_diag",
}


def _varargs(args: tuple[Any, ...]) -> list[Any]:
    """``f(a, b)`` and ``f([a, b])`` / ``f((a, b))`` alike."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def _sizes(args: tuple[Any, ...]) -> Any:
    if len(args) == 1 and not isinstance(args[0], int) and not hasattr(args[0], "__index__"):
        return args[0]
    return args


def _given(op: str, arg: str, args: tuple[Any, ...]) -> Any:
    """``_sizes`` of a method taking ``*dims``; with none given, PyTorch's TypeError."""
    if not args:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{arg}"')
    return _sizes(args)


def _with_out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    resize_output(out, result.shape)
    A.copy_(out, result)
    return out


# ---- views ---------------------------------------------------------------------------------------------
def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    """Alias of :func:`movedim`."""
    return A["movedim.intlist"](input, source, destination)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Views of ``tensors`` expanded to their common broadcast shape."""
    return tuple(A.broadcast_tensors(_varargs(tensors)))


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape ``broadcast_tensors`` would give tensors of these shapes (no tensors needed)."""
    from torchplug._ops.composites import _broadcast_shapes
    from torchplug._tensor.tensor import Size

    out: list[int] = []
    for s in shapes:
        if isinstance(s, int) or hasattr(s, "__index__") and not hasattr(s, "__len__"):
            s = (int(s),)
        for v in s:
            if v < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {v}: {list(s)}")
        out = _broadcast_shapes(out, list(s))
    return Size(out)


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into ``n`` nearly equal parts, or at the given indices (views)."""
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype is not D.int64:
            raise RuntimeError(
                f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {scalar_type_name(arg.dtype)}"
            )
        if arg.dim() > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, "
                f"but got a tensor with {arg.dim()} dims"
            )
        arg = arg.item() if arg.dim() == 0 else arg.tolist()
    if isinstance(arg, int) or hasattr(arg, "__index__"):
        return tuple(A["tensor_split.sections"](input, int(arg), dim))
    return tuple(A["tensor_split.indices"](input, list(arg), dim))


def _split_along(name: str, min_dim: int, dim_of: Callable[[Tensor], int]) -> Callable[..., tuple[Tensor, ...]]:
    def split(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
        n = input.dim()
        if n < min_dim:
            raise RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor with {n} dimensions!"
            )
        d = dim_of(input)
        if isinstance(indices_or_sections, int):
            size = input.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(
                    f"torch.{name} attempted to split along dimension {d}, but the size of the dimension {size} is not "
                    f"divisible by the split_size {indices_or_sections}!"
                )
        return tensor_split(input, indices_or_sections, d)

    split.__name__ = name
    split.__doc__ = f"``tensor_split`` along dimension {name[0]} (numpy's ``{name}``)."
    return split


hsplit = _split_along("hsplit", 1, lambda t: 0 if t.dim() == 1 else 1)
vsplit = _split_along("vsplit", 2, lambda t: 0)
dsplit = _split_along("dsplit", 3, lambda t: 2)


def meshgrid(*tensors: Tensor, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors (``indexing='ij'`` matrix or ``'xy'`` Cartesian order)."""
    if indexing is None:
        warnings.warn(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
            UserWarning, stacklevel=2,
        )
        indexing = "ij"
    return tuple(A["meshgrid.indexing"](_varargs(tensors), indexing=indexing))


def _atleast(n: int) -> Callable[..., Any]:
    op = A[f"atleast_{n}d"]

    def atleast(*tensors: Tensor) -> Any:
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return op(tensors[0])
        return tuple(op(t) for t in _varargs(tensors))

    atleast.__name__ = f"atleast_{n}d"
    atleast.__doc__ = f"Views with at least {n} dimensions (one tensor, or a tuple for several)."
    return atleast


# ---- copies ------------------------------------------------------------------------------------------------
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Rotate elements along ``dims`` (the flattened tensor when None) by ``shifts``."""
    return A.roll(input, shifts, () if dims is None else dims)


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times (an int or a tensor of per-element counts)."""
    if repeats is None:
        return A["repeat_interleave.Tensor"](input, output_size=output_size)
    if isinstance(repeats, Tensor):
        return A["repeat_interleave.self_Tensor"](input, repeats, dim, output_size=output_size)
    return A["repeat_interleave.self_int"](input, repeats, dim, output_size=output_size)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors, one row per combination."""
    return A.cartesian_prod(_varargs(tensors))


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix from the given (0-, 1- or 2-D) tensors."""
    return A.block_diag(_varargs(tensors))


def _tri_indices(name: str) -> Callable[..., Tensor]:
    op = A[name]

    def indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None, layout: Any = None,
                pin_memory: bool | None = False) -> Tensor:
        return op(row, col, offset, dtype=dtype or D.int64, device=device)

    indices.__name__ = name
    indices.__doc__ = f"The 2 x N coordinates of the {'lower' if name.startswith('tril') else 'upper'} triangle of a row x col matrix."
    return indices


# ---- indexing ------------------------------------------------------------------------------------------------
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Fill the slices ``index`` along ``dim`` with ``value`` (number or 0-dim tensor)."""
    if isinstance(value, Tensor):
        return A["index_fill.int_Tensor"](input, dim, index, value)
    return A["index_fill.int_Scalar"](input, dim, index, value)


def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return A["index_fill_.int_Tensor"](self, dim, index, value)
    return A["index_fill_.int_Scalar"](self, dim, index, value)


def _as_tensor_like(value: Any, like: Tensor) -> Tensor:
    from torchplug._tensor.creation import scalar_tensor

    return scalar_tensor(value, device=like.device)


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None, out: Tensor | None = None) -> Tensor:
    """Indices where ``input`` would be inserted into the innermost dim of ``sorted_sequence``."""
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, sorted_sequence)
    if out is not None:
        return A["searchsorted.Tensor_out"](sorted_sequence, input, out_int32=out_int32, right=right, side=side,
                                            sorter=sorter, out=out)
    return A["searchsorted.Tensor"](sorted_sequence, input, out_int32=out_int32, right=right, side=side, sorter=sorter)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    """The bucket of each element of ``input`` given 1-D ``boundaries``."""
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, boundaries)
    if out is not None:
        return A["bucketize.Tensor_out"](input, boundaries, out_int32=out_int32, right=right, out=out)
    return A["bucketize.Tensor"](input, boundaries, out_int32=out_int32, right=right)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "moveaxis": moveaxis,
    "broadcast_tensors": broadcast_tensors,
    "broadcast_shapes": broadcast_shapes,
    "tensor_split": tensor_split,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "meshgrid": meshgrid,
    "atleast_1d": _atleast(1),
    "atleast_2d": _atleast(2),
    "atleast_3d": _atleast(3),
    "roll": roll,
    "repeat_interleave": repeat_interleave,
    "cartesian_prod": cartesian_prod,
    "block_diag": block_diag,
    "tril_indices": _tri_indices("tril_indices"),
    "triu_indices": _tri_indices("triu_indices"),
    "index_fill": index_fill,
    "searchsorted": searchsorted,
    "bucketize": bucketize,
}

METHODS: dict[str, Any] = {
    "moveaxis": moveaxis,
    "flip": lambda self, *dims: A.flip(self, _given("flip", "dims", dims)),
    "tile": lambda self, *dims: A.tile(self, _given("tile", "dims", dims)),
    "repeat": lambda self, *sizes: A.repeat(self, _given("repeat", "repeats", sizes)),
    "roll": lambda self, shifts, dims=None: roll(self, shifts, dims),
    "repeat_interleave": lambda self, repeats=None, dim=None, *, output_size=None: repeat_interleave(
        self, repeats, dim, output_size=output_size),
    "tensor_split": tensor_split,
    "hsplit": hsplit,
    "vsplit": vsplit,
    "dsplit": dsplit,
    "index_fill": index_fill,
    "index_fill_": _index_fill_,
    "unflatten": lambda self, dim, sizes: A.unflatten(self, dim, sizes),
    "broadcast_to": lambda self, size: A.broadcast_to(self, size),
}
