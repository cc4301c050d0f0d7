"""The Batched key's kernels: per-op batching rules, decompositions, random ops and the per-sample fallback.

Every op whose arguments include a batched tensor (or that runs inside a vmap, where the key is in the
TLS include set) reaches :func:`batched_fallback` or the kernel :func:`make_rule_kernel` built for it:

- no batched argument: random ops apply the vmap's ``randomness`` mode; the rest run below this key;
- an op with a batching rule (``_rules``): the rule computes on the unwrapped values;
- a random op: ``randomness`` decides (an error, independent draws per sample, or the same draws);
- an op with a CompositeImplicitAutograd kernel: that kernel runs on the batched tensors (it decomposes
  into ops with rules), as PyTorch's batched decompositions do;
- anything else: the per-sample loop, with PyTorch's one-time performance warning.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torchplug
from torchplug._dispatch.tls import tls

from ._batched import call as call_op
from ._batched import BATCHED_MASK, BatchedTensor, current_levels, find_level, max_level, unwrap, wrap
from ._function import custom_op_vmap, run_custom_op_vmap

__all__ = ["InplaceOnUnbatched", "batched_fallback", "make_rule_kernel", "per_sample_loop", "WARNED", "RANDOMNESS_ERROR",
           "without_batched_include"]

_NOB = ~BATCHED_MASK
WARNED: set[str] = set()  # ops whose performance warning was shown (once per process, per op)

RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                    "'different' randomness flags on vmap or perform the randomness operation out of vmap")
_INPLACE_DIFFERENT = ("vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
                      "like same randomness. If this is necessary for your usage, please file an issue with functorch.")


class without_batched_include:
    """Run a block with the Batched key out of the TLS include set: plain tensors skip it (batched ones
    still reach it through their own key set).  Used where a random op was already handled at its level."""

    __slots__ = ("saved",)

    def __enter__(self) -> None:
        self.saved = tls.include
        tls.include = self.saved & _NOB

    def __exit__(self, *exc: Any) -> None:
        tls.include = self.saved


def _warn_fallback(name: str) -> None:
    if name in WARNED:
        return
    WARNED.add(name)
    warnings.warn(
        f"There is a performance drop because we have not yet implemented the batching rule for {name}. "
        "Please file us an issue on GitHub so that we can prioritize its implementation.",
        UserWarning, stacklevel=4)


def _batch_size(args: tuple[Any, ...], level: int) -> int:
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if t.__class__ is BatchedTensor and t._bt_level == level:
                return t._bt_value.shape[t._bt_bdim]
    raise AssertionError("no tensor batched at this level")


def _front(a: Any, level: int) -> tuple[Any, bool]:
    """The value of ``a`` with its batch dim first if batched at ``level``."""
    value, bdim = unwrap(a, level)
    if bdim is None:
        return a, False
    return (value if bdim == 0 else value.movedim(bdim, 0)), True


class InplaceOnUnbatched(RuntimeError):
    """An in-place op would write batched values into a tensor that is not batched (PyTorch refuses it)."""


def _inplace_error(name: str, schema: Any, idx: int, args: tuple[Any, ...], level: int) -> RuntimeError:
    arg_names = [a.name for a in schema.arguments]
    other = next((arg_names[i] for i, a in enumerate(args) if i != idx and _is_batched_at(a, level)), "other")
    return InplaceOnUnbatched(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `{other}` in extra_args that "
        f"has more elements than `self`. This happened due to `{other}` being vmapped over but `self` not being "
        f"vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. If said operator is "
        "being called inside the PyTorch framework, please file a bug report instead.")


def _is_batched_at(a: Any, level: int) -> bool:
    if a.__class__ is BatchedTensor:
        return a._bt_level == level
    if isinstance(a, (list, tuple)):
        return any(b.__class__ is BatchedTensor and b._bt_level == level for b in a)
    return False


def per_sample_loop(op: Any, level: int, args: tuple[Any, ...], *, same_rng: bool = False) -> Any:
    """Run ``op`` once per sample of ``level`` and stack the results (in-place ops write each sample's slice).

    ``same_rng`` restores the random state before each sample (``randomness='same'``)."""
    schema = op._entry.schema
    name = schema.full_name
    n = _batch_size(args, level)
    fronted = []
    batched = []
    for a in args:
        if isinstance(a, (list, tuple)) and any(b.__class__ is BatchedTensor for b in a):
            items = [_front(b, level) for b in a]
            fronted.append(([v for v, _ in items], [f for _, f in items], type(a)))
            batched.append(any(f for _, f in items))
        else:
            v, f = _front(a, level)
            fronted.append(v)
            batched.append(f)
    mutated = schema.mutated_argument_indices
    for idx in mutated:
        if not batched[idx] and any(batched):
            raise _inplace_error(name, schema, idx, args, level)
    state = _rng_snapshot(args) if same_rng else None
    results = []
    for i in range(n):
        if state is not None:
            _rng_restore(state)
        call = []
        for a, f in zip(fronted, batched):
            if isinstance(a, tuple) and len(a) == 3 and isinstance(a[1], list):
                values, flags, kind = a
                call.append(kind(v.select(0, i) if fl else v for v, fl in zip(values, flags)))
            else:
                call.append(a.select(0, i) if f else a)
        results.append(call_op(op, call))
    if mutated:
        outs = tuple(args[i] for i in mutated)
        return outs[0] if len(schema.returns) == 1 else outs
    return _stack_results(schema, results, level)


def _stack_results(schema: Any, results: list[Any], level: int) -> Any:
    first = results[0]
    if isinstance(first, torchplug.Tensor):
        return wrap(torchplug.stack(results), 0, level)
    if isinstance(first, (tuple, list)):
        parts = [_stack_results(schema, [r[k] for r in results], level) for k in range(len(first))]
        return type(first)(parts) if isinstance(first, tuple) else parts
    if first is None:
        return None
    if all(r == first for r in results):  # a number that is the same for every sample
        return first
    raise RuntimeError(
        f"vmap: {schema.full_name} returned a Python value ({type(first).__name__}) that differs between samples; "
        "vmap can only batch tensor outputs. Return a tensor from the function instead.")


# ---- random ops ------------------------------------------------------------------------------------------
def _generator_of(args: tuple[Any, ...]) -> Any:
    for a in args:
        if isinstance(a, torchplug.Generator):
            return a
    return None


def _default_rng_module(args: tuple[Any, ...]) -> Any:
    """The module whose get/set_rng_state hold the default generator of the op's device (torchplug for cpu)."""
    for a in args:
        if isinstance(a, torchplug.Tensor):
            kind = a.device.type
            if kind != "cpu":
                module = getattr(torchplug, kind, None)
                if module is not None and hasattr(module, "get_rng_state"):
                    return module
            break
    return torchplug


def _rng_snapshot(args: tuple[Any, ...]) -> tuple[Any, Any]:
    gen = _generator_of(args)
    if gen is not None:
        return gen, gen.get_state()
    module = _default_rng_module(args)
    return module, module.get_rng_state()


def _rng_restore(state: tuple[Any, Any]) -> None:
    owner, value = state
    if isinstance(owner, torchplug.Generator):
        owner.set_state(value)
    else:
        owner.set_rng_state(value)


# random ops drawing one independent value per element (a sample's draws do not depend on its shape)
_ELEMENTWISE_RANDOM = frozenset({
    "aten::uniform_", "aten::normal_", "aten::random_", "aten::random_.from", "aten::bernoulli",
    "aten::bernoulli_.float", "aten::bernoulli_.Tensor", "aten::bernoulli.p", "aten::exponential_",
    "aten::geometric_", "aten::log_normal_", "aten::cauchy_", "aten::poisson", "aten::native_dropout",
    "aten::dropout", "aten::alpha_dropout", "aten::dropout_", "aten::alpha_dropout_"})


# out-of-place random ops drawing from a batched input: PyTorch refuses 'same' randomness for them
_SAME_REFUSED = frozenset({"aten::bernoulli", "aten::bernoulli.p", "aten::poisson", "aten::multinomial"})
_SAME_BATCHED_INPUT = ("Vmap does not currently support same randomness with a batched tensor input. Please file an "
                       "issue with functorch")


def entry_elementwise(op: Any, args: tuple[Any, ...], level: int) -> bool:
    """True for an elementwise random op whose only batched argument is its first one."""
    if op._entry.schema.full_name not in _ELEMENTWISE_RANDOM or not _is_batched_at(args[0], level):
        return False
    return not any(_is_batched_at(a, level) for a in args[1:])


_DROPOUTS = frozenset({"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout",
                       "aten::dropout_", "aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_"})


def random_op(ks: int, op: Any, args: tuple[Any, ...], level: int) -> Any:
    """A random op inside vmap, by the innermost level's ``randomness`` mode (PyTorch's semantics)."""
    entry = op._entry
    if entry.schema.full_name in _DROPOUTS and (not args[2] or args[1] in (0, 1)):
        # dropout that draws nothing (eval mode, p 0 or 1): as PyTorch, not a random op for vmap
        composite = _composite_kernel(entry) or _explicit_kernel(entry)
        return composite(*args) if level else op.redispatch(ks & _NOB, *args)
    if level:
        mode = find_level(level).randomness if find_level(level) is not None else "different"
    else:
        levels = current_levels()
        if not levels:
            return op.redispatch(ks & _NOB, *args)
        mode = levels[-1].randomness
    if mode == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    with without_batched_include():
        if not level:
            if mode == "same":
                return op.redispatch(ks & _NOB, *args)
            if op._entry.schema.mutated_argument_indices:
                raise RuntimeError(_INPLACE_DIFFERENT)
            lv = current_levels()[-1]
            return wrap(torchplug.stack([op.redispatch(ks & _NOB, *args) for _ in range(lv.batch_size)]), 0, lv.level)
        if mode == "same" and op._entry.schema.full_name in _SAME_REFUSED and _is_batched_at(args[0], level):
            raise RuntimeError(_SAME_BATCHED_INPUT)
        if mode == "different" and entry_elementwise(op, args, level):
            # independent draws for every element: one call on the physical value (batch dim first; a view, so
            # an in-place op writes the batched tensor's own memory)
            values = [unwrap(a, level)[0].movedim(unwrap(a, level)[1], 0) if _is_batched_at(a, level) else a
                      for a in args]
            result = call_op(op, values)
            mutated = op._entry.schema.mutated_argument_indices
            if mutated:
                return args[mutated[0]]
            if isinstance(result, tuple):
                return tuple(wrap(r, 0, level) for r in result)
            return wrap(result, 0, level)
        return per_sample_loop(op, level, args, same_rng=(mode == "same"))


# ---- the kernels -----------------------------------------------------------------------------------------
_CIA: dict[int, Any] = {}


# decompositions that cannot run on batched values: quantile checks its q values with .item() (a batched q),
# so these take the per-sample loop
_NOT_ON_BATCHED = frozenset({"aten::quantile", "aten::nanquantile"})


def _composite_kernel(entry: Any) -> Any:
    key = id(entry)
    found = _CIA.get(key)
    if found is None:
        regs = entry.kernels.get("CompositeImplicitAutograd")
        found = regs[0].fn if regs and entry.name not in _NOT_ON_BATCHED else False
        _CIA[key] = found
    return found


_DATA_DEPENDENT = frozenset({"aten::masked_select", "aten::_reshape_alias", "aten::put_", "aten::index_reduce_",
                             "aten::index_put_", "aten::masked_scatter_", "aten::repeat_interleave.Tensor"})
_CEA: dict[int, Any] = {}


def _explicit_kernel(entry: Any) -> Any:
    """The core's CompositeExplicitAutograd kernel of an op tagged 'composite' (written with other ops, so it
    runs on batched tensors); not for ops whose output shape depends on values or that view by strides."""
    key = id(entry)
    found = _CEA.get(key)
    if found is None:
        regs = entry.kernels.get("CompositeExplicitAutograd")
        found = regs[0].fn if regs and "composite" in entry.tags and entry.name not in _DATA_DEPENDENT else False
        _CEA[key] = found
    return found


_EMPTY_FACTORIES = frozenset({"aten::empty.memory_format", "aten::empty_strided"})


def _batched_empty(ks: int, op: Any, args: tuple[Any, ...], lv: Any) -> Any:
    """``empty`` inside a vmap with ``randomness='different'``: one tensor per sample, so that filling it
    at random (``torch.rand(...)``, ``rand_like``: an empty tensor filled in place) draws per sample, as
    PyTorch's batched random factories do."""
    size = list(args[0])
    if op._entry.schema.name == "empty_strided":
        rest = args[2:]
        value = _physical_empty(ks, [lv.batch_size] + size, rest)
    else:
        value = _physical_empty(ks, [lv.batch_size] + size, args[1:-1])
    return wrap(value, 0, lv.level)


def _physical_empty(ks: int, size: list[int], factory_kwargs: tuple[Any, ...]) -> Any:
    dtype, layout, device, pin_memory = (tuple(factory_kwargs) + (None,) * 4)[:4]
    with without_batched_include():
        return torchplug.empty(size, dtype=dtype, layout=layout, device=device, pin_memory=bool(pin_memory))


_KIND: dict[int, int] = {}  # id(entry) -> 0 plain, 1 random, 2 an empty factory (computed once per op)


def _kind(entry: Any) -> int:
    kind = _KIND.get(id(entry))
    if kind is None:
        kind = 1 if "random" in entry.tags else 2 if entry.schema.full_name in _EMPTY_FACTORIES else 0
        _KIND[id(entry)] = kind
    return kind


def batched_fallback(ks: int, op: Any, *args: Any) -> Any:
    """The boxed kernel of the Batched key for ops without a batching rule (see the module docstring)."""
    level = max_level(args)
    entry = op._entry
    kind = _KIND.get(id(entry))
    if kind is None:
        kind = _kind(entry)
    if kind == 1:
        return random_op(ks, op, args, level)
    if not level:  # a call inside vmap on unbatched tensors: the cheap path
        if kind == 2:
            levels = current_levels()
            if levels and levels[-1].randomness == "different":
                return _batched_empty(ks, op, args, levels[-1])
        return op.redispatch(ks & _NOB, *args)
    custom = custom_op_vmap(entry)
    if custom is not None:
        return run_custom_op_vmap(custom, args, level)
    composite = _composite_kernel(entry)
    if composite:
        return composite(*args)
    explicit = _explicit_kernel(entry)
    if explicit:
        try:
            return explicit(*args)
        except RuntimeError as exc:
            # the composite writes batched values into a tensor it made unbatched (zeros, then an in-place
            # copy): that op batches per sample from now on
            if not isinstance(exc, InplaceOnUnbatched):
                raise
            _CEA[id(entry)] = False
    _warn_fallback(entry.schema.full_name)
    return per_sample_loop(op, level, args)


def make_rule_kernel(entry: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    """The Batched kernel of an op with a batching rule ``rule(op, level, *args)``."""
    op = entry.overload
    is_random = "random" in entry.tags

    def kernel(ks: int, *args: Any) -> Any:
        level = max_level(args)
        if is_random:
            return random_op(ks, op, args, level)
        if not level:
            return op.redispatch(ks & _NOB, *args)
        # the rule computes on values: plain tensors need not come back through this key (batched ones of
        # outer levels carry it themselves), which keeps the calls it makes one dispatch each
        saved = tls.include
        tls.include = saved & _NOB
        try:
            return rule(op, level, *args)
        finally:
            tls.include = saved

    kernel.__qualname__ = f"batching_rule[{rule.__name__}]"
    kernel.__module__ = rule.__module__
    return kernel
