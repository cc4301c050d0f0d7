"""``torch.<name>`` as the op layer's hand-written functions see it, without importing ``torchplug`` itself.

Functions such as ``torch.lu`` or ``Tensor.share_memory_`` are written against the torch API
(``torch.where``, ``torch.linalg.solve``, ``torch.tensor``).  The root package assembles that
API from every layer, so importing it from here would be a cycle.  :data:`TORCH` answers the same
names from where they are defined: the op layer's function table, the layers below it, and (for
what plugins provide, such as ``torch.autograd``) the plugin layer's exposure registry.
"""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as _dtype, layout as _layout
from torchplug._base.upcalls import exposed
from torchplug._runtime import device as _device
from torchplug._tensor import creation as _creation, legacy_types as _legacy_types
from torchplug._tensor.tensor import _no_grad

__all__ = ["TORCH"]


class _TorchNames:
    """Attribute access resolves ``torch.<name>``; names defined by the core are cached on first use."""

    def __getattr__(self, name: str) -> Any:
        from torchplug._ops import linalg
        from torchplug._ops.surface import FUNCTIONS

        if name == "linalg":
            value: Any = linalg
        elif name == "no_grad":
            value = _no_grad  # excludes the autograd keys, as the plugin's no_grad does for dispatch
        elif name in FUNCTIONS:
            value = FUNCTIONS[name]
        else:
            for module in (_creation, _dtype, _layout, _device):
                if name in getattr(module, "__all__", ()):
                    value = getattr(module, name)
                    break
            else:
                types = _legacy_types.host_tensor_types()
                if name in types:
                    value = types[name]
                else:
                    return exposed(name)  # a plugin's (torch.autograd): not cached, the plugin may unload
        setattr(self, name, value)
        return value


TORCH = _TorchNames()
