"""PyTorch's public names (the reference) and the "not supported yet" errors for those torchplug lacks.

A layer just above ``_base``: every public module's ``__getattr__`` ends here.  The coverage report
built on the reference (``python -m torchplug --compat``, ``docs/compat.md``) is :mod:`torchplug._doctor`'s.
Importing this package reads no file: the reference is loaded on first need (a coverage report
or a failed attribute lookup).
"""

from __future__ import annotations

from torchplug._compat.missing import attach, attach_loaded, fallback_getattr, missing_attribute, unsupported_error
from torchplug._compat.reference import MODULES, has_name, torchplug_name

__all__ = ["MODULES", "attach", "attach_loaded", "fallback_getattr", "has_name", "missing_attribute",
           "torchplug_name", "unsupported_error"]
