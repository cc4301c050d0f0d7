"""``torchplug.autocast``: mixed-precision regions, as a context manager or a decorator."""

from __future__ import annotations

import collections.abc
import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import torchplug
from torchplug._runtime.backends import registered_backends

from . import state as S
from .registry import REGISTRY

__all__ = ["autocast", "autocast_decorator", "is_autocast_available", "custom_fwd", "custom_bwd"]


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` has an autocast policy and a registered backend."""
    from torchplug._plugins import ensure_loaded

    ensure_loaded()
    if device_type not in REGISTRY.tables or device_type not in registered_backends():
        return False
    REGISTRY.ensure_kernels(device_type)
    return True


def autocast_decorator(autocast_instance: autocast, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
        with autocast_instance:
            return func(*args, **kwargs)

    return decorate_autocast


class autocast:
    """Run the ops of a region in an op-specific dtype chosen by the device's autocast policy.

    Args:
        device_type: the device type whose ops are autocast (``'cpu'``, ``'mps'``...).
        dtype: the lower-precision dtype; ``None`` uses :func:`torchplug.get_autocast_dtype`
            (bfloat16 on cpu, float16 on mps).
        enabled: ``False`` turns autocast off inside the region (regions nest).
        cache_enabled: cache lower-precision casts of float32 leaf weights inside the region;
            ``None`` keeps :func:`torchplug.is_autocast_cache_enabled`.

    The state is thread-local.  Lists are data: see :func:`torchplug.amp.explain`.

    Example:
        >>> with torchplug.autocast("cpu"):  # doctest: +SKIP
        ...     y = a @ b  # bfloat16
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.fast_dtype = S.get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = S.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        supported = REGISTRY.tables[device_type].supported_dtypes
        if enabled and self.fast_dtype not in supported:
            name = device_type.upper()
            warnings.warn(
                f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                f"{name} Autocast only supports dtypes of " + ", ".join(map(str, supported)) + " currently.",
                stacklevel=2,
            )
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self) -> autocast:
        saved = (
            S.is_autocast_cache_enabled(),
            S.is_autocast_enabled(self.device),
            S.get_autocast_dtype(self.device),
        )
        S.STATE.saved.append((self, saved))
        S.set_autocast_enabled(self.device, self._enabled)
        S.set_autocast_dtype(self.device, self.fast_dtype)
        S.autocast_increment_nesting()
        S.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        # Saved states live on the thread, so one instance may decorate recursive calls.
        stack = S.STATE.saved
        index = next(i for i in range(len(stack) - 1, -1, -1) if stack[i][0] is self)
        cache_enabled, enabled, dtype = stack.pop(index)[1]
        if S.autocast_decrement_nesting() == 0:
            S.clear_autocast_cache()
        S.set_autocast_enabled(self.device, enabled)
        S.set_autocast_dtype(self.device, dtype)
        S.set_autocast_cache_enabled(cache_enabled)
        return False

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )
        return autocast_decorator(self, func)

    def __repr__(self) -> str:
        return f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled}, cache_enabled={self._cache_enabled})"


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    """Cast floating tensors (not float64) of ``device_type`` in a (nested) container to ``dtype``."""
    if isinstance(value, torchplug.Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype is not torchplug.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorator for ``forward`` of a custom ``autograd.Function``.

    With ``cast_inputs=dtype`` inside an enabled region, floating tensors are cast to ``dtype``
    and ``forward`` runs with autocast disabled; with ``None`` it runs under the current state.
    Outside autocast it does nothing.
    """
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = S.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = S.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_autocast = S.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_autocast:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """Decorator for ``backward`` of a custom ``autograd.Function``: runs it with the autocast
    state its ``forward`` had (requires ``forward`` to be decorated with :func:`custom_fwd`)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
