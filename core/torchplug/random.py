"""``torchplug.random``: seeding and state of the default generator, and ``fork_rng`` (as ``torch.random``)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from torchplug._runtime.generator import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng", "default_generator"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Restore the CPU generator's state, and those of ``devices`` of ``device_type``, on exit.

    ``device_type`` defaults to the current accelerator's type (else ``"cuda"``); ``devices``
    defaults to every device of that type (with a warning when there are several).
    """
    import torchplug

    if device_type == "meta":
        yield
        return
    acc = torchplug.accelerator.current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    device_mod = getattr(torchplug, device_type, None)
    if device_mod is None or not hasattr(device_mod, "get_rng_state"):
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register "
                           "a module by `torch._register_device_module`.")
    if not enabled:
        yield
        return
    global _fork_rng_warned_already
    if devices is None:
        num_devices = device_mod.device_count()
        if num_devices > 1 and not _fork_rng_warned_already:
            up = device_type.upper()
            warnings.warn(
                f"{up} reports that you have {num_devices} available devices, and you have used {_caller} without "
                f"explicitly specifying which devices are being used. For safety, we initialize *every* {up} device "
                f"by default, which can be quite slow if you have a lot of {up}s. If you know that you are only "
                f"making use of a few {up} devices, set the environment variable {up}_VISIBLE_DEVICES or the "
                f"'{_devices_kw}' keyword argument of {_caller} with the set of devices you are actually using.",
                stacklevel=3,
            )
            _fork_rng_warned_already = True
        devices = list(range(num_devices))
    else:
        devices = list(devices)
    cpu_rng_state = get_rng_state()
    device_rng_states = [device_mod.get_rng_state(device) for device in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for device, state in zip(devices, device_rng_states):
            device_mod.set_rng_state(state, device)
