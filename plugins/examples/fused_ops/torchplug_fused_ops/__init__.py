"""torchplug-fused-ops: an example op-library plugin.

Importing this package only declares the ops (``ops.OPS``); the ``torchplug_register_ops``
hook installs them when torchplug loads its plugins, so they appear under
``torchplug.ops.fused`` and in ``python -m torchplug``, and disappear when the plugin is
blocked (``TORCHPLUG_BLOCK_PLUGINS=fused_ops``).
"""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

from .ops import OPS, bias_gelu, bias_gelu_backward, rms_norm

__all__ = ["torchplug_register_ops", "OPS", "bias_gelu", "bias_gelu_backward", "rms_norm"]


@hookimpl
def torchplug_register_ops(ctx: Any) -> None:
    OPS.register(ctx)
