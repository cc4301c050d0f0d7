"""Runnable examples: ``python -m torchplug.examples.<name>`` (they need the ``examples`` extra)."""

from __future__ import annotations

__all__: list[str] = []
