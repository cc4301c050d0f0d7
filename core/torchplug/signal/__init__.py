"""``torchplug.signal``: signal-processing helpers (``torchplug.signal.windows``), as ``torch.signal``."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
