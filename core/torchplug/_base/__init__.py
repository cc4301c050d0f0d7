"""The vocabulary every other layer speaks, with no dependency inside torchplug: dtypes and type promotion,
layouts and memory formats, ``Size``, the global flags (determinism, matmul precision), the check for a
shadowing ``torchplug`` folder, and the upcall slots through which lower layers reach the plugin layer
(:mod:`torchplug._base.upcalls`).

May import: nothing of torchplug.
"""
