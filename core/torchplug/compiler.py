"""``torchplug.compiler``: PyTorch's compiler controls; nothing is ever being compiled here.

See :mod:`torchplug._compile` for ``torchplug.compile`` (eager execution, one warning).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from torchplug._compile import BACKENDS, compile

__all__ = [
    "compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset", "allow_in_graph",
    "assume_constant_result", "list_backends", "cudagraph_mark_step_begin", "set_stance",
]

_F = TypeVar("_F")


def disable(fn: _F | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Exclude ``fn`` from compilation: returns ``fn`` (a decorator when ``fn`` is None)."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """False: torchplug never traces or compiles code."""
    return False


def is_dynamo_compiling() -> bool:
    """False: there is no TorchDynamo here."""
    return False


def is_exporting() -> bool:
    """False: there is no ``torch.export`` here."""
    return False


def reset() -> None:
    """Clear compilation caches: there are none."""
    return None


def allow_in_graph(fn: _F) -> _F:
    """Returns ``fn``: there is no graph to put it in."""
    return fn


def assume_constant_result(fn: _F) -> _F:
    """Returns ``fn``: there is no tracer to tell."""
    return fn


def list_backends(exclude_tags: tuple[str, ...] | None = ("debug", "experimental")) -> list[str]:
    """The backend names ``torchplug.compile`` accepts (every one runs eagerly)."""
    debug = {"aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner", "aot_ts", "eager",
             "pre_dispatch_eager", "ts"}
    return sorted(b for b in BACKENDS if not exclude_tags or b not in debug)


def cudagraph_mark_step_begin() -> None:
    """Marks a new CUDA-graph step: a no-op, as nothing is captured."""
    return None


def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
               force_backend: str | Callable[..., Any] | None = None) -> Any:
    """Accepted for compatibility; usable as a context manager or decorator that changes nothing."""
    import contextlib

    return contextlib.nullcontext()
