"""``ExponentialFamily``: the base of distributions whose density is ``exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

from typing import Any

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Exponential-family distributions; subclasses may describe themselves by ``_natural_params`` and
    ``_log_normalizer``.  Each member in this package defines its entropy in closed form where one exists."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError
