"""Reverse-mode transforms: ``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` and ``hessian``.

They differentiate with the autograd plugin's reverse mode (``torchplug.autograd.grad``).  Under vmap,
autograd records on the physical tensors (the Batched key sits above autograd, as in PyTorch), so a
transform differentiates the physical values: every differentiated input is first made batched at every
active vmap level (an input that is not gets an expanded batch dim, so each sample has its own
gradient), and since the samples of a vmapped computation are independent, the gradient of the physical
output's sum gives each sample's gradient.  Nested transforms keep the graph (``create_graph``).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import torchplug

from ._batched import BatchedTensor
from ._kernels import InplaceOnUnbatched, without_batched_include
from ._levels import add_missing_levels, expose, hide, peel, rebuild
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jacrev", "hessian", "transform_depth"]


class _Depth(threading.local):
    value = 0


_DEPTH = _Depth()


def transform_depth() -> int:
    """How many autodiff transforms are running on this thread (a nested one keeps its graph)."""
    return _DEPTH.value


def _autograd() -> Any:
    return torchplug.autograd


class _Input:
    """A differentiated input: the physical leaf autograd sees and the batched tensor the function gets."""

    __slots__ = ("phys", "chain", "logical")

    def __init__(self, t: Any) -> None:
        t = add_missing_levels(t)
        p, chain = peel(t)
        if p.requires_grad and torchplug.is_grad_enabled():
            p = p.view_as(p)  # differentiable alias: an outer transform's graph continues through it
        else:
            # a fresh leaf; a view rather than detach(), so a dual tensor of an outer jvp keeps its tangent
            p = p.view_as(p).requires_grad_(True)
        self.phys = p
        self.chain = chain
        self.logical = rebuild(p, chain)


def _prepare(tree: Any, what: str) -> tuple[Any, list[_Input]]:
    leaves, spec = tree_flatten(tree)
    inputs = []
    new = []
    for leaf in leaves:
        if not isinstance(leaf, torchplug.Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        inp = _Input(leaf)
        inputs.append(inp)
        new.append(inp.logical)
    return tree_unflatten(new, spec), inputs


def _create_graph(inputs: list[_Input], original: list[Any]) -> bool:
    # keep the graph when an outer transform (or the caller's own autograd) will differentiate the result
    return _DEPTH.value > 1 or any(isinstance(t, torchplug.Tensor) and _requires_grad_deep(t) for t in original)


def _requires_grad_deep(t: Any) -> bool:
    while t.__class__ is BatchedTensor:
        t = t._bt_value
    return t.requires_grad


def _detach_keep_levels(t: Any, keep: bool) -> Any:
    """``t`` without this transform's graph (unless ``keep``), its vmap levels unchanged."""
    if keep or not isinstance(t, torchplug.Tensor):
        return t
    p, chain = peel(t)
    return rebuild(p.detach(), chain) if p.requires_grad else t


def _run_grad(phys_outs: list[Any], grad_outs: list[Any], inputs: list[_Input], create_graph: bool) -> list[Any]:
    """Gradients of the physical outputs w.r.t. the physical inputs, wrapped back at the inputs' levels."""
    diff = [(o, g) for o, g in zip(phys_outs, grad_outs) if o.requires_grad]
    if diff:
        # the graph holds physical tensors: the backward pass skips the Batched key (batched cotangents
        # of an enclosing vmap still reach it through their own key set)
        with without_batched_include():
            got = _autograd().grad([o for o, _ in diff], [i.phys for i in inputs], [g for _, g in diff],
                                   retain_graph=True, create_graph=create_graph, allow_unused=True)
    else:
        got = [None] * len(inputs)
    result = []
    for inp, g in zip(inputs, got):
        if g is None:
            g = torchplug.zeros_like(inp.phys)
        elif not create_graph:
            g = g.detach() if g.requires_grad else g
        for level, bdim, _ in inp.chain:
            g = hide(g, level, bdim)
        result.append(g)
    return result


