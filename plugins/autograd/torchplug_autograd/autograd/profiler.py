"""``torchplug.autograd.profiler``: PyTorch's legacy profiler names, provided by the profiler plugin
(``torchplug.profiler``); without that plugin each name raises an AttributeError saying how to install it."""

from __future__ import annotations

from typing import Any

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg", "kineto_available"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import torchplug

    return getattr(torchplug.profiler._legacy, name)  # the plugin's module: an AttributeError says what is missing
