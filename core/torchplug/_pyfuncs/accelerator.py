"""``torchplug.Stream``, ``torchplug.Event`` and ``torchplug.get_device_module``."""

from __future__ import annotations

from typing import Any

from .._streams import Event, Stream

__all__ = ["FUNCTIONS", "get_device_module"]


def get_device_module(device: Any = None) -> Any:
    """The device module (``torchplug.cpu``, ``torchplug.mps``, ...) of ``device`` (a device, a
    type string or None).  None means the current accelerator's module, or the host device's
    when there is no accelerator.  An unknown device type raises RuntimeError."""
    from .._backends import backend_for, registered_backends
    from .._device import device as _device

    if device is None:
        from ..accelerator import current_accelerator_type

        t = current_accelerator_type()
        if t is None:
            hosts = [b for b in registered_backends().values() if b.is_host]
            if not hosts:
                from .._device import get_default_device

                return backend_for(get_default_device().type).device_module
            return hosts[0].device_module
        return backend_for(t).device_module
    if isinstance(device, str) and ":" not in device:
        return backend_for(device).device_module
    return backend_for(_device(device).type).device_module


FUNCTIONS = {"Stream": Stream, "Event": Event, "get_device_module": get_device_module}
