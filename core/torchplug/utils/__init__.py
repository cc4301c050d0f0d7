"""``torchplug.utils``: small utilities; submodules load on first use (this package imports nothing)."""

from __future__ import annotations

from typing import Any

__all__ = ["memory_estimate", "swap_tensors", "set_module"]


def __getattr__(name: str) -> Any:
    if name == "memory_estimate":
        from torchplug.utils._memory import memory_estimate

        return memory_estimate
    if name in ("swap_tensors", "set_module"):
        from torchplug.utils import _swap

        return getattr(_swap, name)
    import importlib

    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# the lookup above first; its plain "has no attribute" for a name PyTorch has becomes "not supported yet"
__getattr__ = _fallback_getattr("torch.utils", __name__, __getattr__)
