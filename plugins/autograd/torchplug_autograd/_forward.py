"""Forward-mode AD inside the autograd kernels: dual levels, tangent storage and propagation.

As in PyTorch, forward AD is no dispatch key of its own: a tensor with a tangent carries the
``Autograd<Backend>`` bit, so its ops reach the autograd kernels, and each kernel, after running
the op below autograd, calls the op's forward function (built here once per op) when a dual level
is active.  Tangents live in the tensor's ``__dict__`` under ``_fw`` (level id -> tangent).

Levels: the public API allows one level at a time (PyTorch's), but levels are a stack so
``torchplug.func.jvp`` can nest them.  The forward function of an op handles the outermost level
first, each with that level (and the ones inside it) switched off while its tangent is computed:
the formula's own ops then propagate only the outer levels' tangents, and the output already has
its outer tangents when an inner level's formula reads it, so a nested jvp differentiates the
inner tangent computation (an inner tangent carries the mixed second-order term as its outer
tangent; an outer tangent carries nothing of the inner levels).

An op's tangent comes from one of five strategies, chosen once per op (``_jvp.strategy_for``):

- an explicit rule (``_jvp_rules.JVP_RULES``);
- a decomposition: the op recomputed in differentiable primitives on the dual inputs
  (``_jvp_rules.JVP_DECOMPOSITIONS``, for ops whose backward formula stops at second order);
- ``linear``: the op itself applied to the tangents (views, reductions such as sum, cat...): a view
  of a dual tensor has the same view of its tangent, as in PyTorch;
- ``elementwise``: the backward formula applied to the tangent (PyTorch's ``auto_element_wise``:
  for a diagonal Jacobian ``J t = conj(J^H conj(t))``);
- ``double_vjp``: the backward formula differentiated once more (``J t`` is the gradient of
  ``<J^H u, t>`` with respect to ``u``), correct for any op whose backward formula is differentiable.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from torchplug._dispatch.dispatcher import OperatorEntry
from torchplug._tensor.tensor import Tensor

from ._graph import autograd_bit
from ._state import FW, STATE, set_grad_mode

__all__ = ["FW", "tangent_of", "set_tangent", "enter_level", "exit_level", "make_forward", "attach",
           "positional_caller", "not_implemented_error",
           "make_forward_inplace", "write_tangent", "has_tangent"]


def enter_level() -> int:
    """Push a new level; returns its id."""
    lid = FW.next_id
    FW.next_id += 1
    FW.levels = FW.levels + [lid]
    FW.duals[lid] = []
    FW.on = FW.live = True
    _sync_grad_mask()
    return lid


def exit_level(lid: int) -> None:
    """Pop level ``lid`` (the innermost) and drop every tangent recorded at it."""
    FW.levels = [x for x in FW.levels if x != lid]
    FW.on = FW.live = bool(FW.levels)
    for ref in FW.duals.pop(lid, ()):
        t = ref()
        if t is None:
            continue
        d = t.__dict__.get("_fw")
        if d is not None:
            d.pop(lid, None)
            if not d:
                del t.__dict__["_fw"]
                if not t._requires_grad:  # the bit was there only to reach the forward functions
                    t._keyset &= ~autograd_bit(t._keyset)
    _sync_grad_mask()


def _sync_grad_mask() -> None:
    # Grad mode does not switch forward AD off (PyTorch's): while a level is active the autograd keys
    # stay in the TLS mask under no_grad, and the kernels then skip only the backward recording.
    set_grad_mode(STATE.grad_enabled)


def tangent_of(t: Any, lid: int) -> Any:
    """The tangent of ``t`` at level ``lid`` (None for numbers, None and tensors without one).

    A view without its own tangent whose base has one gets the same view of the base's tangent
    (PyTorch's forward grad of a view), cached on the view.
    """
    try:
        d = t.__dict__.get("_fw")
    except AttributeError:
        return None
    if d is not None:
        tan = d.get(lid)
        if tan is not None:
            return tan
    base = getattr(t, "_base", None)
    if base is None:
        return None
    nodiff = t.__dict__.get("_fw_nodiff")
    if nodiff is not None and lid in nodiff:  # unpack_dual's primal view shares no tangent at its level
        return None
    bt = tangent_of(base, lid)
    if bt is None:
        return None
    tan = view_like(bt, base, t)
    if tan is not None:
        set_tangent(t, lid, tan)
    return tan


def view_like(bt: Tensor, base: Tensor, view: Tensor) -> Tensor | None:
    """The view of ``bt`` (a tangent laid out as ``base``) that ``view`` is of ``base``."""
    if bt.stride() != base.stride() or bt._data.shape != base._data.shape:
        return None
    lo = view.storage_offset() - base.storage_offset()
    if lo < 0 or lo + _extent(view) > _extent(base):  # (a view reaching storage its base does not cover)
        return None
    return bt.as_strided(view._data.shape, view.stride(), lo + bt.storage_offset())


def _extent(t: Tensor) -> int:
    """The last storage element ``t`` reaches, relative to its offset (non-negative strides)."""
    if 0 in t._data.shape:
        return 0
    return sum((n - 1) * st for n, st in zip(t._data.shape, t.stride()))


def set_tangent(t: Tensor, lid: int, tan: Tensor) -> None:
    """Record ``tan`` as ``t``'s tangent at level ``lid``; ``t`` now reaches the autograd kernels."""
    d = t.__dict__.get("_fw")
    if d is None:
        d = t.__dict__["_fw"] = {}
        FW.duals[lid].append(weakref.ref(t))
    elif lid not in d:
        FW.duals[lid].append(weakref.ref(t))
    d[lid] = tan
    t._keyset |= autograd_bit(t._keyset)


def _fit(tan: Any, out: Tensor) -> Any:
    """The tangent cast and broadcast to ``out``'s dtype and shape (None for integer outputs)."""
    if tan is None or tan is False:
        return None
    dt = out._dtype
    if not (dt.is_floating_point or dt.is_complex):
        return None
    if tan._dtype is not dt:
        if tan._dtype.is_complex and not dt.is_complex:
            tan = tan.real  # a real output of a complex input: the real part of the tangent
        tan = tan.to(dt)
    if tan._data.shape != out._data.shape:
        tan = tan.expand(out._data.shape).clone()  # a tangent may be written in place later: no stride-0 dims
    stride = out.stride()
    if tan.stride() != stride and _non_overlapping(out):
        # laid out like its primal, as PyTorch keeps forward grads: ops that take explicit strides
        # (_reshape_alias, as_strided) apply the primal's geometry to the tangent
        import torchplug

        buf = torchplug.empty(_extent(out) + 1, dtype=tan._dtype, device=tan._device)
        tan = buf.as_strided(out._data.shape, stride, 0).copy_(tan)
    return tan


def _non_overlapping(t: Tensor) -> bool:
    """Whether no two elements of ``t`` share memory (gaps allowed, as in a strided view)."""
    reach = 0
    for st, n in sorted((st, n) for n, st in zip(t._data.shape, t.stride()) if n != 1):
        if st <= reach:
            return False
        reach += (n - 1) * st
    return True


def attach(result: Any, tan: Any, lid: int) -> None:
    """Give each floating output of ``result`` its tangent (``tan`` mirrors ``result``'s structure)."""
    if tan is None:
        return
    if isinstance(result, Tensor):
        t = _fit(tan, result)
        if t is not None:
            set_tangent(result, lid, t)
        return
    for r, t in zip(result, tan):
        if isinstance(r, Tensor):
            t = _fit(t, r)
            if t is not None:
                set_tangent(r, lid, t)


def not_implemented_error(name: str) -> NotImplementedError:
    short = name.split(".")[0]
    return NotImplementedError(
        f"Trying to use forward AD with {short} that does not support it because it has not been implemented yet. "
        "Add a jvp rule in torchplug_autograd/_jvp_rules.py or a backward rule in torchplug_autograd/_formulas.py.")


def positional_caller(entry: OperatorEntry) -> Callable[..., Any]:
    """Call ``entry``'s entry point (full dispatch) with every argument positionally, in schema order."""
    args = entry.schema.arguments
    npos = sum(1 for a in args if not a.kwarg_only)
    kwnames = [a.name for a in args if a.kwarg_only]
    call = entry.call
    if call is None:
        from torchplug._dispatch.dispatcher import DISPATCHER

        call = DISPATCHER.entry(entry.name).call
    if not kwnames:
        return call

    def caller(*a: Any) -> Any:
        return call(*a[:npos], **dict(zip(kwnames, a[npos:])))

    return caller


def make_forward(entry: OperatorEntry, strategy: Callable[..., Any], diff: list[int]) -> Callable[..., Any]:
    """``fwd(args, result)``: for each active level, the tangents of the differentiable inputs, the
    output tangent from ``strategy(args, result, tangents)``, attached to the outputs."""
    lists = tuple(entry.schema.arguments[i].type.is_list for i in diff)
    pairs = tuple(zip(diff, lists))
    reenter = getattr(strategy, "reenter", False)  # a decomposition run with this level on

    def fwd(args: tuple[Any, ...], result: Any) -> None:
        levels = FW.levels
        for pos in range(len(levels)):
            lid = levels[pos]
            tans = []
            found = False
            for i, is_list in pairs:
                a = args[i]
                if is_list:
                    tt = tuple(tangent_of(x, lid) for x in a) if a is not None else ()
                    found = found or any(x is not None for x in tt)
                    tans.append(tt if any(x is not None for x in tt) else None)
                else:
                    tt = tangent_of(a, lid)
                    found = found or tt is not None
                    tans.append(tt)
            if not found:
                continue
            FW.levels = levels[:pos + 1] if reenter else levels[:pos]
            FW.on = reenter or pos > 0
            try:
                out = strategy(args, result, tans)
                if reenter:
                    out = _tangents_of(out, lid)
                out = _own_tangents(out, tans, args, result)
            finally:
                FW.levels = levels
                FW.on = True
            attach(result, out, lid)

    fwd.__qualname__ = f"forward_ad[{entry.name}]"
    return fwd


def _own_tangents(out: Any, tans: list[Any], args: tuple[Any, ...], result: Any) -> Any:
    """``out`` with a copy in place of any input's tangent object a rule handed back as is (``sub`` of a
    constant returns ``self``'s tangent): an output that is not that input must not share its tangent, or an
    in-place op on the input would change the output's tangent too (PyTorch's outputs own theirs)."""
    inputs = []
    for t in tans:
        if isinstance(t, tuple):
            inputs.extend(x for x in t if x is not None)
        elif t is not None:
            inputs.append(t)

    def own(tan: Any, res: Any) -> Any:
        if tan is None or not any(tan is x for x in inputs) or any(res is a for a in args):
            return tan  # a fresh tangent, or an op that returns its input itself (which keeps its tangent)
        return tan.clone()

    if isinstance(out, (tuple, list)):
        results = result if isinstance(result, (tuple, list)) else (result,) * len(out)
        return type(out)(own(t, r) for t, r in zip(out, results))
    return own(out, result)


def _tangents_of(out: Any, lid: int) -> Any:
    if isinstance(out, (tuple, list)):
        return type(out)(tangent_of(o, lid) for o in out)
    return tangent_of(out, lid)


def make_forward_inplace(entry: OperatorEntry, strategy: Callable[..., Any], diff: list[int]) -> Callable[..., Any]:
    """``fwd(args, orig, self)`` for ``op_``: the tangent of the functional op at ``orig`` (self's value
    before the write) is written into self's tangent, so views of the tangent see it (PyTorch's
    in-place forward grad).  (In-place view ops such as ``t_`` are no ops of their own: the core's
    Python method adopts the view's metadata and tangent.)"""
    lists = tuple(entry.schema.arguments[i].type.is_list for i in diff)
    pairs = tuple(zip(diff, lists))

    def fwd(args: tuple[Any, ...], orig: Tensor, self: Tensor) -> None:
        levels = FW.levels
        rest = tuple(args[1:])
        for pos in range(len(levels)):
            lid = levels[pos]
            tans = []
            found = False
            for i, is_list in pairs:
                a = args[i]
                tt = tuple(tangent_of(x, lid) for x in a) if is_list else tangent_of(a, lid)
                if is_list and not any(x is not None for x in tt):
                    tt = None
                found = found or tt is not None
                tans.append(tt)
            if not found:
                continue
            FW.levels = levels[:pos]
            FW.on = pos > 0
            try:
                out = strategy((orig,) + rest, self, tans)
                write_tangent(self, out, lid)
            finally:
                FW.levels = levels
                FW.on = True

    fwd.__qualname__ = f"forward_ad_inplace[{entry.name}]"
    return fwd


def write_tangent(self: Tensor, new: Any, lid: int) -> None:
    """Make ``new`` the tangent of ``self`` after an in-place write (copied into the existing tangent,
    or into a zero tangent of the base when ``self`` is a view of a tensor without one)."""
    import torchplug

    if new is None:
        new = torchplug.zeros_like(self)
    new = _fit(new, self)
    if new is None:
        return
    cur = tangent_of(self, lid)
    if cur is not None:
        cur.copy_(new)
        return
    base = self._base
    if base is not None:
        bt = torchplug.empty_strided(base._data.shape, base.stride(), dtype=base._dtype, device=base._device).zero_()
        set_tangent(base, lid, bt)
        cur = view_like(bt, base, self)
        if cur is not None:
            set_tangent(self, lid, cur)
            cur.copy_(new)
            return
    if new._data.shape != self._data.shape or new.stride() != self.stride():
        new = new.clone()
    set_tangent(self, lid, new)


def has_tangent(args: tuple[Any, ...]) -> bool:
    """Whether any tensor in ``args`` (lists included) has a tangent at an active level."""
    for a in args:
        items = a if isinstance(a, (list, tuple)) else (a,)
        for x in items:
            if isinstance(x, Tensor):
                for lid in FW.levels:
                    if tangent_of(x, lid) is not None:
                        return True
    return False
