"""The jvp of each op, derived from its backward rule (see ``_forward`` for the four strategies).

A strategy is ``fn(args, result, tangents) -> tangent`` (a tuple for multi-output ops, a list for
list outputs), where ``args`` are the op's arguments in schema order and ``tangents`` holds one
entry per differentiable input (``None`` where the input has no tangent; a tuple for list inputs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._dispatch.dispatcher import OperatorEntry
from torchplug._tensor.tensor import Tensor

from ._forward import positional_caller
from ._graph import alias_of, autograd_bit
from ._jvp_rules import JVP_DECOMPOSITIONS, JVP_RULES, LINEAR
from ._rules import Rule

__all__ = ["strategy_for", "strategy_kind"]


def _T() -> Any:
    import torchplug

    return torchplug


def strategy_kind(entry: OperatorEntry, rule: Rule) -> str:
    """'rule', 'decomposition', 'linear', 'elementwise' or 'double_vjp': how this op's tangent is computed."""
    name = entry.name
    if name in JVP_RULES:
        return "rule"
    if name in JVP_DECOMPOSITIONS:
        return "decomposition"
    rets = entry.schema.returns
    if name in LINEAR or (len(rets) == 1 and rets[0].alias is not None and not rets[0].alias.is_write):
        return "linear"
    if "pointwise" in entry.tags and len(rets) == 1:
        return "elementwise"
    return "double_vjp"


def strategy_for(entry: OperatorEntry, rule: Rule, diff: list[int], saver: Callable[..., Any]) -> Callable[..., Any]:
    """The strategy function of ``entry`` (``saver`` computes the backward rule's saved values)."""
    kind = strategy_kind(entry, rule)
    if kind == "rule":
        return JVP_RULES[entry.name]
    if kind == "decomposition":
        return _decomposition(JVP_DECOMPOSITIONS[entry.name])
    if kind == "linear":
        return _linear(entry, diff)
    if kind == "elementwise":
        return _elementwise(rule, len(diff), saver, _double_vjp(entry, rule, diff, saver))
    return _double_vjp(entry, rule, diff, saver)


def _zeros_for(x: Any) -> Any:
    if isinstance(x, Tensor):
        return _T().zeros_like(x)
    return 0 if x is not None else None


def _decomposition(decomp: Callable[..., Any]) -> Callable[..., Any]:
    """Run the op's primitive re-expression on the dual inputs (``make_forward`` keeps the level on)."""

    def decomposition(args: tuple[Any, ...], result: Any, tans: list[Any]) -> Any:
        return decomp(args)

    decomposition.reenter = True  # type: ignore[attr-defined]
    return decomposition


def _linear(entry: OperatorEntry, diff: list[int]) -> Callable[..., Any]:
    """The op itself on the tangents (zeros for inputs without one): the jvp of a linear op."""
    call = positional_caller(entry)
    lists = [entry.schema.arguments[i].type.is_list for i in diff]

    def linear(args: tuple[Any, ...], result: Any, tans: list[Any]) -> Any:
        a = list(args)
        for i, is_list, t in zip(diff, lists, tans):
            if is_list:
                ts = t if t is not None else (None,) * len(args[i])
                a[i] = [tt if tt is not None else _zeros_for(x) for x, tt in zip(args[i], ts)]
            else:
                a[i] = t if t is not None else _zeros_for(args[i])
        return call(*a)

    return linear


def _elementwise(rule: Rule, n_diff: int, saver: Callable[..., Any],
                 complex_route: Callable[..., Any]) -> Callable[..., Any]:
    """PyTorch's ``auto_element_wise``: the backward formula applied to each input's tangent, summed.

    For real values a pointwise op's Jacobian is diagonal, hence symmetric, so this is ``J t``. For
    complex ones ``conj(J^H conj(t))`` equals ``J t`` only where the op is holomorphic (not for sgn,
    say): complex calls take ``complex_route`` (the double vjp), correct for every op.
    """
    fn = rule.fn
    needs_for = [tuple(k == j for k in range(n_diff)) for j in range(n_diff)]

    def elementwise(args: tuple[Any, ...], result: Tensor, tans: list[Any]) -> Any:
        if result._dtype.is_complex or any(t is not None and t._dtype.is_complex for t in tans):
            return complex_route(args, result, tans)
        saved, _ = saver(args[0], result, *args)
        shape = result._data.shape
        total = None
        for j, t in enumerate(tans):
            if t is None:
                continue
            if t._data.shape != shape:
                t = t.expand(shape)
            out = fn(needs_for[j], t, *saved)[j]
            if out is None or out is False:
                continue
            total = out if total is None else total + out
        return total

    return elementwise


