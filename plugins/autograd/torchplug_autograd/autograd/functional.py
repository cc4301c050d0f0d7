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


def _validate_v(v: tuple[Any, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _forward(func: Any, ins: tuple[Tensor, ...], vs: tuple[Tensor, ...],
             fn_name: str) -> tuple[bool, tuple[Any, ...], tuple[Any, ...]]:
    """(outputs are a tuple, primal outputs, output tangents or None) of ``func`` at ``ins`` along ``vs``,
    by forward AD in a level of its own (so it nests inside a user's ``dual_level``)."""
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    lid = enter_level()
    try:
        duals = []
        for x, v in zip(ins, vs):
            d = x.view_as(x)  # a dual view, as make_dual's (x keeps no tangent)
            set_tangent(d, lid, v if v._dtype is x._dtype else v.to(x._dtype))
            duals.append(d)
        out_tuple, outs = _as_tuple(func(*duals), "outputs of the user-provided function", fn_name)
        tangents = tuple(tangent_of(o, lid) for o in outs)
    finally:
        exit_level(lid)
    return out_tuple, outs, tangents


def jvp(func: Any, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(inputs), J v), computed with forward-mode AD (``torchplug.autograd.forward_ad``).

    With ``create_graph`` the result is differentiable with respect to the inputs and ``v``; with
    ``strict`` an output that does not depend on the inputs raises, as in PyTorch.
    """
    T = _T()
    is_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
    ins = tuple(x if create_graph else x.detach() for x in ins)
    if v is not None:
        _, vs = _as_tuple(v, "v", "jvp")
        vs = tuple(x if create_graph else x.detach() for x in vs)
        _validate_v(vs, ins, is_tuple)
    else:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        vs = (T.ones_like(ins[0]),)
    with enable_grad():
        out_tuple, outs, tangents = _forward(func, ins, vs, "jvp")
    jv = []
    for i, (o, t) in enumerate(zip(outs, tangents)):
        if t is None:
            if strict:  # no tangent: the output does not depend on the inputs at all
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when running "
                                   "in strict mode.")
            t = T.zeros_like(o)
        jv.append(t)
    out = _postprocess(outs, create_graph)
    res = _postprocess(tuple(jv), create_graph)
    return (out if out_tuple else out[0]), (res if out_tuple else res[0])


def jacobian(func: Any, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: output shape + input shape, nested per output/input.

    ``strategy="forward-mode"`` computes it column by column with forward AD (one jvp per input
    element); as in PyTorch it needs ``vectorize=True`` and refuses ``create_graph`` and ``strict``.
    """
    T = _T()
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more outputs '
            'than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` are not "
                "supported together (yet). Please either set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        return _jacfwd(func, inputs, strict, vectorize)
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


def _jacfwd(func: Any, inputs: Any, strict: bool, vectorize: bool) -> Any:
    """The forward-mode Jacobian: one jvp per standard basis vector of the inputs."""
    T = _T()
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                  "implemented for `vectorize=True`.")
    is_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    columns: list[list[list[Any]]] = []  # per input j: per element k: the output tangents
    outs: tuple[Any, ...] = ()
    out_tuple = False
    for j, x in enumerate(ins):
        cols = []
        for k in range(x.numel()):
            e = T.zeros(x.numel(), dtype=x.dtype, device=x.device)
            e[k] = 1
            vs = tuple(e.reshape(x.shape) if i == j else T.zeros_like(y) for i, y in enumerate(ins))
            with enable_grad():
                out_tuple, outs, tangents = _forward(func, ins, vs, "jacobian")
            cols.append([T.zeros_like(o) if t is None else t.detach() for o, t in zip(outs, tangents)])
        columns.append(cols)
    if not ins or not outs:
        with enable_grad():
            out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
    jac: Any = []
    for i, o in enumerate(outs):
        per_input = []
        for j, x in enumerate(ins):
            if columns[j]:
                stacked = T.stack([col[i] for col in columns[j]], dim=-1)
            else:
                stacked = T.zeros(list(o.shape) + [0], dtype=o.dtype)
            per_input.append(stacked.reshape(list(o.shape) + list(x.shape)))
        jac.append(per_input)
    # PyTorch's forward-mode nesting: lists (per output, per input) unpacked where not tuples
    if not is_tuple:
        jac = tuple(el[0] for el in jac)
    return jac if out_tuple else jac[0]


def hessian(func: Any, inputs: Any, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function (the outer Jacobian in forward mode is forward-over-reverse)."""
    is_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def jac_func(*xs: Any) -> Any:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element")
        if outer_jacobian_strategy == "forward-mode":
            # the dual inputs must not be detached by the inner jacobian's preprocessing
            xs = tuple(x.requires_grad_(True) for x in xs)
        return jacobian(func, xs, create_graph=True, strict=strict)  # a tuple: one gradient per input

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
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
    """(func(inputs), H v) by forward-over-reverse: the tangent of the gradient along ``v``."""
    from torchplug_autograd._forward import enter_level, exit_level, set_tangent, tangent_of

    T = _T()
    is_tuple, ins = _as_tuple(inputs, "inputs", "hvp")
    if v is not None:
        _, vs = _as_tuple(v, "v", "hvp")
        vs = tuple(x if create_graph else x.detach() for x in vs)
        _validate_v(vs, ins, is_tuple)
    else:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        vs = (T.ones_like(ins[0]),)
    with enable_grad():
        ins = _grad_preprocess(ins, create_graph)
        lid = enter_level()
        try:
            duals = []
            for x, vv in zip(ins, vs):
                d = x.view_as(x)
                set_tangent(d, lid, vv if vv._dtype is x._dtype else vv.to(x._dtype))
                duals.append(d)
            out = func(*duals)
            out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hvp")
            if out_tuple or not isinstance(out, Tensor):
                raise RuntimeError("The function given to hvp should return a single Tensor")
            if out.numel() != 1:
                raise RuntimeError("The Tensor returned by the function given to hvp should contain a single element")
            if strict and not out.requires_grad:
                raise RuntimeError("Output 0 of the user-provided function does not require gradients. The outputs "
                                   "must be computed in a differentiable manner from the input when running in strict "
                                   "mode.")
            jac = _autograd_grad((out,), tuple(duals), None, create_graph=True)
            res = []
            for i, (j, x) in enumerate(zip(jac, ins)):
                if strict and (j is None or not j.requires_grad):
                    raise RuntimeError(
                        "While computing the hessian, found that the jacobian of the user-provided function with "
                        f"respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                        "should ensure that your function is twice differentiable and that the jacobian depends on the "
                        "inputs (this would be violated by a linear function for example).")
                hv = tangent_of(j, lid) if j is not None else None
                if hv is None:
                    if strict:
                        raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                           "independent of the input. This is not allowed in strict mode. You should "
                                           "ensure that your function is thrice differentiable and that the hessian "
                                           "depends on the inputs.")
                    hv = T.zeros_like(x)
                res.append(hv)
            primal = out.view_as(out) if tangent_of(out, lid) is not None else out
        finally:
            exit_level(lid)
    o = _postprocess(primal, create_graph)
    r = _postprocess(tuple(res), create_graph)
    return o, (r if is_tuple else r[0])
