"""``opcheck``: does an operator's registration match its schema, its fake kernel and its
autograd formula?  (PyTorch's ``torch.library.opcheck``, without the compiler test.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["opcheck", "OpCheckError", "DEFAULT_TEST_UTILS"]

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
_SKIPPED_AOT = "SKIPPED: torchplug has no torch.compile, so there is no compiled run to compare with"


class OpCheckError(Exception):
    """An ``opcheck`` test failed; the message names the test and what differed."""


def _is_tensor(x: Any) -> bool:
    from torchplug._tensor.tensor import Tensor

    return isinstance(x, Tensor)


def _map(value: Any, fn: Callable[[Any], Any]) -> Any:
    if _is_tensor(value):
        return fn(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _clone(t: Any) -> Any:
    return t.detach().clone().requires_grad_(t.requires_grad)


def _host(t: Any) -> Any:
    import numpy as np

    return np.asarray(t.detach().cpu().numpy())


def _has_data(t: Any) -> bool:
    return t._device.type != "meta"


def _shares(a: Any, b: Any) -> bool:
    if a._storage is b._storage:
        return True
    import numpy as np

    da, db = getattr(a, "_data", None), getattr(b, "_data", None)
    return isinstance(da, np.ndarray) and isinstance(db, np.ndarray) and np.may_share_memory(da, db)


def _resolve(op: Any) -> tuple[Callable[..., Any], Any, Any]:
    """(callable, OperatorEntry, CustomOpDef or None) for every way of naming an op."""
    from torchplug._library.custom_ops import CustomOpDef, lookup_custom_op, resolve_op

    if isinstance(op, CustomOpDef):
        if op._entry is None:
            op(None)  # raises: not installed
        return op, op._entry, op
    if isinstance(op, str):
        opdef = resolve_op(op)
        return opdef, opdef._entry, opdef
    entry = getattr(op, "_entry", None)
    if entry is None and hasattr(op, "overloads"):  # an OpOverloadPacket with one overload
        names = op.overloads()
        if len(names) != 1:
            raise ValueError(f"opcheck needs one overload of {op!r}; pass one of {names} explicitly.")
        op = getattr(op, names[0])
        entry = op._entry
    if entry is None:
        raise TypeError(f"opcheck expects a custom op, an OpOverload or an 'ns::op' name, got {type(op).__name__}.")
    return op, entry, lookup_custom_op(entry.name)


# -- the tests ---------------------------------------------------------------------------------------
def _test_schema(call: Callable[..., Any], entry: Any, opdef: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                 tol: dict[str, float]) -> None:
    """The implementation mutates and aliases only what the schema declares."""
    import numpy as np

    schema = entry.schema
    args_c, kwargs_c = _map(args, _clone), _map(kwargs, _clone)
    before = _map((args_c, kwargs_c), lambda t: _host(t).copy() if _has_data(t) else None)
    result = call(*args_c, **kwargs_c)
    bound = _bind(schema, args_c, kwargs_c)
    bound_before = _bind(schema, *before)
    for arg in schema.arguments:
        value, old = bound.get(arg.name), bound_before.get(arg.name)
        for t, o in zip(_flat(value), _flat(old)):
            if not _is_tensor(t) or o is None:
                continue
            same = t.shape == o.shape and np.array_equal(_host(t), o, equal_nan=True)
            if not same and not arg.is_write:
                raise OpCheckError(
                    f"test_schema: Argument {arg.name} is not defined as mutable but was mutated by "
                    f"{entry.name}. Declare it in mutates_args (schema 'Tensor(a!) {arg.name}'), or make the "
                    "implementation copy before writing."
                )
    outputs = [o for o in _flat(result) if _is_tensor(o)]
    rets = schema.returns
    for i, out in enumerate(outputs):
        ret_alias = rets[i].alias if i < len(rets) else None
        for arg in schema.arguments:
            for t in _flat(bound.get(arg.name)):
                if not _is_tensor(t) or not _shares(out, t):
                    continue
                declared = ret_alias is not None and arg.alias is not None and set(ret_alias.before) & set(arg.alias.before)
                if not declared:
                    raise OpCheckError(
                        f"test_schema: Argument {arg.name} is not defined to alias output but was aliasing: output "
                        f"{i} of {entry.name} shares memory with it. Return a new tensor (e.g. .clone()); custom "
                        "op outputs must not alias their inputs."
                    )
        for j in range(i):
            if _shares(out, outputs[j]):
                raise OpCheckError(
                    f"test_schema: outputs {j} and {i} of {entry.name} share memory; each output must be a new tensor."
                )


def _bind(schema: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = {a.name: v for a, v in zip(schema.positional_arguments, args)}
    bound.update(kwargs)
    return bound


def _test_autograd_registration(call: Callable[..., Any], entry: Any, opdef: Any, args: tuple[Any, ...],
                                kwargs: dict[str, Any], tol: dict[str, float]) -> None:
    """Inputs that require grad need a registered formula, and the formula must pass gradcheck."""
    flat_inputs = [t for t in _flat(list(args) + list(kwargs.values())) if _is_tensor(t)]
    if not any(t.requires_grad for t in flat_inputs):
        return  # nothing to differentiate: as PyTorch, the registration is not examined
    if opdef is not None and opdef._defines:
        registered = opdef._backward_fn is not None
    else:
        keys = [k for k, regs in entry.kernels.items() if regs and not regs[0].is_fallthrough]
        registered = any(k.startswith("Autograd") or k == "CompositeImplicitAutograd" for k in keys)
    if not registered:
        raise OpCheckError(
            f"test_autograd_registration: inputs require grad but {entry.name} has no autograd formula registered, "
            "so backward would fail. Register one with register_autograd(backward, setup_context=...), or call "
            "the op under no_grad."
        )
    _gradcheck(call, entry, args, kwargs, tol)


def _gradcheck(call: Callable[..., Any], entry: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
               tol: dict[str, float]) -> None:
    from torchplug._plugins.lookup import resolve

    gradcheck = resolve("autograd").gradcheck  # the autograd plugin's

    def run(dtype: Any, eps: float, atol: float, rtol: float) -> None:
        slots: list[Any] = []

        def prepare(t: Any) -> Any:
            c = t.detach().clone()
            if dtype is not None and c.dtype.is_floating_point:
                c = c.to(dtype)
            c.requires_grad_(t.requires_grad)
            if t.requires_grad:
                slots.append(c)
            return c

        a, kw = _map(args, prepare), _map(kwargs, prepare)
        ids = [id(s) for s in slots]

        def fn(*diff: Any) -> Any:
            swap = dict(zip(ids, diff))
            return call(*_map(a, lambda t: swap.get(id(t), t)), **_map(kw, lambda t: swap.get(id(t), t)))

        gradcheck(fn, tuple(slots), eps=eps, atol=tol.get("atol", atol), rtol=tol.get("rtol", rtol))

    try:
        try:
            # float64 makes finite differences trustworthy; kernels that lack it are checked in
            # their own precision below.
            run(torchplug.float64, 1e-6, 1e-5, 1e-3)
        except OpCheckError:
            raise
        except Exception as exc:  # noqa: BLE001
            if "Jacobian mismatch" in str(exc) or "backward" in str(exc):
                raise
            run(None, 1e-3, 1e-2, 1e-2)
    except Exception as exc:  # noqa: BLE001
        raise OpCheckError(
            f"test_autograd_registration: the autograd formula of {entry.name} disagrees with finite differences "
            f"(gradcheck): {type(exc).__name__}: {exc}"
        ) from exc


def _test_faketensor(call: Callable[..., Any], entry: Any, opdef: Any, args: tuple[Any, ...],
                     kwargs: dict[str, Any], tol: dict[str, float]) -> None:
    """The fake kernel, run on meta tensors, predicts the real outputs' shapes, dtypes and strides."""
    from torchplug._runtime.backends import registered_backends
    from torchplug._tensor.creation import empty_strided
    from torchplug._library.fake import record_fake_contexts

    # an op that returns nothing needs no fake kernel (PyTorch generates a trivial one)
    if opdef is not None and opdef._defines and opdef._fake_fn is None and opdef._parsed.returns:
        raise OpCheckError(
            f"test_faketensor: {entry.name} has no fake kernel. Register one with register_fake: it computes the "
            "outputs' metadata (torchplug.empty(...) with the right shape and dtype) without reading data."
        )
    if "meta" not in registered_backends():
        from torchplug._runtime.backends import install_command

        raise OpCheckError(f"test_faketensor: the meta backend is not installed or blocked ({install_command('meta')}).")
    real = call(*_map(args, _clone), **_map(kwargs, _clone))

    def to_meta(t: Any) -> Any:
        return empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device="meta")

    with record_fake_contexts() as ctxs:
        try:
            fake = call(*_map(args, to_meta), **_map(kwargs, to_meta))
        except Exception as exc:  # noqa: BLE001
            raise OpCheckError(
                f"test_faketensor: running {entry.name} on meta tensors failed: {type(exc).__name__}: {exc}"
            ) from exc
    dynamic = [d for c in ctxs for d in c.dynamic_sizes]
    reals, fakes = _flat(real), _flat(fake)
    if len(reals) != len(fakes):
        raise OpCheckError(f"test_faketensor: the fake kernel of {entry.name} returns {len(fakes)} outputs, the real one {len(reals)}.")
    for i, (r, f) in enumerate(zip(reals, fakes)):
        if _is_tensor(r) != _is_tensor(f):
            raise OpCheckError(f"test_faketensor: output {i} of {entry.name}: the fake kernel returns "
                               f"{type(f).__name__}, the real one {type(r).__name__}.")
        if not _is_tensor(r):
            continue
        where = f"output {i} of {entry.name}"
        if f.device.type != "meta":
            raise OpCheckError(f"test_faketensor: {where}: the fake kernel returned a tensor on {f.device}, not on "
                               "the inputs' (meta) device; create outputs with empty_like/new_empty or device=x.device.")
        if f.dtype != r.dtype:
            raise OpCheckError(f"test_faketensor: {where}: the fake kernel gives dtype {f.dtype} but the real kernel "
                               f"gives {r.dtype}.")
        if not _shapes_match(tuple(f.shape), tuple(r.shape), dynamic):
            raise OpCheckError(f"test_faketensor: {where}: the fake kernel gives shape {tuple(f.shape)} but the real "
                               f"kernel gives {tuple(r.shape)}.")
        if tuple(f.shape) == tuple(r.shape):
            fs = [s for s, n in zip(f.stride(), f.shape) if n > 1]
            rs = [s for s, n in zip(r.stride(), r.shape) if n > 1]
            if fs != rs:
                raise OpCheckError(f"test_faketensor: {where}: the fake kernel gives strides {f.stride()} but the "
                                   f"real kernel gives {r.stride()}.")


