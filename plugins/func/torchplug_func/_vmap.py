"""``vmap``: map a function over a batch dimension of its inputs, running it once on batched tensors."""

from __future__ import annotations

import functools
from typing import Any, Callable

import torchplug

from . import _function
from ._batched import BatchedTensor, pop_level, push_level, wrap
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_FUNCTION_HOOK: list[bool] = []


def _name(func: Any) -> str:
    return getattr(func, "__name__", None) or repr(func)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` mapped over dimension ``in_dims`` of its inputs, as ``torch.vmap``.

    The returned function runs ``func`` once with tensors whose batch dimension is hidden (batched
    tensors); every op batches through its batching rule (or, for an op without one, a per-sample loop).
    ``in_dims``/``out_dims`` are ints, None, or (nested) tuples/lists/dicts matching the inputs/outputs;
    ``randomness`` is 'error', 'different' or 'same'; ``chunk_size`` runs the batch in chunks of that size.
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _vmap_call(func: Any, in_dims: Any, out_dims: Any, randomness: str, chunk_size: int | None,
               args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_prefix(in_dims, args, is_leaf=lambda x: x is None)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {args_spec}.")
    for arg, in_dim in zip(flat_args, flat_in_dims):
        if in_dim is not None and (not isinstance(in_dim, int) or isinstance(in_dim, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if in_dim is not None and not isinstance(arg, torchplug.Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if in_dim is not None and not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
    sizes = [arg.size(d) for arg, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes {sizes} "
                         "for the mapped dimension")
    batch_size = sizes[0]
    if chunk_size is None or chunk_size >= batch_size:
        return _flat_vmap(func, batch_size, flat_args, flat_in_dims, args_spec, out_dims, randomness, kwargs)
    # run chunk by chunk and concatenate the outputs along their out_dims
    dims = [None if d is None else d % a.dim() for a, d in zip(flat_args, flat_in_dims)]
    chunks = []
    state = torchplug.get_rng_state() if randomness == "same" else None
    for start in range(0, batch_size, chunk_size):
        if state is not None:
            torchplug.set_rng_state(state)  # 'same': every chunk draws what the first one drew
        length = min(chunk_size, batch_size - start)
        part = [a if d is None else a.narrow(d, start, length) for a, d in zip(flat_args, dims)]
        chunks.append(_flat_vmap(func, length, part, flat_in_dims, args_spec, out_dims, randomness, kwargs))
    flat_chunks = [tree_flatten(c) for c in chunks]
    out_spec = flat_chunks[0][1]
    flat_out_dims = broadcast_prefix(out_dims, chunks[0], is_leaf=lambda x: x is None)
    merged = []
    for k, od in enumerate(flat_out_dims):
        pieces = [fc[0][k] for fc in flat_chunks]
        merged.append(pieces[0] if od is None else torchplug.cat(pieces, od))
    return tree_unflatten(merged, out_spec)


def _flat_vmap(func: Any, batch_size: int, flat_args: list[Any], flat_in_dims: list[Any], args_spec: Any,
               out_dims: Any, randomness: str, kwargs: dict[str, Any]) -> Any:
    if not _FUNCTION_HOOK:
        _function.install()  # autograd.Function's vmap support, once the autograd plugin is loaded
        _FUNCTION_HOOK.append(True)
    lv, saved = push_level(batch_size, randomness)
    try:
        batched = [a if d is None else wrap(a, d, lv.level) for a, d in zip(flat_args, flat_in_dims)]
        outputs = func(*tree_unflatten(batched, args_spec), **kwargs)
    finally:
        pop_level(lv, saved)
    return _unwrap_outputs(func, outputs, out_dims, lv.level, batch_size)


def _unwrap_outputs(func: Any, outputs: Any, out_dims: Any, level: int, batch_size: int) -> Any:
    name = _name(func)
    flat_out, out_spec = tree_flatten(outputs)
    flat_out_dims = broadcast_prefix(out_dims, outputs, is_leaf=lambda x: x is None)
    if flat_out_dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {out_spec}.")
    result = []
    for out, od in zip(flat_out, flat_out_dims):
        if od is None:
            if out.__class__ is BatchedTensor and out._bt_level == level:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(out)
            continue
        if not isinstance(out, torchplug.Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. Did you "
                             "mean to set out_dims= to None for output?")
        if not isinstance(od, int) or isinstance(od, bool):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={od} for an output but out_dim "
                             "must be either an integer dimension or None.")
        if out.__class__ is BatchedTensor and out._bt_level == level:
            value, bdim = out._bt_value, out._bt_bdim
        else:  # the output does not depend on the batch: every sample gets the same value
            value, bdim = out.unsqueeze(0).expand((batch_size,) + tuple(out.shape)), 0
        rank = value.dim()
        if not -rank <= od < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {od})")
        result.append(value if bdim == od % rank else value.movedim(bdim, od))
    return tree_unflatten(result, out_spec)