def _without_history(a: Any) -> Any:
    """``a`` (or each tensor of a list) without reverse-mode history, keeping its tangents."""
    if isinstance(a, (list, tuple)):
        return type(a)(_without_history(x) for x in a)
    if not (isinstance(a, Tensor) and a._requires_grad):
        return a
    h = alias_of(a)
    fw = a.__dict__.get("_fw")
    if fw:
        h.__dict__["_fw"] = fw
        h._keyset |= autograd_bit(h._keyset)
    return h


def _double_vjp(entry: OperatorEntry, rule: Rule, diff: list[int], saver: Callable[..., Any]) -> Callable[..., Any]:
    """``J t`` as the gradient of ``<backward(u), t>`` with respect to the output gradient ``u``."""
    from ._engine import grad as autograd_grad
    from ._state import FW, STATE, set_grad_mode

    fn = rule.fn
    rets = entry.schema.returns
    list_out = len(rets) == 1 and rets[0].type.is_list
    multi = len(rets) > 1
    diff_outs = set(rule.outputs) if rule.outputs is not None else None

    def double_vjp(args: tuple[Any, ...], result: Any, tans: list[Any]) -> Any:
        T = _T()
        outs = list(result) if (multi or list_out) else [result]
        prev = STATE.grad_enabled
        if not prev:
            # under no_grad nothing differentiates the tangent: the primals enter without history (an
            # input that requires grad must not reach a formula that refuses it)
            args = tuple(_without_history(a) for a in args)
            set_grad_mode(True)
        try:
            us = []
            for k, o in enumerate(outs):
                ok = (isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex)
                      and (diff_outs is None or k in diff_outs))
                # ones, not zeros: formulas skip output gradients that are zero (the result is linear in u)
                us.append(T.ones_like(o).requires_grad_(True) if ok else None)
            g = tuple(us) if (multi or list_out) else us[0]
            saved, _ = saver(args[0], result, *args)
            needs = tuple(t is not None for t in tans)
            grads = fn(needs, g, *saved)
            ys, vs = [], []
            for j, t in enumerate(tans):
                if t is None:
                    continue
                gj = grads[j]
                primal = args[diff[j]]
                pairs = zip(gj, primal, t) if isinstance(t, tuple) else ((gj, primal, t),)
                for gk, pk, tk in pairs:
                    if gk is None or gk is False or tk is None or not isinstance(gk, Tensor):
                        continue
                    if gk._data.shape != pk._data.shape:
                        gk = gk.sum_to_size(pk._data.shape)
                    if not gk.requires_grad:
                        continue  # independent of u: this input does not reach the outputs
                    if tk._dtype is not gk._dtype:
                        tk = tk.to(gk._dtype)
                    ys.append(gk)
                    vs.append(tk)
            live = [u for u in us if u is not None]
            if not ys or not live:
                return None
            # a differentiable result when something must differentiate it: reverse mode (an input or
            # tangent requires grad) or an outer forward level (nested jvp: its tangents ride the graph)
            create = (bool(FW.levels) or any(v._requires_grad for v in vs)
                      or any(getattr(x, "_requires_grad", False) for a in args
                             for x in (a if isinstance(a, (list, tuple)) else (a,))))
            jv = autograd_grad(ys, live, vs, retain_graph=create, create_graph=create, allow_unused=True)
        finally:
            if not prev:
                set_grad_mode(False)
        it = iter(jv)
        res = [next(it) if u is not None else None for u in us]
        if not create:
            res = [r.detach() if r is not None else None for r in res]
        return tuple(res) if multi else (res if list_out else res[0])

    return double_vjp
