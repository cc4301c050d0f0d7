"""Anomaly detection: record each node's forward traceback and fail on NaN gradients."""

from __future__ import annotations

from typing import Any

from torchplug_autograd._state import GLOBAL
from torchplug_autograd.autograd.grad_mode import _DecoratorContextManager

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    return GLOBAL.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return GLOBAL.anomaly_check_nan


class detect_anomaly(_DecoratorContextManager):
    """Inside the block every node remembers the forward call that created it; a backward that
    produces NaN raises an error naming that node and showing the forward traceback."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = (GLOBAL.anomaly, GLOBAL.anomaly_check_nan)
        GLOBAL.anomaly = True
        GLOBAL.anomaly_check_nan = self.check_nan

    def __exit__(self, *exc: Any) -> None:
        GLOBAL.anomaly, GLOBAL.anomaly_check_nan = self._prev

    def clone(self) -> Any:
        return self.__class__(self.check_nan)


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (GLOBAL.anomaly, GLOBAL.anomaly_check_nan)
        self.mode = bool(mode)
        self.check_nan = check_nan
        GLOBAL.anomaly = self.mode
        GLOBAL.anomaly_check_nan = check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        GLOBAL.anomaly, GLOBAL.anomaly_check_nan = self._prev

    def clone(self) -> Any:
        return self.__class__(self.mode, self.check_nan)
