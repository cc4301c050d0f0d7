"""PyTorch's deprecated per-device autocast switches at top level (``torch.is_autocast_cpu_enabled()``,
``torch.set_autocast_gpu_dtype(...)``...) over the device-type API of :mod:`torchplug_amp.state`.

Each warns ``DeprecationWarning`` naming its replacement, as PyTorch does.  For a device type with no
backend installed (ipu, xla, or cuda without torchplug-cuda) the setting is kept here and read back,
since no op can run there anyway.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import torchplug

from . import state

__all__ = ["FUNCTIONS"]

# PyTorch's default lower-precision dtype per device type, for device types without a backend here
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16", "ipu": "float16", "xla": "bfloat16"}
_local_enabled: dict[str, bool] = {}
_local_dtype: dict[str, Any] = {}


def _has_backend(device_type: str) -> bool:
    from torchplug._runtime.backends import registered_backends

    return device_type in registered_backends()


def _warn(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def _getters(label: str, device_type: str) -> dict[str, Callable[..., Any]]:
    def is_enabled() -> bool:
        _warn(f"is_autocast_{label}_enabled()", f"is_autocast_enabled('{device_type}')")
        if _has_backend(device_type):
            return state.is_autocast_enabled(device_type)
        return _local_enabled.get(device_type, False)

    def set_enabled(enabled: bool) -> None:
        _warn(f"set_autocast_{label}_enabled(enabled)", f"set_autocast_enabled('{device_type}', enabled)")
        if _has_backend(device_type):
            state.set_autocast_enabled(device_type, enabled)
        else:
            _local_enabled[device_type] = bool(enabled)

    def get_dtype() -> Any:
        _warn(f"get_autocast_{label}_dtype()", f"get_autocast_dtype('{device_type}')")
        if _has_backend(device_type):
            return state.get_autocast_dtype(device_type)
        return _local_dtype.get(device_type, getattr(torchplug, _DEFAULT_DTYPE[device_type]))

    def set_dtype(dtype: Any) -> None:
        _warn(f"set_autocast_{label}_dtype(dtype)", f"set_autocast_dtype('{device_type}', dtype)")
        if _has_backend(device_type):
            state.set_autocast_dtype(device_type, dtype)
        elif not isinstance(dtype, torchplug.dtype):
            raise TypeError(f"set_autocast_{label}_dtype(): argument 'dtype' must be torch.dtype, not "
                            f"{type(dtype).__name__}")
        else:
            _local_dtype[device_type] = dtype

    functions = {f"get_autocast_{label}_dtype": get_dtype, f"set_autocast_{label}_dtype": set_dtype}
    if label != "gpu":  # PyTorch has no is/set_autocast_gpu_enabled (torch.is_autocast_enabled() is cuda's)
        functions[f"is_autocast_{label}_enabled"] = is_enabled
        functions[f"set_autocast_{label}_enabled"] = set_enabled
    for name, fn in functions.items():
        fn.__name__ = name
        fn.__doc__ = f"Deprecated: autocast's setting for device type {device_type!r} (see the module docstring)."
    return functions


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **_getters("cpu", "cpu"), **_getters("gpu", "cuda"), **_getters("ipu", "ipu"), **_getters("xla", "xla"),
}
