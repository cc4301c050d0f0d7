"""``A.<op>``: direct handles to aten entry points for kernels written in Python.

``A.add`` is the generated entry of ``aten::add.Tensor`` (the ``Tensor``/``default``/``int``/
``self``/``memory_format`` overload, whichever exists); ``A["add.out"]`` names an overload.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._dispatch.dispatcher import DISPATCHER

__all__ = ["A"]

_PREFERRED = ("", ".Tensor", ".default", ".int", ".self", ".memory_format", ".Scalar", ".using_ints", ".dim_IntList", ".m", ".start_step", ".src", ".float", ".from", ".Tensor_Tensor")


class _Aten:
    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("__"):
            raise AttributeError(name)
        call = self._entry(name).call
        self.__dict__[name] = call
        return call

    def _entry(self, name: str) -> Any:
        """The operator entry ``A.<name>`` calls (an overload name, ``"add_.Tensor"``, names one exactly)."""
        if "." in name:
            return DISPATCHER.entry(f"aten::{name}")
        for suffix in _PREFERRED:
            entry = DISPATCHER.find(f"aten::{name}{suffix}")
            if entry is not None:
                return entry
        raise AttributeError(f"aten has no operator {name!r}")

    def __getitem__(self, name: str) -> Callable[..., Any]:
        call = DISPATCHER.entry(f"aten::{name}").call
        assert call is not None
        return call


A = _Aten()
