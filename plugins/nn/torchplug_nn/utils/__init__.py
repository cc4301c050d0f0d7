"""``torchplug.utils`` pieces provided by the nn plugin (``data``)."""

from __future__ import annotations

from . import data

__all__ = ["data"]
