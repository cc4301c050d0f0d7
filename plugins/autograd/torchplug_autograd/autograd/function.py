"""``torchplug.autograd.Function``: user-defined ops with a hand-written backward."""

from __future__ import annotations

import functools
from typing import Any

from torchplug._tensor.tensor import Tensor

from torchplug_autograd import _graph as G
from torchplug_autograd import _views as V
from torchplug_autograd._forward import set_tangent, tangent_of
from torchplug_autograd._kernels import DIFF_DTYPES
from torchplug_autograd._state import FW, GLOBAL, STATE
from torchplug_autograd.autograd.grad_mode import no_grad

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]

# torchplug.func sets this to its vmap support for Functions (their vmap staticmethod or the generated rule):
# (cls, Function, args, kwargs) -> the result, or NotImplemented when no argument is batched
BATCHED_APPLY: Any = None


class FunctionCtx:
    """The ``ctx`` of ``forward``/``setup_context``/``backward`` (it is the graph node itself)."""

    def save_for_backward(self, *tensors: Any) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self._to_save_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        self._dirty = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)


class BackwardCFunction(G.Node, FunctionCtx):
    """The node (and ctx) of one ``Function.apply`` call."""

    _fn_cls: Any = None

    def __init__(self) -> None:
        G.Node.__init__(self)
        self._materialize = True
        self._to_save: tuple[Any, ...] = ()
        self._dirty: tuple[Any, ...] = ()
        self._non_differentiable: tuple[Any, ...] = ()
        self.needs_input_grad: tuple[bool, ...] = ()

    def name(self) -> str:
        return f"{self._fn_cls.__name__}Backward"

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        fw_saved = self.__dict__.get("_fw_saved")
        if fw_saved is not None:  # inside jvp: what save_for_forward saved
            return fw_saved
        return self._unpack(STATE.grad_enabled)

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        return self.saved_tensors

    def _apply(self, grads: list[Any], needs: tuple[bool, ...], create_graph: bool) -> Any:
        import torchplug

        n_out = self._n_out
        grads = list(grads) + [None] * (n_out - len(grads))
        if self._materialize:
            for k in range(n_out):
                if grads[k] is None:
                    shape, dtype = self._out_meta(k)
                    if dtype is not None:
                        grads[k] = torchplug.zeros(list(shape), dtype=dtype)
        cls = self._fn_cls
        result = cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        expected = len(self._next)
        if len(result) != expected:
            if len(result) > expected and all(r is None for r in result[expected:]):
                result = result[:expected]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {expected}, "
                    f"got {len(result)})")
        for i, (r, e) in enumerate(zip(result, self._next)):
            if r is not None and e is None and isinstance(r, Tensor) and self._input_was_tensor[i] is False:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position {i + 1}, but the "
                    "corresponding forward input was not a Variable")
        return result