def _shapes_match(fake: tuple[int, ...], real: tuple[int, ...], dynamic: list[Any]) -> bool:
    if len(fake) != len(real):
        return False
    for f, r in zip(fake, real):
        if f == r:
            continue
        # A data-dependent size (get_ctx().new_dynamic_size) stands for any value in its range.
        if not any(int(d) == f and d.min <= r and (d.max is None or r <= d.max) for d in dynamic):
            return False
    return True


_TESTS = {
    "test_schema": _test_schema,
    "test_autograd_registration": _test_autograd_registration,
    "test_faketensor": _test_faketensor,
}


def opcheck(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, *,
            test_utils: str | Sequence[str] = DEFAULT_TEST_UTILS, raise_exception: bool = True,
            atol: float | None = None, rtol: float | None = None) -> dict[str, Any]:
    """Check that ``op`` is registered correctly, on sample ``args``/``kwargs``.

    Tests (``test_utils``):

    - ``test_schema``: only arguments the schema marks mutable are mutated, and outputs alias
      inputs only where the schema says so.
    - ``test_autograd_registration``: when an input requires grad, an autograd formula is
      registered and agrees with finite differences (``gradcheck``, in float64 when the op
      supports it).
    - ``test_faketensor``: the fake kernel, run on meta copies of the inputs, gives the real
      outputs' shapes, dtypes and strides.
    - ``test_aot_dispatch_dynamic``: accepted for compatibility and reported as skipped:
      torchplug has no compiler.

    Returns ``{test: "SUCCESS" | exception}``; with ``raise_exception`` (default) the first
    failure raises :class:`OpCheckError` naming the test.  Run it on several inputs, devices and
    ``requires_grad`` settings; it checks registration, and gradcheck checks the maths.
    """
    if (atol is None) != (rtol is None):
        raise ValueError(
            f"opcheck(op, ...): if you specify one of atol/rtol, you must specify both (got atol={atol}, rtol={rtol})."
        )
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    unknown = [t for t in test_utils if t not in _TESTS and t != "test_aot_dispatch_dynamic"]
    if unknown:
        raise ValueError(f"opcheck(op, ...): unknown test_utils {unknown}; expected a subset of {DEFAULT_TEST_UTILS}.")
    if not isinstance(args, tuple):
        args = tuple(args)
    kwargs = dict(kwargs or {})
    call, entry, opdef = _resolve(op)
    tol = {} if atol is None else {"atol": atol, "rtol": rtol}
    results: dict[str, Any] = {}
    for name in test_utils:
        if name == "test_aot_dispatch_dynamic":
            results[name] = _SKIPPED_AOT
            continue
        try:
            _TESTS[name](call, entry, opdef, args, kwargs, tol)
            results[name] = "SUCCESS"
        except Exception as exc:  # noqa: BLE001 - reported per test
            error = exc if isinstance(exc, OpCheckError) else OpCheckError(f"{name}: {type(exc).__name__}: {exc}")
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {error}") from exc
            results[name] = error
    return results
