"""``torchplug.nn.factory_kwargs``: the canonical factory keyword arguments of a module's ``**kwargs``."""

from __future__ import annotations

from typing import Any

__all__ = ["factory_kwargs"]


def factory_kwargs(kwargs: Any) -> dict[str, Any]:
    """``device``/``dtype``/``memory_format`` from ``kwargs`` (and its ``factory_kwargs`` dict) for a factory call;
    any other key, or one given twice, raises ``TypeError``."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
