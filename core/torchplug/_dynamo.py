"""``torchplug._dynamo``: the TorchDynamo entry points scripts call, for a library that compiles nothing.

``torchplug.compile`` runs models eagerly (see :mod:`torchplug._compile`), so there are no graphs,
guards or caches: :func:`reset` has nothing to clear, the ``mark_*`` hints have nothing to mark,
:data:`config` holds the settings scripts commonly assign (``suppress_errors``, ``cache_size_limit``...)
without anything reading them, and :func:`explain` runs the function and reports that no graph was
captured.  ``export`` is absent: it returns an FX graph, which torchplug does not build.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from torchplug.compiler import allow_in_graph, disable, is_compiling, list_backends, reset as _compiler_reset

__all__ = ["reset", "reset_code_caches", "disable", "allow_in_graph", "list_backends", "is_compiling",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "config", "explain", "ExplainOutput"]

# The settings most scripts touch, with PyTorch's defaults; assigning others works too.
config = SimpleNamespace(suppress_errors=False, verbose=False, cache_size_limit=8, recompile_limit=8,
                         accumulated_cache_size_limit=256, accumulated_recompile_limit=256,
                         capture_scalar_outputs=False, capture_dynamic_output_shape_ops=False,
                         automatic_dynamic_shapes=True, assume_static_by_default=True,
                         optimize_ddp=True, inline_inbuilt_nn_modules=True)


def reset() -> None:
    """Clear TorchDynamo's caches (``torch._dynamo.reset()``): there are none, nothing was compiled."""
    _compiler_reset()


def reset_code_caches() -> None:
    """Clear the compiled-code caches: there are none."""
    return None


def mark_dynamic(t: Any, index: Any, *, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
    """Hint that dims ``index`` of ``t`` vary between calls: nothing is specialized here, so nothing to do."""
    return None


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """Like :func:`mark_dynamic`, without the promise: nothing to do."""
    return None


def mark_static(t: Any, index: Any = None) -> None:
    """Hint that dims of ``t`` never change: nothing to do."""
    return None


@dataclass
class ExplainOutput:
    """What :func:`explain` found (PyTorch's ``torch._dynamo.backends.debugging.ExplainOutput``)."""

    graphs: list[Any]
    graph_count: int
    graph_break_count: int
    break_reasons: list[Any]
    op_count: int
    ops_per_graph: list[list[Any]] | None = field(default=None)
    out_guards: list[Any] | None = field(default=None)
    compile_times: str | None = field(default=None)

    def __str__(self) -> str:
        # PyTorch's layout, so scripts that print it read the same
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, reason in enumerate(self.break_reasons):
            lines += [f"  Break Reason {i + 1}:", f"    Reason: {reason}"]
        if self.ops_per_graph is not None:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph):
                lines += [f"  Ops {i + 1}:", *(f"    {op}" for op in ops)]
        if self.out_guards is not None:
            lines.append("Out Guards:")
            lines += [f"  Guard {i + 1}:\n    {guard}" for i, guard in enumerate(self.out_guards)]
        if self.compile_times is not None:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(f: Callable[..., Any], *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args, **kwargs)``: run ``f`` (eagerly, as torchplug runs everything) and report the graphs
    TorchDynamo captured: none here, so no graph breaks and no ops either.  ``explain(f, *args)`` is PyTorch's
    deprecated form (FutureWarning)."""

    def inner(*args: Any, **kwargs: Any) -> ExplainOutput:
        f(*args, **kwargs)
        return ExplainOutput(graphs=[], graph_count=0, graph_break_count=0, break_reasons=[], op_count=0,
                             ops_per_graph=[], out_guards=[], compile_times="")

    if extra_args or extra_kwargs:
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.  If you "
                      "don't migrate, we may break your explain call in the future if your user defined kwargs "
                      "conflict with future kwargs added to explain(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner
