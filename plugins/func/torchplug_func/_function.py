"""``torchplug.autograd.Function`` under ``vmap``: its ``vmap`` staticmethod, or the rule PyTorch generates
for ``generate_vmap_rule = True`` (see PyTorch's "Extending torch.func with autograd.Function"); and a
custom op's rule from ``torch.library.register_vmap``, which takes the same ``(info, in_dims, *args)``.

``Function.apply`` hands a call with a batched argument to :func:`batched_apply`.  The batch dim of the
highest level is taken off every argument (``in_dims`` says where it was), the rule runs on those values
at the levels below, and its outputs get the batch dim back at ``out_dims``.

A generated rule runs the Function as a new Function on the unbatched values: its ``forward``,
``setup_context``, ``backward`` and ``jvp`` are the original ones run under a fresh vmap level of the
same size (so autograd, which records on the values, sees one node whose backward is the vmapped
original backward).  ``setup_context`` gets a ctx that stores the values of what it saves together
with their batch dims, and hands them back batched to ``backward``/``jvp``.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import torchplug

from ._batched import BatchedTensor, find_level, max_level, pop_level, push_level, unwrap, wrap

__all__ = ["VmapInfo", "batched_apply", "install", "custom_op_vmap", "run_custom_op_vmap"]

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """The ``info`` a ``vmap`` staticmethod gets: the size of the mapped dim and vmap's randomness."""

    batch_size: int
    randomness: str


def install() -> None:
    """Route ``Function.apply`` calls with batched arguments here (the autograd plugin may be absent)."""
    function = getattr(getattr(torchplug, "autograd", None), "function", None)
    if function is not None and getattr(function, "BATCHED_APPLY", False) is None:
        function.BATCHED_APPLY = batched_apply


def _has_custom_vmap(cls: Any, base: Any) -> bool:
    return getattr(cls, "vmap", None) is not getattr(base, "vmap", None)


