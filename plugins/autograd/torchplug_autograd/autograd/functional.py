"""``torchplug.autograd.functional``: jacobian, hessian, vjp, jvp, hvp and vhp of Python functions."""

from __future__ import annotations

from typing import Any

from torchplug._tensor.tensor import Tensor

from torchplug_autograd._engine import grad as _grad
from torchplug_autograd.autograd.grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _T() -> Any:
    import torchplug

    return torchplug


def _as_tuple(x: Any, name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    if isinstance(x, tuple):
        for i, el in enumerate(x):
            if not isinstance(el, Tensor):
                raise TypeError(f"The {name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                                f"value at index {i} has type {type(el)}.")
        return True, x
    if isinstance(x, list):
        return True, tuple(x)
    if not isinstance(x, Tensor):
        raise TypeError(f"The {name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the given "
                        f"{name} has type {type(x)}.")
    return False, (x,)


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    if create_graph:
        return tuple(t if t.requires_grad else t.detach().requires_grad_(True) for t in inputs)
    return tuple(t.detach().requires_grad_(True) for t in inputs)


def _postprocess(x: Any, create_graph: bool) -> Any:
    if isinstance(x, tuple):
        return tuple(_postprocess(v, create_graph) for v in x)
    if isinstance(x, Tensor) and not create_graph:
        return x.detach()
    return x


def _autograd_grad(outputs: tuple[Any, ...], inputs: tuple[Tensor, ...], grad_outputs: tuple[Any, ...] | None,
                   create_graph: bool, retain_graph: bool | None = None) -> tuple[Any, ...]:
    outs, gos = [], []
    for i, o in enumerate(outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(None if grad_outputs is None else grad_outputs[i])
    if not outs:
        return (None,) * len(inputs)
    return _grad(outs, inputs, gos, retain_graph=retain_graph if retain_graph is not None else True,
                 create_graph=create_graph, allow_unused=True)


def _fill_zeros(grads: tuple[Any, ...], refs: tuple[Tensor, ...], strict: bool, what: str) -> tuple[Any, ...]:
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   f"not allowed in strict mode.")
            g = _T().zeros_like(r)
        out.append(g)
    return tuple(out)


def vjp(func: Any, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T J)."""
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _grad_preprocess(ins, create_graph)
        outputs = func(*ins)
        out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        if v is not None:
            _, vs = _as_tuple(v, "v", "vjp")
        else:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                                   "Tensor with a single element.")
            vs = None
        grads = _autograd_grad(outs, ins, vs, create_graph)
        grads = _fill_zeros(grads, ins, strict, "vjp")
    out = _postprocess(outs, create_graph)
    res = _postprocess(grads, create_graph)
    return (out if out_tuple else out[0]), (res if is_tuple else res[0])


def jvp(func: Any, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v) with the double-backward trick."""
    T = _T()
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _grad_preprocess(ins, create_graph)
        if v is not None:
            _, vs = _as_tuple(v, "v", "jvp")
        else:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                                   "single Tensor with a single element.")
            vs = (T.ones_like(ins[0]),)
        outputs = func(*ins)
        out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        dummies = tuple(T.zeros_like(o).requires_grad_(True) for o in outs)
        grads = _autograd_grad(outs, ins, dummies, create_graph=True)
        pairs = [(g, vv) for g, vv in zip(grads, vs) if g is not None and g.requires_grad]
        if pairs:
            jv = _grad([p[0] for p in pairs], list(dummies), [p[1] for p in pairs], retain_graph=True,
                       create_graph=create_graph, allow_unused=True)
        else:
            jv = (None,) * len(dummies)
        jv = _fill_zeros(tuple(jv), outs, strict, "jvp")
    out = _postprocess(outs, create_graph)
    res = _postprocess(jv, create_graph)
    return (out if out_tuple else out[0]), (res if out_tuple else res[0])


def jacobian(func: Any, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: output shape + input shape, nested per output/input."""
    T = _T()
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _grad_preprocess(ins, create_graph)
        outputs = func(*ins)
        out_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        jac: list[tuple[Any, ...]] = []
        for o in outs:
            rows: list[list[Any]] = [[] for _ in ins]
            flat = o.reshape(-1)
            for k in range(flat.numel()):
                if flat.requires_grad:
                    gs = _grad([flat[k]], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = (None,) * len(ins)
                for j, (g, x) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {len(jac)} of the user-provided function is independent of "
                                               f"input {j}. This is not allowed in strict mode.")
                        g = T.zeros_like(x)
                    rows[j].append(g)
            per_input = []
            for j, x in enumerate(ins):
                if rows[j]:
                    stacked = T.stack(rows[j])
                else:
                    stacked = T.zeros([0] + list(x.shape), dtype=x.dtype)
                per_input.append(stacked.reshape(list(o.shape) + list(x.shape)))
            jac.append(tuple(per_input))
    res = _postprocess(tuple(jac), create_graph)
    if out_tuple:
        return res if is_tuple else tuple(r[0] for r in res)
    return res[0] if is_tuple else res[0][0]


def hessian(func: Any, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def jac_func(*xs: Any) -> Any:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        return jacobian(func, xs, create_graph=True, strict=strict)  # a tuple: one gradient per input

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict)
    return res if is_tuple else res[0][0]


def vhp(func: Any, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), v^T H)."""
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "vhp")
        ins = _grad_preprocess(ins, create_graph)
        _, vs = _as_tuple(v, "v", "vhp") if v is not None else (False, (_T().ones_like(ins[0]),))
        out = func(*ins)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to vhp should return a single Tensor with a single element")
        jac = _autograd_grad((out,), ins, None, create_graph=True)
        jac = tuple(j for j in jac)
        pairs = [(j, vv) for j, vv in zip(jac, vs) if j is not None and j.requires_grad]
        if pairs:
            res = _grad([p[0] for p in pairs], ins, [p[1] for p in pairs], retain_graph=True,
                        create_graph=create_graph, allow_unused=True)
        else:
            res = (None,) * len(ins)
        res = _fill_zeros(tuple(res), ins, strict, "vhp")
    o = _postprocess(out, create_graph)
    r = _postprocess(res, create_graph)
    return o, (r if is_tuple else r[0])


def hvp(func: Any, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), H v) (equal to v^T H for the symmetric Hessians of twice-differentiable functions)."""
    return vhp(func, inputs, v, create_graph, strict)
