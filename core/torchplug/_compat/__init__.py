"""What of PyTorch's public API torchplug supports: the reference, the coverage and the errors.

``python -m torchplug --compat`` prints the coverage; ``docs/compat.md`` is generated from it.
Importing this package reads no file: the reference is loaded on first need (a coverage report
or a failed attribute lookup).
"""

from __future__ import annotations

from .missing import attach, attach_loaded, fallback_getattr, missing_attribute, unsupported_error
from .reference import MODULES, has_name, torchplug_name

__all__ = ["MODULES", "attach", "attach_loaded", "fallback_getattr", "has_name", "missing_attribute",
           "torchplug_name", "unsupported_error"]
