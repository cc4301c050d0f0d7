"""Warnings that point at the user's line, however deep in torchplug they are raised."""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn_at_caller"]

# A frame belongs to torchplug when its file lies in one of the distributions' package folders
# (the core and every ``torchplug_*`` backend or plugin), found from this file's place.
_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_torchplug(filename: str) -> bool:
    if filename.startswith(_CORE_DIR) or filename.startswith("<torchplug"):  # generated entry points too
        return True
    parent = os.path.basename(os.path.dirname(filename))
    return parent.startswith("torchplug_") or os.sep + "torchplug_" in filename


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` with the stack level of the first frame outside torchplug (the user's call)."""
    frame = sys._getframe(1)
    level = 2  # warnings.warn counts this function as level 1
    while frame is not None and _in_torchplug(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
