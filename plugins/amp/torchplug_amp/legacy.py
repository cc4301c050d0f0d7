"""``torchplug.cuda.amp`` and ``torchplug.cpu.amp``: PyTorch's deprecated per-device aliases of amp.

``torchplug.cuda.amp.autocast(...)`` is ``torchplug.amp.autocast('cuda', ...)`` with PyTorch's
old signature and defaults, and ``GradScaler``, ``custom_fwd`` and ``custom_bwd`` likewise; each
warns ``FutureWarning`` as PyTorch does.  Where the device cannot be used (no backend, or the
backend reports it unavailable) autocast warns and does nothing and the scaler disables itself,
as PyTorch does on a machine without the device.  The core's placeholder and real device modules
reach these through :func:`device_amp_module`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torchplug

from . import autocast_mode as _am
from .grad_scaler import GradScaler as _GradScaler

__all__ = ["device_amp_module", "LEGACY_DEVICE_TYPES"]

# device type -> (autocast's default dtype name in PyTorch's signature, whether custom_fwd/bwd exist)
LEGACY_DEVICE_TYPES = {"cuda": ("float16", True), "cpu": ("bfloat16", False)}

_modules: dict[str, ModuleType] = {}
_lock = threading.Lock()


def _usable(device_type: str) -> bool:
    if not _am.is_autocast_available(device_type):
        return False
    try:
        return bool(torchplug.get_device_module(device_type).is_available())
    except Exception:  # noqa: BLE001 - a broken backend means "not usable"
        return False


def _label(device_type: str) -> str:
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES

    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    return known.label if known is not None and known.label else device_type


def device_amp_module(device_type: str) -> ModuleType:
    """``torchplug.<device_type>.amp`` (``'cuda'`` or ``'cpu'``); AttributeError for other types."""
    found = _modules.get(device_type)
    if found is not None:
        return found
    if device_type not in LEGACY_DEVICE_TYPES:
        raise AttributeError(f"module 'torchplug.{device_type}' has no attribute 'amp'")
    with _lock:
        return _modules.setdefault(device_type, _build(device_type))


def _build(device_type: str) -> ModuleType:
    default_name, has_custom = LEGACY_DEVICE_TYPES[device_type]
    default_dtype = getattr(torchplug, default_name)
    name = f"torchplug.{device_type}.amp"
    prefix = f"torch.{device_type}.amp"

    class autocast(_am.autocast):  # noqa: N801 - PyTorch's name
        __doc__ = (f"Deprecated alias of ``torchplug.amp.autocast({device_type!r}, ...)`` (warns FutureWarning); "
                   f"does nothing where {device_type!r} cannot be used.")

        def __init__(self, enabled: bool = True, dtype: Any = default_dtype, cache_enabled: bool = True) -> None:
            warnings.warn(f"`{prefix}.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device_type}', args...)` instead.", FutureWarning, stacklevel=2)
            self._unusable = not _usable(device_type)
            if self._unusable:
                if enabled:
                    warnings.warn(f"{_label(device_type)} is not available. Disabling autocast.", UserWarning, stacklevel=2)
                self.device, self.fast_dtype, self._enabled, self._cache_enabled = device_type, dtype, False, cache_enabled
                return
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

        def __enter__(self) -> Any:
            return self if self._unusable else super().__enter__()

        def __exit__(self, *exc: Any) -> bool:
            return False if self._unusable else super().__exit__(*exc)

    class GradScaler(_GradScaler):
        __doc__ = f"Deprecated alias of ``torchplug.amp.GradScaler({device_type!r}, ...)`` (warns FutureWarning)."

        def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                     growth_interval: int = 2000, enabled: bool = True) -> None:
            warnings.warn(f"`{prefix}.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device_type}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    mod = ModuleType(name, __doc__)
    for cls in (autocast, GradScaler):
        cls.__module__ = name
        cls.__qualname__ = cls.__name__
        setattr(mod, cls.__name__, cls)
    names = ["autocast", "GradScaler"]
    if has_custom:
        def custom_fwd(fwd: Callable[..., Any] | None = None, *, cast_inputs: Any = None) -> Any:
            """Deprecated alias of ``torchplug.amp.custom_fwd(..., device_type=...)``."""
            warnings.warn(f"`{prefix}.custom_fwd(args...)` is deprecated. Please use "
                          f"`torch.amp.custom_fwd(args..., device_type='{device_type}')` instead.",
                          FutureWarning, stacklevel=2)
            return _am.custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

        def custom_bwd(bwd: Callable[..., Any]) -> Any:
            """Deprecated alias of ``torchplug.amp.custom_bwd(..., device_type=...)``."""
            warnings.warn(f"`{prefix}.custom_bwd(args...)` is deprecated. Please use "
                          f"`torch.amp.custom_bwd(args..., device_type='{device_type}')` instead.",
                          FutureWarning, stacklevel=2)
            return _am.custom_bwd(bwd, device_type=device_type)

        for fn in (custom_fwd, custom_bwd):
            fn.__module__ = name
            setattr(mod, fn.__name__, fn)
        names += ["custom_fwd", "custom_bwd"]
    mod.__all__ = names
    return mod