def batched_apply(cls: Any, base: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.apply(*args, **kwargs)`` with a batched argument (``base`` is ``autograd.Function``);
    ``NotImplemented`` when no positional argument is batched."""
    level = max_level(args)
    if level == 0:
        return NotImplemented
    if cls.setup_context is base.setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           f"...), it must override the setup_context staticmethod. {_DOCS}")
    custom = _has_custom_vmap(cls, base)
    if custom and cls.generate_vmap_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an "
                           "overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden "
                           f"vmap staticmethod to avoid ambiguity. {_DOCS}")
    if not custom and not cls.generate_vmap_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                           f"override and implement the vmap staticmethod or set generate_vmap_rule=True. {_DOCS}")
    lv = find_level(level)
    info = VmapInfo(lv.batch_size, lv.randomness)
    values, in_dims = [], []
    for a in args:
        v, d = unwrap(a, level)
        values.append(v)
        in_dims.append(d)
    in_dims = tuple(in_dims)
    if custom:
        result = cls.vmap(info, in_dims, *values, **kwargs)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise RuntimeError(f"Expected the vmap staticmethod to have two returns, an output and out_dims with "
                               f"pytree structure compatible with the output. Got {type(result)}")
        out, out_dims = result
    else:
        out, out_dims = _generated(cls, base, info, in_dims, values, kwargs)
    return _wrap_outputs(cls, out, out_dims, level)


def custom_op_vmap(entry: Any) -> Any:
    """The CustomOpDef of ``entry`` if it has a vmap rule (``torch.library.register_vmap``), else None."""
    module = sys.modules.get("torchplug._library.custom_ops")
    if module is None:  # no custom op was ever defined
        return None
    opdef = module.lookup_custom_op(entry.name)
    return opdef if opdef is not None and opdef._vmap_fn is not None else None


def run_custom_op_vmap(opdef: Any, args: tuple[Any, ...], level: int) -> Any:
    """A custom op under vmap through its registered rule: ``rule(info, in_dims, *args, **kwargs)``."""
    lv = find_level(level)
    pos, kw = opdef._split_args(args)
    values, in_dims = [], []
    for a in pos:
        v, d = unwrap(a, level)
        values.append(v)
        in_dims.append(d)
    result = opdef._vmap_fn(VmapInfo(lv.batch_size, lv.randomness), tuple(in_dims), *values, **kw)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ValueError(f"{opdef._qualname}: the vmap rule must return a tuple (output, out_dims), got "
                         f"{type(result).__name__}")
    return _wrap_outputs(opdef._qualname, result[0], result[1], level)


def _wrap_outputs(name: Any, out: Any, out_dims: Any, level: int) -> Any:
    name = getattr(name, "__name__", name)
    if isinstance(out, tuple):
        dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(out)
        if len(dims) != len(out):
            raise RuntimeError(f"{name}.vmap: expected out_dims to have the structure of the output "
                               f"({len(out)} outputs), got {out_dims}")
        return tuple(_wrap_one(o, d, level) for o, d in zip(out, dims))
    return _wrap_one(out, out_dims, level)


def _wrap_one(o: Any, d: Any, level: int) -> Any:
    if d is None or not isinstance(o, torchplug.Tensor):
        return o
    return wrap(o, d, level)


# ---- the generated rule ----------------------------------------------------------------------------------------
class _BatchedCtx:
    """The ctx ``setup_context``/``backward``/``jvp`` see under the generated rule: tensors saved on it are
    stored unbatched with their batch dims and read back batched at the level that runs the method."""

    __slots__ = ("_ctx", "_level")

    def __init__(self, ctx: Any, level: int) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "_level", level)

    def _unbatch(self, tensors: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        pairs = [unwrap(t, self._level) if isinstance(t, torchplug.Tensor) else (t, None) for t in tensors]
        return tuple(p for p, _ in pairs), tuple(d for _, d in pairs)

    def _rebatch(self, values: tuple[Any, ...], dims: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(v if d is None else wrap(v, d, self._level) for v, d in zip(values, dims))

    def save_for_backward(self, *tensors: Any) -> None:
        values, dims = self._unbatch(tensors)
        self._ctx.save_for_backward(*values)
        self._ctx._vmap_saved_dims = dims

    def save_for_forward(self, *tensors: Any) -> None:
        values, dims = self._unbatch(tensors)
        self._ctx.save_for_forward(*values)
        self._ctx._vmap_forward_dims = dims

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._ctx.mark_non_differentiable(*self._unbatch(tensors)[0])

    def mark_dirty(self, *tensors: Any) -> None:
        self._ctx.mark_dirty(*self._unbatch(tensors)[0])

    def set_materialize_grads(self, value: bool) -> None:
        self._ctx.set_materialize_grads(value)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        ctx = self._ctx
        values = ctx.saved_tensors
        in_jvp = ctx.__dict__.get("_fw_saved") is not None
        dims = ctx.__dict__.get("_vmap_forward_dims" if in_jvp else "_vmap_saved_dims", ())
        return self._rebatch(values, dims + (None,) * (len(values) - len(dims)))

    def __setattr__(self, name: str, value: Any) -> None:
        # a tensor set directly on ctx (PyTorch advises save_for_backward) keeps its batch dim too
        if isinstance(value, BatchedTensor):
            v, d = unwrap(value, self._level)
            value = _Attr(v, d)
        setattr(self._ctx, name, value)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ctx, name)
        if isinstance(value, _Attr):
            return value.value if value.dim is None else wrap(value.value, value.dim, self._level)
        return value


class _Attr(NamedTuple):
    value: Any
    dim: Any


class _Level:
    """A fresh vmap level of ``size`` for one method of the generated Function."""

    def __init__(self, size: int, randomness: str) -> None:
        self.size, self.randomness = size, randomness

    def __enter__(self) -> int:
        self.lv, self.saved = push_level(self.size, self.randomness)
        return self.lv.level

    def __exit__(self, *exc: Any) -> None:
        pop_level(self.lv, self.saved)


def _to_dim(t: Any, level: int, dim: Any, size: int) -> Any:
    """A result computed at ``level`` as a value with its batch dim at ``dim``; None: summed over the batch
    (the gradient of an unbatched input), a result without the batch dim is expanded."""
    if not isinstance(t, torchplug.Tensor):
        return t
    v, d = unwrap(t, level)
    if dim is None:
        return t if d is None else v.sum(d)
    if d is None:
        return v.unsqueeze(dim).expand(*v.shape[:dim], size, *v.shape[dim:])
    return v if d == dim else v.movedim(d, dim)


def _generated(cls: Any, base: Any, info: VmapInfo, in_dims: tuple[Any, ...], values: list[Any],
               kwargs: dict[str, Any]) -> tuple[Any, Any]:
    n, randomness = info
    state: dict[str, Any] = {}

    def forward(*operands: Any) -> Any:
        with _Level(n, randomness) as level:
            batched = [o if d is None else wrap(o, d, level) for o, d in zip(operands, in_dims)]
            out = cls.forward(*batched, **kwargs)
            single = not isinstance(out, tuple)
            outs = (out,) if single else out
            flat = tuple(_to_dim(o, level, 0, n) for o in outs)
        state["single"] = single
        state["out_dims"] = tuple(0 if isinstance(o, torchplug.Tensor) else None for o in flat)
        return flat[0] if single else flat

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        outs = (output,) if state["single"] else output
        with _Level(n, randomness) as level:
            b_in = tuple(i if d is None else wrap(i, d, level) for i, d in zip(inputs, in_dims))
            b_out = tuple(o if d is None else wrap(o, d, level) for o, d in zip(outs, state["out_dims"]))
            cls.setup_context(_BatchedCtx(ctx, level), b_in, b_out[0] if state["single"] else b_out)

    def backward(ctx: Any, *grads: Any) -> Any:
        with _Level(n, randomness) as level:
            b_grads = [g if g is None or d is None else wrap(g, d, level) for g, d in zip(grads, state["out_dims"])]
            result = cls.backward(_BatchedCtx(ctx, level), *b_grads)
            single = not isinstance(result, tuple)
            result = (result,) if single else result
            result = tuple(_to_dim(r, level, d, n) for r, d in zip(result, in_dims + (None,) * len(result)))
        return result[0] if single else result

    def jvp(ctx: Any, *tangents: Any) -> Any:
        with _Level(n, randomness) as level:
            b_tans = [t if t is None or d is None else wrap(t, d, level) for t, d in zip(tangents, in_dims)]
            result = cls.jvp(_BatchedCtx(ctx, level), *b_tans)
            single = not isinstance(result, tuple)
            result = (result,) if single else result
            result = tuple(_to_dim(r, level, 0, n) for r in result)
        return result[0] if single else result

    attrs = {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
             "backward": staticmethod(backward), "generate_vmap_rule": True}
    if cls.jvp is not base.jvp:
        attrs["jvp"] = staticmethod(jvp)
    generated = type(f"Vmapped{cls.__name__}", (base,), attrs)
    out = generated.apply(*values)
    return out, (state["out_dims"][0] if state["single"] else state["out_dims"])
