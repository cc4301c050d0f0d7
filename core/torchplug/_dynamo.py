"""``torchplug._dynamo``: the TorchDynamo entry points scripts call, for a library that compiles nothing.

``torchplug.compile`` runs models eagerly (see :mod:`torchplug._compile`), so there are no graphs,
guards or caches: :func:`reset` has nothing to clear, the ``mark_*`` hints have nothing to mark and
:data:`config` holds the settings scripts commonly assign (``suppress_errors``, ``cache_size_limit``...)
without anything reading them.  ``explain`` and ``export`` are absent: they return FX graphs, which
torchplug does not build.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from torchplug.compiler import allow_in_graph, disable, is_compiling, list_backends, reset as _compiler_reset

__all__ = ["reset", "reset_code_caches", "disable", "allow_in_graph", "list_backends", "is_compiling",
           "mark_dynamic", "maybe_mark_dynamic", "mark_static", "config"]

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
