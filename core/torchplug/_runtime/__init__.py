"""Devices and what backs them: ``torchplug.device``, the backend registry and the contract a backend
fulfils (runtime, allocator, streams, RNG), storage, the caching-allocator protocol, streams and events,
random generators, the generated device modules (``torchplug.cuda``...) and their placeholders, and the
rules that choose the current accelerator.  ``registration`` assembles them when a device type arrives.

May import: ``_base``, ``_compat``, ``_dispatch``, ``_schemas``.
"""
