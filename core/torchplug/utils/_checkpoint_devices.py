"""Device, random-state and autocast bookkeeping of ``torchplug.utils.checkpoint``.

A checkpointed function runs twice (forward and recomputation); what it computes must not change in
between, so the random state of the CPU generator and of the devices its tensor arguments live on,
and the autocast state, are captured at the forward and reinstated around the recomputation.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import torchplug

__all__ = ["DefaultDeviceType", "get_device_states", "set_device_states", "infer_device_type", "device_module",
           "device_initialized", "autocast_kwargs", "recompute_context"]


def _tensors(args: Any) -> Iterator[Any]:
    """The tensors in ``args``, nested lists, tuples and dicts included (as PyTorch's tree_map visits them)."""
    for a in args:
        if isinstance(a, torchplug.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _tensors(a)
        elif isinstance(a, dict):
            yield from _tensors(a.values())


class DefaultDeviceType:
    """The device type whose random state checkpoint saves when no argument is on a non-CPU device:
    the current accelerator's type, else ``"cpu"``, unless set with :meth:`set_device_type`."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The current default device type for checkpointing."""
        if not DefaultDeviceType._default_device_type:
            acc = torchplug.accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc is not None else "cpu"
        return DefaultDeviceType._default_device_type


def infer_device_type(*args: Any) -> str:
    """The device type of the non-CPU tensors among ``args`` (cuda first), else the default one."""
    device_types = [t.device.type for t in _tensors(args) if t.device.type != "cpu"]
    kinds = set(device_types)
    if len(kinds) > 1:
        warnings.warn(
            "Tensor arguments, excluding CPU tensors, are detected on at least two types of devices. Device state "
            "will only be saved for devices of a single device type, and the remaining devices will be ignored. "
            "Consequently, if any checkpointed functions involve randomness, this may result in incorrect "
            "gradients. (Note that if CUDA devices are among the devices detected, it will be prioritized; "
            "otherwise, the first device encountered will be selected.)"
            f"\nDevice types: {sorted(kinds)} first device type: {device_types[0]}", stacklevel=3)
    if not device_types:
        return DefaultDeviceType.get_device_type()
    return "cuda" if "cuda" in kinds else device_types[0]


def device_module(device_type: str) -> Any:
    """``torchplug.<device_type>`` (``torchplug.cuda``...), or None for cpu and meta, which have no
    per-device random state to save."""
    if device_type in ("cpu", "meta"):
        return None
    return getattr(torchplug, device_type, None)


def device_initialized(module: Any) -> bool:
    """Whether the device runtime ``module`` (``torchplug.cuda``...) has started; checkpoint saves its random
    state only then, so that it never starts one itself (PyTorch avoids creating a CUDA context likewise)."""
    if module is None:
        return False
    is_initialized = getattr(module, "is_initialized", None)
    return bool(is_initialized()) if is_initialized is not None else False


def get_device_states(*args: Any) -> tuple[list[int], list[Any]]:
    """The device indices of the non-CPU tensors among ``args`` and the random state of each."""
    ids = [t.get_device() for t in _tensors(args) if t.device.type not in ("cpu", "meta")]
    module = device_module(infer_device_type(*args))
    states = []
    for device_id in ids:
        with module.device(device_id):
            states.append(module.get_rng_state())
    return ids, states


def set_device_states(devices: Any, states: Any, *, device_type: str | None = None) -> None:
    """Set the random state of each device in ``devices`` (indices of ``device_type``, by default
    :meth:`DefaultDeviceType.get_device_type`) to the matching entry of ``states``."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = getattr(torchplug, device_type)
    for device, state in zip(devices, states):
        with module.device(device):
            module.set_rng_state(state)


def autocast_kwargs(device_type: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The autocast state of ``device_type`` (None when it has no autocast) and of the CPU (None
    without the amp plugin, which provides autocast)."""
    amp = getattr(torchplug, "amp", None)
    if amp is None:
        return None, None
    device = None
    if device_type != "cpu" and amp.is_autocast_available(device_type):
        device = {"enabled": torchplug.is_autocast_enabled(device_type),
                  "dtype": torchplug.get_autocast_dtype(device_type),
                  "cache_enabled": torchplug.is_autocast_cache_enabled()}
    cpu = {"enabled": torchplug.is_autocast_enabled("cpu"), "dtype": torchplug.get_autocast_dtype("cpu"),
           "cache_enabled": torchplug.is_autocast_cache_enabled()}
    return device, cpu


@contextlib.contextmanager
def recompute_context(cpu_state: Any, devices: list[int], device_states: list[Any], device_type: str,
                      device_autocast: dict[str, Any] | None, cpu_autocast: dict[str, Any] | None) -> Iterator[None]:
    """Run a recomputation from the forward's random states (when ``cpu_state`` is not None) and
    autocast state; the ambient random states are restored afterwards."""
    module = device_module(device_type) if devices else None
    if cpu_state is not None:
        ambient = torchplug.get_rng_state()
        ambient_devices = []
        for d in devices:
            with module.device(d):
                ambient_devices.append(module.get_rng_state())
        torchplug.set_rng_state(cpu_state)
        if devices:
            set_device_states(devices, device_states, device_type=device_type)
    try:
        with contextlib.ExitStack() as stack:
            if device_autocast is not None:
                stack.enter_context(torchplug.amp.autocast(device_type=device_type, **device_autocast))
            if cpu_autocast is not None:  # disabled too: an ambient autocast must not apply
                stack.enter_context(torchplug.amp.autocast("cpu", **cpu_autocast))
            yield
    finally:
        if cpu_state is not None:
            torchplug.set_rng_state(ambient)
            if devices:
                set_device_states(devices, ambient_devices, device_type=device_type)