# ---- grad / grad_and_value ---------------------------------------------------------------------------
def _check_argnums(argnums: Any, n: int, name: str) -> None:
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not isinstance(argnums, (int, tuple)) or isinstance(argnums, bool) or not nums:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    if isinstance(argnums, tuple) and len(set(a % n for a in argnums)) != len(argnums):
        raise RuntimeError(f"argnums must be unique, got {argnums}")


def grad_and_value(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """``func``'s gradient w.r.t. the arguments ``argnums`` and its value, as ``torch.func.grad_and_value``.

    ``func`` must return a scalar tensor (or ``(scalar, aux)`` with ``has_aux``); the result is
    ``(grads, value)`` or ``((grads, (value, aux)))`` as torch's: ``(grads, (value, aux))``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _check_argnums(argnums, len(args), "grad_and_value")
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        nums = tuple(a % len(args) for a in nums)
        _DEPTH.value += 1
        try:
            with torchplug.enable_grad():
                new_args = list(args)
                all_inputs: list[list[_Input]] = []
                for a in nums:
                    new_args[a], inputs = _prepare(args[a], "grad_and_value(f)(*args)")
                    all_inputs.append(inputs)
                output = func(*new_args, **kwargs)
                aux = None
                if has_aux:
                    if not (isinstance(output, tuple) and len(output) == 2):
                        raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                           "(output, aux) if has_aux is True")
                    output, aux = output
                if not isinstance(output, torchplug.Tensor):
                    raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
                if output.dim() != 0:
                    raise RuntimeError(
                        "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                        f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
                flat_inputs = [i for group in all_inputs for i in group]
                keep = _create_graph(flat_inputs, [args[a] for a in nums])
                phys_out, _ = peel(output)
                grads = _run_grad([phys_out], [torchplug.ones_like(phys_out)], flat_inputs, keep)
        finally:
            _DEPTH.value -= 1
        it = iter(grads)
        per_arg = []
        for a in nums:
            leaves, spec = tree_flatten(args[a])
            per_arg.append(tree_unflatten([next(it) for _ in leaves], spec))
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = _detach_keep_levels(output, keep)
        if has_aux:
            return g, (value, tree_map(lambda t: _detach_keep_levels(t, keep), aux))
        return g, value

    return wrapper


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of ``func`` w.r.t. the arguments ``argnums``, as ``torch.func.grad`` (``(grads, aux)`` with
    ``has_aux``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return wrapper


# ---- vjp ----------------------------------------------------------------------------------------------
def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``), as ``torch.func.vjp``: ``vjp_fn(cotangents)``
    returns the vector-Jacobian products w.r.t. every primal (a tuple, one pytree per primal)."""
    _DEPTH.value += 1
    try:
        with torchplug.enable_grad():
            new_primals, inputs = _prepare(primals, "vjp(f, *primals)")
            output = func(*new_primals)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                       "if has_aux is True")
                output, aux = output
            flat_out, out_spec = tree_flatten(output)
            for o in flat_out:
                if not isinstance(o, torchplug.Tensor):
                    raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output "
                                       f"(got output = {output}) and only returns Tensors (got {type(o)})")
            keep = _create_graph(inputs, list(tree_flatten(primals)[0]))
            peeled = [peel(o) for o in flat_out]
    finally:
        _DEPTH.value -= 1
    primal_spec = tree_flatten(primals)[1]

    def vjp_fn(*cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None) -> tuple[Any, ...]:
        cts = cotangents[0] if len(cotangents) == 1 else cotangents
        flat_ct, ct_spec = tree_flatten(cts)
        if len(flat_ct) != len(flat_out):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {ct_spec}, primal output: {out_spec}")
        grad_outs = []
        for ct, o, (p, chain) in zip(flat_ct, flat_out, peeled):
            if tuple(ct.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {_torch_size(ct.shape)} and "
                                   f"output[0] has a shape of {_torch_size(o.shape)}.")
            g = ct
            for level, bdim, size in reversed(chain):
                g = expose(g, level, bdim, size)
            grad_outs.append(g)
        _DEPTH.value += 1
        try:
            with torchplug.enable_grad():
                grads = _run_grad([p for p, _ in peeled], grad_outs, inputs,
                                  keep or bool(create_graph) or _DEPTH.value > 1)
        finally:
            _DEPTH.value -= 1
        return tree_unflatten(grads, primal_spec)

    out = tree_unflatten([_detach_keep_levels(o, keep) for o in flat_out], out_spec)
    if has_aux:
        return out, vjp_fn, tree_map(lambda t: _detach_keep_levels(t, keep), aux)
    return out, vjp_fn