class _FunctionMeta(type):
    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_fn_cls": cls, "_name": name + "Backward"})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Subclass with static ``forward`` and ``backward`` (and optionally ``setup_context``); call ``apply``."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import warnings

        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you "
            "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if BATCHED_APPLY is not None:
            out = BATCHED_APPLY(cls, Function, args, kwargs)
            if out is not NotImplemented:
                return out
        custom_setup = cls.setup_context is not Function.setup_context  # type: ignore[comparison-overlap]
        ctx = cls._backward_cls()
        is_tensor = [isinstance(a, Tensor) for a in args]
        ctx._input_was_tensor = is_tensor
        grad_on = STATE.grad_enabled
        ctx.needs_input_grad = tuple(bool(t and a._requires_grad) for t, a in zip(is_tensor, args))
        fw_tangents = _input_tangents(args) if FW.on else None
        levels = FW.levels
        if FW.live:  # forward sees plain tensors (PyTorch unwraps the dual inputs)
            FW.levels, FW.on = [], False
        try:
            with no_grad():
                if custom_setup:
                    outputs = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, outputs)
                else:
                    outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            if FW.live:
                FW.levels, FW.on = levels, bool(levels)
        if not (grad_on and any(ctx.needs_input_grad)):
            if fw_tangents:
                single = not isinstance(outputs, tuple)
                outs = [outputs] if single else list(outputs)
                ids = {id(a) for a in args if isinstance(a, Tensor)}
                outs = [G.alias_of(o) if isinstance(o, Tensor) and id(o) in ids else o for o in outs]
                _run_jvp(cls, ctx, args, outs, fw_tangents)
                return outs[0] if single else tuple(outs)
            return outputs
        edges = tuple(V.gradient_edge(a) if t and a._requires_grad else None for t, a in zip(is_tensor, args))
        ctx._next = edges
        single = not isinstance(outputs, tuple)
        outs = [outputs] if single else list(outputs)
        ctx._n_out = len(outs)
        non_diff = {id(t) for t in ctx._non_differentiable}
        dirty = {id(t) for t in ctx._dirty}
        inputs = {id(a) for a, t in zip(args, is_tensor) if t}
        meta = {}
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                meta[k] = ((), None)
                continue
            meta[k] = (o._data.shape, o._dtype)
            if id(o) in non_diff or o._dtype not in DIFF_DTYPES:
                continue
            if id(o) in dirty:
                from torchplug_autograd._kernels import check_inplace
                from torchplug_autograd._views import rebase_history

                check_inplace(o)
                rebase_history(o, ctx) if o._base is None else G.set_history(o, ctx, k)
                continue
            if id(o) in inputs:  # an input returned as is: its output is a new alias with this history
                o = G.alias_of(o)
                outs[k] = o
            G.set_history(o, ctx, k)
        ctx._shape, ctx._dtype = meta[0]
        ctx._extra = {"out_meta": meta}
        if GLOBAL.anomaly:
            from torchplug_autograd._kernels import _record_anomaly

            _record_anomaly(ctx)
        to_save = ctx._to_save
        if to_save:
            out_ids = {id(o): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
            saved, versions, result_slots, result_nr = [], [], [], {}
            for slot, t in enumerate(to_save):
                if t is None:
                    saved.append(None)
                    versions.append(None)
                elif id(t) in out_ids and t._grad_fn is ctx:
                    saved.append(G.alias_of(t))
                    versions.append(t._storage.version)
                    result_slots.append(slot)
                    result_nr[slot] = out_ids[id(t)]
                else:
                    saved.append(t)
                    versions.append(t._storage.version)
            ctx._saved = tuple(saved)
            ctx._versions = tuple(versions)
            ctx._result_slots = tuple(result_slots)
            ctx._extra["result_nr"] = result_nr
            if STATE.saved_hooks:
                from torchplug_autograd._kernels import _pack

                _pack(ctx)
        del ctx._to_save
        if fw_tangents:
            _run_jvp(cls, ctx, args, outs, fw_tangents)
            _saved_outputs_take_tangents(ctx, outs)
        return outs[0] if single else tuple(outs)


def _saved_outputs_take_tangents(ctx: Any, outs: list[Any]) -> None:
    """A saved output carries the tangents the jvp just gave its output (saved before they existed), so a
    backward differentiated in forward mode (forward-over-reverse: hessian, jvp of grad) sees them."""
    result_nr = ctx._extra.get("result_nr")
    if not result_nr or ctx._versions is None:  # nothing saved from the outputs, or packed by hooks
        return
    for slot, k in result_nr.items():
        fw = outs[k].__dict__.get("_fw")
        for lid, tan in (fw or {}).items():
            set_tangent(ctx._saved[slot], lid, tan)


def _input_tangents(args: tuple[Any, ...]) -> dict[int, list[Any]] | None:
    """level id -> the inputs' tangents at it, for the levels where some input has one."""
    found = {}
    for lid in FW.levels:
        tans = [tangent_of(a, lid) if isinstance(a, Tensor) else None for a in args]
        if any(t is not None for t in tans):
            found[lid] = tans
    return found or None


def _run_jvp(cls: Any, ctx: Any, args: tuple[Any, ...], outs: list[Any], fw_tangents: dict[int, list[Any]]) -> None:
    """Forward AD through a custom Function: ``cls.jvp(ctx, *input_tangents)`` gives the outputs' tangents
    (zeros for tensor inputs without one, None for the others), with ``ctx.saved_tensors`` what
    ``save_for_forward`` saved."""
    import torchplug

    if cls.jvp is Function.jvp:
        if cls.__module__ == "torchplug._library.autograd":
            return  # a custom op's register_autograd formula: its outputs get no tangent (as in PyTorch)
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")
    levels = FW.levels
    ctx._fw_saved = tuple(getattr(ctx, "_to_save_forward", ()))
    try:
        for lid, tans in fw_tangents.items():
            tangents = [t if t is not None else
                        (torchplug.zeros_like(a) if isinstance(a, Tensor) and a._dtype in DIFF_DTYPES else None)
                        for a, t in zip(args, tans)]
            FW.levels = levels[:levels.index(lid)]  # the jvp's own ops carry only the outer levels
            FW.on = bool(FW.levels)
            try:
                result = cls.jvp(ctx, *tangents)
            finally:
                FW.levels, FW.on = levels, True
            result = result if isinstance(result, tuple) else (result,)
            if len(result) != len(outs):
                raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected "
                                   f"{len(outs)} but got {len(result)})")
            for o, t in zip(outs, result):
                if t is None or not isinstance(o, Tensor) or o._dtype not in DIFF_DTYPES:
                    continue
                if t.shape != o.shape:
                    raise RuntimeError(
                        "Trying to set a forward gradient that has a different size than that of the original Tensor, "
                        f"this is not supported. Tensor is of size {list(o.shape)} while the given forward gradient "
                        f"is of size {list(t.shape)}.")
                set_tangent(o, lid, t)
    finally:
        del ctx._fw_saved


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace


class NestedIOFunction(Function):
    pass


def once_differentiable(fn: Any) -> Any:
    """Run a ``backward`` under ``no_grad``: its result is not differentiable again."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
