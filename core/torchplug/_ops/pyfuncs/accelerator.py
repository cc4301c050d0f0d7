"""``torchplug.Stream``, ``torchplug.Event`` and ``torchplug.get_device_module``."""

from __future__ import annotations

from typing import Any

from torchplug._runtime.streams import Event, Stream

__all__ = ["FUNCTIONS", "get_device_module"]


def get_device_module(device: Any = None) -> Any:
    """The device module (``torchplug.cpu``, ``torchplug.cuda``, ...) of ``device`` (a device, a
    type string or None).  None means the current accelerator's module, or the host device's
    when there is no accelerator.  A well-known type without a backend gives its placeholder
    module (as ``torch.get_device_module('cuda')`` works on a build without CUDA); another
    unknown device type raises RuntimeError."""
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, backend_for, registered_backends
    from torchplug._runtime.device import device as _device

    if device is None:
        from torchplug._runtime.accelerator_choice import current_accelerator_type

        t = current_accelerator_type()
        if t is None:
            hosts = [b for b in registered_backends().values() if b.is_host]
            if not hosts:
                from torchplug._runtime.device import get_default_device

                return _module_of(get_default_device().type)
            return _module_of(hosts[0].device_type)
        return _module_of(t)
    if isinstance(device, str) and ":" not in device:
        known = WELL_KNOWN_DEVICE_TYPES.get(device)
        if known is not None and known.module:
            return _module_of(device)
        backend_for(device)  # the unknown-device error
        return _module_of(device)
    return _module_of(_device(device).type)


def _module_of(device_type: str) -> Any:
    """``torchplug.<device_type>``: what the backend exposed (torchplug.cuda has more than the
    generic surface), else its generic device module, else a well-known type's placeholder."""
    from types import ModuleType

    from torchplug._base.upcalls import exposed
    from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES, backend_for

    known = WELL_KNOWN_DEVICE_TYPES.get(device_type)
    if known is not None and known.module:
        return exposed(device_type)  # the plugin's module, else the backend's, else the placeholder
    try:
        found = exposed(device_type)
    except AttributeError:  # nothing exposed under that name
        found = None
    if isinstance(found, ModuleType):
        return found
    return backend_for(device_type).device_module


FUNCTIONS = {"Stream": Stream, "Event": Event, "get_device_module": get_device_module}
