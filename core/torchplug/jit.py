"""``torchplug.jit``: TorchScript's entry points, running eagerly.

torchplug has no TorchScript compiler: :func:`script` and :func:`trace` return the module or
function they are given, which computes the same outputs in Python (one warning per process
says so).  The decorators (:func:`ignore`, :func:`unused`, :func:`export`...) return what they
decorate.  :func:`save` and :func:`load` raise ``NotImplementedError``: there is no TorchScript
archive to write or read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from torchplug._compile import warn_once

__all__ = [
    "script", "trace", "trace_module", "save", "load", "ignore", "unused", "export", "interface", "is_scripting",
    "is_tracing", "annotate", "Attribute", "Final", "ScriptModule", "ScriptFunction", "fork", "wait", "Future",
    "freeze", "optimize_for_inference", "script_if_tracing", "Error",
]

_F = TypeVar("_F")
_EAGER = ("torchplug.jit.{what} does not compile: torchplug has no TorchScript compiler, so it returns the {kind} "
          "unchanged and it runs as Python, with the same outputs (this warning is shown once).")


class ScriptModule:
    """Never instantiated: nothing is ever scripted, so ``isinstance(m, ScriptModule)`` is False."""


class ScriptFunction:
    """Never instantiated: nothing is ever scripted."""


class Error(RuntimeError):
    """TorchScript's error type (never raised by the eager stand-ins)."""


def _kind(obj: Any) -> str:
    from torchplug._tensor.tensor import Tensor

    return "module" if hasattr(obj, "forward") and not isinstance(obj, Tensor) else "function"


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None, example_inputs: Any = None) -> Any:
    """Returns ``obj`` (a module, function or class) unchanged: it runs eagerly."""
    warn_once("jit.script", _EAGER.format(what="script", kind=_kind(obj)))
    return obj


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> Any:
    """Returns ``func`` (a module or function) unchanged: it runs eagerly on any input, not only
    on inputs shaped like ``example_inputs``."""
    if not callable(func):
        raise RuntimeError(f"torchplug.jit.trace expects a callable (a module or function), got {type(func).__name__}")
    warn_once("jit.trace", _EAGER.format(what="trace", kind=_kind(func)))
    return func


def trace_module(mod: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """Returns ``mod`` unchanged (see :func:`trace`)."""
    warn_once("jit.trace", _EAGER.format(what="trace_module", kind="module"))
    return mod


def _no_archive(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"torchplug.jit.{what} is not supported: torchplug has no TorchScript compiler, so there is no TorchScript "
        "archive to write or read (torchplug.jit.script/trace return the Python module itself). Save the weights "
        "with torchplug.save(model.state_dict(), path), and rebuild the model in Python and call "
        "model.load_state_dict(torchplug.load(path)) to restore them."
    )


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Raises ``NotImplementedError``: there is no TorchScript archive (see the message for what to do)."""
    raise _no_archive("save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None, _restore_shapes: bool = False, **kwargs: Any) -> Any:
    """Raises ``NotImplementedError``: torchplug cannot read TorchScript archives."""
    raise _no_archive("load")


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@ignore`` or ``@ignore(drop=True)``: returns the function unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: _F) -> _F:
    """Returns ``fn`` unchanged."""
    return fn


def export(fn: _F) -> _F:
    """Returns ``fn`` unchanged."""
    return fn


def interface(obj: _F) -> _F:
    """Returns ``obj`` unchanged."""
    return obj


def script_if_tracing(fn: _F) -> _F:
    """Returns ``fn`` unchanged."""
    return fn


def is_scripting() -> bool:
    """False: code never runs under TorchScript here."""
    return False


def is_tracing() -> bool:
    """False: code is never traced here."""
    return False


def annotate(the_type: Any, the_value: _F) -> _F:
    """Returns ``the_value`` (a type hint for the TorchScript compiler)."""
    return the_value


def Attribute(value: _F, type: Any) -> _F:  # noqa: N802, A002 - PyTorch's names
    """Returns ``value`` (declares a module attribute's type for TorchScript)."""
    return value


class Future:
    """The result of :func:`fork`: already computed (the function ran when forked)."""

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self._value = value
        self._error = error

    def wait(self) -> Any:
        """The function's result (its exception is raised here, as with PyTorch's futures)."""
        if self._error is not None:
            raise self._error
        return self._value

    def done(self) -> bool:
        return True

    def value(self) -> Any:
        return self.wait()


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Run ``func(*args, **kwargs)`` now and return a :class:`Future` holding its result."""
    try:
        return Future(func(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - delivered by wait(), as an asynchronous fork would
        return Future(error=exc)


def wait(future: Future) -> Any:
    """The result of a :func:`fork`."""
    return future.wait()


def freeze(mod: _F, preserved_attrs: Any = None, optimize_numerics: bool = True) -> _F:
    """Returns ``mod`` unchanged (nothing was scripted, so nothing is frozen)."""
    return mod


def optimize_for_inference(mod: _F, other_methods: Any = None) -> _F:
    """Returns ``mod`` unchanged."""
    return mod


