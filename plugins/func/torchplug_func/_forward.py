"""Forward-mode transforms: ``jvp``, ``jacfwd`` and ``linearize``, on the autograd plugin's forward-mode AD
(``torchplug.autograd.forward_ad``).

As the reverse-mode transforms do, they work on the physical tensors under vmap: each primal is made
batched at every active vmap level, and its tangent laid out like that physical primal, so the dual
tensors' tangents batch through the same batching rules as their primals.  Every call opens its own
forward-AD level (nested transforms nest levels).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torchplug

from . import _autodiff
from ._levels import add_missing_levels, expose, peel, rebuild
from ._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["jvp", "jacfwd", "linearize"]


def _forward_ad() -> Any:
    return torchplug.autograd.forward_ad


class _Level:
    """A forward-AD level for one transform call: nested when another is active (the plugin's level stack)."""

    def __enter__(self) -> int:
        fa = _forward_ad()
        enter = getattr(fa, "enter_level", None)  # the plugin's stack of levels (the public API refuses nesting)
        if enter is None:
            self.index = fa.enter_dual_level()
            self.lid = None
            return self.index
        self.lid = enter()
        self.index = len(fa.FW.levels) - 1
        return self.index

    def __exit__(self, *exc: Any) -> None:
        fa = _forward_ad()
        if self.lid is None:
            fa.exit_dual_level(level=self.index)
        else:
            fa.exit_level(self.lid)


def _check_tuple(name: str, value: Any, what: str) -> None:
    if not isinstance(value, tuple):
        raise RuntimeError(f"{name}: Expected {what} to be a tuple. E.g. it should be valid to call f(*{what}).")


def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False) -> Any:
    """``(func(*primals), jvp_out)``: the Jacobian of ``func`` at ``primals`` times ``tangents`` (forward mode),
    as ``torch.func.jvp`` (``(output, jvp_out, aux)`` with ``has_aux``)."""
    name = "jvp(f, primals, tangents)"
    _check_tuple(name, primals, "primals")
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{name}: Expected tangents to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if len(flat_p) != len(flat_t) or repr(spec_p) != repr(spec_t):
        raise RuntimeError(f"{name}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{spec_p} and tangents with structure {spec_t}")
    for p, t in zip(flat_p, flat_t):
        if not isinstance(p, torchplug.Tensor) or not isinstance(t, torchplug.Tensor):
            raise RuntimeError(f"{name}: Expected primals and tangents to only contain Tensors, got "
                               f"{type(p if not isinstance(p, torchplug.Tensor) else t)}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    fa = _forward_ad()
    if _forward_level_active(fa) or any(_autodiff._requires_grad_deep(p) for p in flat_p):
        # nested in another forward transform, or differentiated afterwards by reverse mode (an outer
        # transform, or the caller's backward()): the reverse-mode product keeps both
        return _jvp_by_double_vjp(func, primals, tangents, has_aux)
    _autodiff._DEPTH.value += 1
    try:
        with _Level() as index:
            duals = []
            for p, t in zip(flat_p, flat_t):
                p = add_missing_levels(p)
                phys, chain = peel(p)
                tan = t
                for level, bdim, size in reversed(chain):
                    tan = expose(tan, level, bdim, size)
                if not phys.is_contiguous():  # a tangent is laid out like its primal: no expanded (overlapping) primal
                    phys = phys.contiguous()
                tan = tan.to(phys.dtype)
                duals.append(rebuild(fa.make_dual(phys, tan, level=index), chain))
            output = func(*tree_unflatten(duals, spec_p))
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(f"{name}: output of function f should be a tuple: (output, aux) if has_aux "
                                       "is True")
                output, aux = output
            flat_out, out_spec = tree_flatten(output)
            primal_outs, tangent_outs = [], []
            for o in flat_out:
                if not isinstance(o, torchplug.Tensor):
                    raise RuntimeError(f"{name}: Expected f(*primals) to return only tensors, got unsupported type "
                                       f"{type(o)}")
                phys, chain = peel(o)
                primal, tangent = fa.unpack_dual(phys, level=index)
                if tangent is None:
                    tangent = torchplug.zeros_like(primal)
                primal_outs.append(rebuild(primal, chain))
                tangent_outs.append(rebuild(tangent, chain))
            if has_aux:
                flat_aux, aux_spec = tree_flatten(aux)
                aux = tree_unflatten([rebuild(fa.unpack_dual(peel(a)[0], level=index)[0], peel(a)[1])
                                      if isinstance(a, torchplug.Tensor) else a for a in flat_aux], aux_spec)
    finally:
        _autodiff._DEPTH.value -= 1
    keep = _autodiff._DEPTH.value > 0 or any(_autodiff._requires_grad_deep(p) for p in flat_p)
    primal_outs = [_autodiff._detach_keep_levels(o, keep) for o in primal_outs]
    tangent_outs = [_autodiff._detach_keep_levels(o, keep) for o in tangent_outs]
    result = (tree_unflatten(primal_outs, out_spec), tree_unflatten(tangent_outs, out_spec))
    return result + (aux,) if has_aux else result


def _forward_level_active(fa: Any) -> bool:
    state = getattr(fa, "FW", None)
    return bool(state is not None and state.levels)


def _jvp_by_double_vjp(func: Callable[..., Any], primals: tuple[Any, ...], tangents: tuple[Any, ...],
                       has_aux: bool) -> Any:
    """jvp inside another forward transform (the forward-AD plugin's ``make_dual`` drops the tangents an outer
    level gave the primal) or under reverse mode (its tangents are not all recorded for a backward pass): the
    product is taken in reverse mode, which carries both: ``vjp_fn`` is linear in its cotangent ``u``, and
    ``J t`` is the gradient w.r.t. ``u`` of ``<vjp_fn(u), t>``."""
    result = _autodiff.vjp(func, *primals, has_aux=has_aux)
    output, vjp_fn = result[0], result[1]
    flat_t, _ = tree_flatten(tangents)

    def pairing(u: Any) -> Any:
        grads = vjp_fn(u)
        flat_g, _ = tree_flatten(grads)
        total = None
        for g, t in zip(flat_g, flat_t):
            term = (g * t).sum()
            total = term if total is None else total + term
        return total

    zeros = tree_unflatten([torchplug.zeros_like(o) for o in tree_flatten(output)[0]], tree_flatten(output)[1])
    keep = _autodiff._DEPTH.value > 0 or any(_autodiff._requires_grad_deep(p) for p in tree_flatten(primals)[0])
    _autodiff._DEPTH.value += 1  # the inner grad keeps its graph: the product is differentiated afterwards
    try:
        jvp_out = _autodiff.grad(pairing)(zeros)
    finally:
        _autodiff._DEPTH.value -= 1
    jvp_out = tree_map(lambda t: _autodiff._detach_keep_levels(t, keep), jvp_out)
    return (output, jvp_out, result[2]) if has_aux else (output, jvp_out)


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian of ``func`` w.r.t. the arguments ``argnums`` by forward mode (vmap over jvp), as
    ``torch.func.jacfwd``: for each output, a tensor of shape ``output.shape + input.shape`` per input."""
    from ._vmap import vmap

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        _autodiff._check_argnums(argnums, len(args), "jacfwd")
        nums = argnums if isinstance(argnums, tuple) else (argnums,)
        nums = tuple(a % len(args) for a in nums)
        primals = tuple(args[a] for a in nums)
        flat_p, spec_p = tree_flatten(primals)
        sizes = [p.numel() for p in flat_p]
        total = sum(sizes)
        eye = torchplug.eye(total, dtype=flat_p[0].dtype, device=flat_p[0].device)
        basis = [b.reshape((total,) + tuple(p.shape)).to(p.dtype)
                 for b, p in zip(eye.split(sizes, 1) if len(sizes) > 1 else (eye,), flat_p)]

        def partial_func(*diff: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, diff):
                full[a] = d
            return func(*full)

        aux_box: list[Any] = []

        def push(*tans: Any) -> Any:
            out = jvp(partial_func, primals, tree_unflatten(list(tans), spec_p), has_aux=has_aux)
            if has_aux:
                aux_box.append(out[2])
                return out[1]
            return out[1]

        out_tans = vmap(push, randomness=randomness)(*basis)
        flat_o, out_spec = tree_flatten(out_tans)
        per_output = []
        for o in flat_o:  # (total, *out.shape) -> one (out.shape + in.shape) block per input
            out_shape = tuple(o.shape[1:])
            blocks = o.split(sizes, 0) if len(sizes) > 1 else (o,)
            jac = [b.movedim(0, -1).reshape(out_shape + tuple(p.shape)) for b, p in zip(blocks, flat_p)]
            per_input = tree_unflatten(jac, spec_p)
            per_output.append(per_input[0] if isinstance(argnums, int) else per_input)
        result = tree_unflatten(per_output, out_spec)
        if has_aux:
            primal_out = jvp(partial_func, primals, tuple(torchplug.zeros_like(p) for p in primals), has_aux=True)
            return result, primal_out[2]
        return result

    return wrapper


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the jvp of ``func`` at ``primals``, as
    ``torch.func.linearize`` (each call evaluates the forward-mode product at the fixed primals)."""
    output, _ = jvp(func, primals, tuple(torchplug.zeros_like(p) for p in primals))

    def jvp_fn(*tangents: Any) -> Any:
        flat_t, spec_t = tree_flatten(tangents)
        flat_p, spec_p = tree_flatten(primals)
        if repr(spec_t) != repr(spec_p):
            raise RuntimeError(f"Expected the tangents {spec_t} to have the same structure as the primals {spec_p}")
        for p, t in zip(flat_p, flat_t):
            if tuple(p.shape) != tuple(t.shape):
                raise RuntimeError(f"Expected tangent of shape {tuple(p.shape)}, got {tuple(t.shape)}")
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn
