"""Custom operators: ``custom_op``, fake/autograd/autocast registration, ``opcheck``.

Public names live in :mod:`torchplug.library`; this package holds one module per job.

May import: every layer below (``_base`` ... ``_plugins``).
"""

from __future__ import annotations

__all__: list[str] = []
