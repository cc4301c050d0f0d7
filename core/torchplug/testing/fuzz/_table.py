"""The fuzz op table: :class:`FuzzOp` (how to generate, call and compare one op) and the registry.

Area modules in ``torchplug/testing/fuzz/ops/`` define ``OPS: list[FuzzOp]``; :func:`op_table`
collects them.  :func:`generate` draws one case, :func:`repro` writes it as Python.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from torchplug.testing.fuzz._draw import Draw
from torchplug.testing.fuzz._spec import Call, TensorSpec, source

__all__ = ["FuzzOp", "op_table", "table_with", "generate", "repro", "call_op", "TOLERANCE_KINDS"]

TOLERANCE_KINDS = ("exact", "elementwise", "reduce")


@dataclass(frozen=True)
class FuzzOp:
    """One fuzzed operator.

    Args:
        name: unique id (also the default dotted path).
        gen: ``(Draw) -> Call``: draws one case (valid most of the time, sometimes invalid on purpose).
        fn: dotted path resolved against ``torch`` and ``torchplug`` (``"add"``, ``"Tensor.add_"``,
            ``"nn.functional.conv2d"``), or ``fn(module, *args, **kwargs)`` for syntax such as ``x[i] = v``.
        expr: for a callable ``fn``, the reproducer: ``expr(arg_sources, kwarg_sources) -> str``
            (statements on their own lines, the result's expression last).
        tol: tolerance class: ``elementwise`` (a few ulps), ``reduce`` (accumulation order differs;
            atol grows with the input magnitude) or ``exact``.
        grad: floating cases sometimes also compare input gradients (float32/float64).
        data_dependent: the output shape depends on values (not run on shape-only backends).
        factory: a creation op: ``device=`` names the device under test.
        grad_tol: ``(call) -> factor`` on the absolute tolerance of input gradients, for ops whose
            backward amplifies rounding noise (layer_norm's 1/sqrt(eps) on a constant row).
        canon: ``(call, inputs, result) -> result`` on NumPy values before comparing, for results
            torch leaves unspecified (the order of tied indices of topk/sort); ``inputs`` are the
            logical values of the call's tensor specs in order.
    """

    name: str
    gen: Callable[[Draw], Call]
    fn: str | Callable[..., Any] | None = None
    expr: Callable[[list[str], dict[str, str]], str] | None = None
    tol: str = "elementwise"
    grad: bool = False
    data_dependent: bool = False
    factory: bool = False
    grad_tol: Callable[[Call], float] | None = None
    canon: Callable[[Call, list[Any], Any], Any] | None = None

    @property
    def path(self) -> str:
        fn = self.fn or self.name
        return fn if isinstance(fn, str) else self.name


_TABLE: dict[str, FuzzOp] | None = None
_RESOLVED: dict[tuple[str, str], Callable[..., Any]] = {}


def op_table() -> dict[str, FuzzOp]:
    """Every FuzzOp of every area module of ``torchplug.testing.fuzz.ops`` (cached), by name."""
    global _TABLE
    if _TABLE is None:
        from torchplug.testing.fuzz import ops

        table: dict[str, FuzzOp] = {}
        for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            for op in importlib.import_module(f"{ops.__name__}.{info.name}").OPS:
                if op.name in table:
                    raise ValueError(f"fuzz op {op.name!r} is defined twice (second time in ops/{info.name}.py)")
                table[op.name] = op
        _TABLE = table
    return _TABLE


def table_with(sources: Sequence[str]) -> dict[str, FuzzOp]:
    """The op table plus the ``OPS`` of more modules: module names (``mybackend.fuzz_ops``) or ``.py`` paths.

    Backend authors fuzz their own ops this way.
    """
    import importlib.util

    table = dict(op_table())
    for src in sources:
        if src.endswith(".py"):
            spec = importlib.util.spec_from_file_location(f"_torchplug_fuzz_extra_{len(table)}", src)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load fuzz ops from {src!r}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(src)
        for op in module.OPS:
            if op.name in table:
                raise ValueError(f"fuzz op {op.name!r} from {src} is already in the table")
            table[op.name] = op
    return table


def call_op(op: FuzzOp, module: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """Run ``op`` of ``module`` (``torch`` or ``torchplug``) on materialized arguments."""
    fn = op.fn or op.name
    if not isinstance(fn, str):
        return fn(module, *args, **kwargs)
    key = (module.__name__, fn)
    target = _RESOLVED.get(key)
    if target is None:
        from torchplug.testing.opinfo import resolve

        target = _RESOLVED[key] = resolve(module, fn)
    return target(*args, **kwargs)


def generate(d: Draw, ops: Sequence[FuzzOp]) -> Call:
    """Draw an op among ``ops`` and one case of it; floating cases of differentiable ops sometimes
    run a backward pass too (their positional float32/float64 tensors become leaves requiring grad)."""
    op = d.pick(ops)
    call = op.gen(d)
    call.op = op.name
    if op.grad and d.chance(20):
        # the positional floating tensors become leaves (keyword tensors such as loss weights stay
        # constants: torch rejects gradients for most of them)
        marked = [False]

        def mark(value: Any) -> Any:
            if isinstance(value, TensorSpec) and value.dtype in ("float32", "float64"):
                marked[0] = True
                return replace(value, grad=True)
            if isinstance(value, (list, tuple)):
                return type(value)(mark(v) for v in value)
            return value

        args = tuple(mark(a) for a in call.args)
        if marked[0]:
            call = Call(call.op, args, call.kwargs, grad=True, data_dependent=call.data_dependent)
    return call


def repro(op: FuzzOp, call: Call, grad_output: str | None = None, library: str = "torch") -> str:
    """Python lines that rerun ``call`` (``import torchplug as torch`` or ``import torch``)."""
    args = [source(a) for a in call.args]
    kwargs = {k: source(v) for k, v in call.kwargs.items()}
    if op.expr is not None:
        expr = op.expr(args, kwargs)
    else:
        fn = op.fn or op.name
        joined = ", ".join(args + [f"{k}={v}" for k, v in kwargs.items()])
        # a callable without an ``expr`` is named by the op: fn(module, *args) is what runs
        expr = f"torch.{fn}({joined})" if isinstance(fn, str) else f"{op.name}(torch, {joined})"
    head = "from math import inf, nan\n" + ("import torch" if library == "torch" else "import torchplug as torch")
    *stmts, last = expr.split("\n")
    lines = [head, *stmts, f"r = {last}"]
    if call.grad and grad_output:
        lines.append(f"(r[0] if isinstance(r, tuple) else r).backward({grad_output})")
    return "\n".join(lines)
