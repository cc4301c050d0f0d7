"""``torchplug.compile``: PyTorch's signature and argument checks, eager execution.

torchplug has no graph compiler: the model or function given to :func:`compile` is returned as
it is (a module stays the same module, so its ``state_dict`` keys do not gain PyTorch's
``_orig_mod.`` prefix) and runs eagerly with the same results.  The first call warns once per
process that nothing is compiled.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["compile", "InvalidBackend", "MODES", "BACKENDS", "warn_once"]

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
# PyTorch's registered backend names (torch._dynamo.list_backends(None)); all of them run eagerly here.
BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner", "aot_ts", "cudagraphs",
            "eager", "inductor", "onnxrt", "openxla", "pre_dispatch_eager", "ts", "tvm")

_warned: set[str] = set()


class InvalidBackend(RuntimeError):
    """An unknown ``backend=`` name (PyTorch's ``torch._dynamo.exc.InvalidBackend``)."""


def warn_once(key: str, message: str) -> None:
    """Warn ``message`` (UserWarning) the first time ``key`` is seen in this process."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def compile(  # noqa: A001 - PyTorch's name
    model: Callable[..., Any] | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
    backend: str | Callable[..., Any] | None = None, mode: str | None = None,
    options: dict[str, Any] | None = None, name: str | None = None, disable: bool = False,
    recompile_limit: int | None = None, isolate_recompiles: bool = False, shapes_spec: Any = None,
) -> Any:
    """Check the arguments as ``torch.compile`` does and return ``model`` itself, which runs eagerly.

    With ``model=None`` it returns a decorator.  ``mode`` must be one of :data:`MODES` and may not
    be combined with ``options``; a string ``backend`` must be one of PyTorch's backend names
    (:data:`BACKENDS`), a callable backend is accepted and never called.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see `torchplug.compiler.list_backends()` for available backends.")
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise InvalidBackend(f"Invalid backend: {backend!r}; pass a backend name or a callable.")
    if model is None:
        def decorator(fn: Callable[..., Any]) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, recompile_limit=recompile_limit,
                           isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)

        return decorator
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if not disable:
        warn_once("compile", "torchplug.compile does not compile: torchplug has no graph compiler, so the model runs "
                             "eagerly, with the same results (this warning is shown once).")
    return model
