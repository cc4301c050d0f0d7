"""Tensor methods of PyTorch's surface with plain meanings on dense tensors: ``as_subclass``, ``to_dense``,
``sparse_dim``/``dense_dim``, ``module_load`` (what ``load_state_dict`` calls when swapping parameters) and the
removed ``volatile`` flag (always False, with PyTorch's warnings)."""

from __future__ import annotations

import warnings
from typing import Any

from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]

_SLOTS = ("_data", "_dtype", "_device", "_keyset", "_storage", "_base", "_requires_grad", "_grad", "_grad_fn",
          "_autograd_meta")


def _as_subclass(self: Tensor, cls: Any) -> Tensor:
    """An instance of ``cls`` (a Tensor subclass) sharing this tensor's data, still in the autograd graph
    (recorded as an alias, as PyTorch does); ``cls.__init__`` is not called."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    alias = A.alias(self)
    out = object.__new__(cls)
    for slot in _SLOTS:
        setattr(out, slot, getattr(alias, slot))
    if alias.__dict__:
        out.__dict__.update(alias.__dict__)
    return out


def _to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """This (already dense) tensor, converted to ``dtype`` if given."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _sparse_dim(self: Tensor) -> int:
    """0: a dense tensor has no sparse dims."""
    return 0


def _dense_dim(self: Tensor) -> int:
    """Every dim of a dense tensor is dense."""
    return self.dim()


def _module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How ``load_state_dict`` turns the state-dict value ``other`` into this parameter's replacement:
    ``other.detach()`` with ``assign``, else ``self.copy_(other).detach()``."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _get_volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _set_volatile(self: Tensor, value: Any) -> None:
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


FUNCTIONS: dict[str, Any] = {}
METHODS: dict[str, Any] = {
    "as_subclass": _as_subclass, "to_dense": _to_dense, "sparse_dim": _sparse_dim, "dense_dim": _dense_dim,
    "module_load": _module_load, "volatile": property(_get_volatile, _set_volatile),
}
