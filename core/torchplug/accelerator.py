"""``torchplug.accelerator``: the current accelerator, its devices, streams and memory, device-generically.

Which device types are accelerators comes from registration alone: backends mark themselves
``is_accelerator`` with an ``accelerator_priority`` (and the ``platforms`` they can exist on).
cpu and meta are not accelerators.

Preference order of the registered accelerators (:func:`accelerators`):

1. the list given to :func:`set_accelerator_priority` (device types, most preferred first);
2. the ``TORCHPLUG_ACCELERATOR`` environment variable (a comma-separated list of the same);
3. each backend's ``accelerator_priority`` (higher first), then the device type's name.

The current accelerator (:func:`current_accelerator`):

- when 1 or 2 names registered accelerators, the first of those that is available, else the
  first of those (the user's choice stands even when it is unusable, so errors explain it);
- otherwise the most preferred accelerator that is available;
- when none is, the most preferred one that could be available on this system
  (``Backend.could_be_available()``: a macOS-only backend on Linux cannot); else None.

Asking availability calls the runtimes' ``is_available()`` (as ``torch.cuda.is_available()``
does), most preferred first, stopping at the first available one; nothing else of a device is
touched.  With no accelerator, the device and stream functions raise ``RuntimeError``;
:func:`is_available` is False and :func:`device_count` is 0.

The functions are the runtime layer's (:mod:`torchplug._runtime.accelerator`, with the rules above in
:mod:`torchplug._runtime.accelerator_choice`); this module is their public face.
"""

from __future__ import annotations

from torchplug._runtime.accelerator import (
    __all__, accelerators, current_accelerator, current_device_idx, current_device_index, current_stream, device_count,
    device_index, empty_cache, get_accelerator_priority, is_available, max_memory_allocated, max_memory_reserved,
    memory, memory_allocated, memory_reserved, memory_stats, reset_accumulated_memory_stats, reset_peak_memory_stats,
    set_accelerator_priority, set_device_idx, set_device_index, set_stream, synchronize,
)
from torchplug._runtime.accelerator_choice import (  # noqa: F401  (the rules' parts, for the doctor and tests)
    ENV_VAR, current_accelerator_choice, current_accelerator_type, no_accelerator_message,
)

from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# a name PyTorch has and torchplug lacks raises "not supported yet" (see docs/compat.md)
__getattr__ = _fallback_getattr("torch.accelerator", __name__)
