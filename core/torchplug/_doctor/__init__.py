"""What ``python -m torchplug`` reports beyond the plugin table: how much of PyTorch's API torchplug covers.

The top of the house: it looks at the assembled ``torchplug`` package from outside, as user code
does, so it may import anything; nothing in the core imports it.
"""

from __future__ import annotations

__all__: list[str] = []