def _torch_size(shape: Any) -> str:
    return f"torch.Size([{', '.join(str(int(s)) for s in shape)}])"


# ---- jacrev / hessian ---------------------------------------------------------------------------------
def _basis(flat_out: list[Any]) -> tuple[int, list[Any]]:
    """One-hot cotangents: row ``k`` of the stacked basis selects output element ``k`` (all outputs together)."""
    sizes = [o.numel() for o in flat_out]
    total = sum(sizes)
    ref = flat_out[0]
    eye = torchplug.eye(total, dtype=ref.dtype, device=ref.device)
    parts = []
    start = 0
    for o, n in zip(flat_out, sizes):
        parts.append(eye[:, start:start + n].reshape((total,) + tuple(o.shape)).to(o.dtype))
        start += n
    return total, parts


def _batched_vjp(vjp_fn: Any, basis: list[Any], total: int, chunk_size: int | None) -> Any:
    """``vjp_fn`` of every basis row: one vmapped backward, or one backward per row where a backward
    formula writes a batched gradient into a tensor it created unbatched (an in-place copy vmap refuses)."""
    from ._vmap import vmap

    call = lambda *b: vjp_fn(list(b) if len(b) > 1 else b[0])  # noqa: E731
    try:
        return vmap(call, chunk_size=chunk_size)(*basis)
    except InplaceOnUnbatched:
        pass
    per_row = [call(*[b[k] for b in basis]) for k in range(total)]
    flat = [tree_flatten(r) for r in per_row]
    spec = flat[0][1]
    return tree_unflatten([torchplug.stack([f[0][j] for f in flat]) for j in range(len(flat[0][0]))], spec)


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``func`` w.r.t. the arguments ``argnums`` by reverse mode (vmap over vjp), as
    ``torch.func.jacrev``: for each output, a tensor of shape ``output.shape + input.shape`` per input."""
    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _check_argnums(argnums, len(args), "jacrev")
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        nums = tuple(a % len(args) for a in nums)

        def partial_func(*diff: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, diff):
                full[a] = d
            return func(*full)

        primals = tuple(args[a] for a in nums)
        result = vjp(partial_func, *primals, has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        flat_out, out_spec = tree_flatten(output)
        total, basis = _basis(flat_out)
        rows = _batched_vjp(vjp_fn, basis, total, chunk_size)
        # rows: per primal, a pytree of (total, *input.shape) tensors
        flat_rows, rows_spec = tree_flatten(rows)
        per_output = []
        pieces = [r.split([o.numel() for o in flat_out]) if len(flat_out) > 1 else (r,) for r in flat_rows]
        for k, o in enumerate(flat_out):
            per_output.append(tree_unflatten(
                [p[k].reshape(tuple(o.shape) + tuple(r.shape[1:])) for p, r in zip(pieces, flat_rows)], rows_spec))
        # rows_spec is a tuple with one entry per primal: unpack for an int argnums
        if isinstance(argnums, int):
            per_output = [p[0] for p in per_output]
        jac = tree_unflatten(per_output, out_spec)
        if has_aux:
            return jac, result[2]
        return jac

    return wrapper


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Hessian of ``func`` w.r.t. the arguments ``argnums``, as ``torch.func.hessian``
    (``jacfwd(jacrev(func))``; reverse-over-reverse where forward mode is not available)."""
    try:
        from ._forward import jacfwd
    except ImportError:  # pragma: no cover - forward mode missing
        jacfwd = None
    outer = jacfwd if jacfwd is not None else jacrev
    return outer(jacrev(func, argnums), argnums)
