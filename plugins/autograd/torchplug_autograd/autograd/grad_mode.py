"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode`` (thread-local)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from torchplug._dispatch.tls import tls

from torchplug_autograd._inference import INFERENCE_MASK
from torchplug_autograd._state import AUTOGRAD_BAND, STATE, set_grad_mode

__all__ = [
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "set_multithreading_enabled",
]

_NOT_BAND = ~AUTOGRAD_BAND
_NOT_INFERENCE = ~INFERENCE_MASK


def is_grad_enabled() -> bool:
    """True if gradients are recorded on this thread."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` on this thread."""
    return STATE.inference


class _DecoratorContextManager:
    """Usable as ``with mode():``, ``@mode()`` and ``@mode`` (generators included)."""

    def __call__(self, func: Any) -> Any:
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:  # noqa: BLE001 - forwarded into the generator
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return wrapper

    def clone(self) -> Any:
        return self.__class__()


class _GradModeBase(_DecoratorContextManager):
    _target = True

    def __enter__(self) -> None:
        self._prev = (STATE.grad_enabled, tls.mask & AUTOGRAD_BAND)
        set_grad_mode(self._target)

    def __exit__(self, *exc: Any) -> None:
        flag, band = self._prev
        STATE.grad_enabled = flag
        tls.mask = (tls.mask & _NOT_BAND) | band


class no_grad(_GradModeBase):
    """Context manager / decorator that disables gradient recording on this thread."""

    _target = False

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is not None and callable(orig_func):  # bare @no_grad
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func: Any = None) -> None:
        pass


class enable_grad(_GradModeBase):
    """Context manager / decorator that enables gradient recording on this thread."""

    _target = True

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func: Any = None) -> None:
        pass


class set_grad_enabled(_GradModeBase):
    """Set grad mode now; as a context manager, restore the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self._target = bool(mode)
        self._prev = (STATE.grad_enabled, tls.mask & AUTOGRAD_BAND)
        set_grad_mode(self._target)

    def __enter__(self) -> None:
        pass

    def clone(self) -> Any:
        return self.__class__(self._target)


class inference_mode(_DecoratorContextManager):
    """Context manager / decorator for PyTorch's InferenceMode: ``no_grad``, and every tensor made inside is
    an *inference tensor* (``is_inference()``), which autograd may not record or save, and which cannot be
    written in place outside the mode.  ``inference_mode(False)`` leaves the mode and enables grad.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # bare @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = (STATE.grad_enabled, STATE.inference, tls.mask & AUTOGRAD_BAND, tls.include & INFERENCE_MASK)
        # the Inference key marks what ops make in the mode (see torchplug_autograd._inference)
        if self.mode:
            STATE.inference = True
            tls.include |= INFERENCE_MASK
            set_grad_mode(False)
        else:  # PyTorch's InferenceMode(false): normal mode, grad mode on
            STATE.inference = False
            tls.include &= _NOT_INFERENCE
            set_grad_mode(True)

    def __exit__(self, *exc: Any) -> None:
        flag, inference, band, included = self._prev
        STATE.grad_enabled = flag
        STATE.inference = inference
        tls.mask = (tls.mask & _NOT_BAND) | band
        tls.include = (tls.include & _NOT_INFERENCE) | included

    def clone(self) -> Any:
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward on this thread (a function call, context manager or decorator;
    leaving the context restores the previous setting).

    torchplug's engine runs backward on the calling thread in both modes, so the thread-local flag is
    recorded (and restored) but changes no result.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = STATE.multithreading
        STATE.multithreading = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        STATE.multithreading = self.prev

    def clone(self) -> Any:
        return self.__class__(self.mode)
