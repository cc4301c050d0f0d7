"""``torchplug.nn.functional``: the core's nn kernels where it has them, reference compositions otherwise."""

from __future__ import annotations

import importlib
from typing import Any as _Any

from . import _compositions
from ._compositions import *  # noqa: F401,F403
from ._compositions import __all__ as _COMPOSED

__all__ = list(_COMPOSED)


def _core_impl() -> _Any:
    try:
        return importlib.import_module("torchplug._ops.nn_functional")
    except ImportError:
        return None


_impl = _core_impl()
if _impl is not None:
    for _name in getattr(_impl, "__all__", [n for n in dir(_impl) if not n.startswith("_")]):
        _obj = getattr(_impl, _name, None)
        if callable(_obj):
            globals()[_name] = _obj
            if _name not in __all__:
                __all__.append(_name)

_ = _compositions

# Functions neither the core nor the reference compositions provide (losses, sampling, pooling extras).
from . import _ctc, _functional_losses, _functional_more, _functional_spatial  # noqa: E402
from . import grad  # noqa: E402,F401  (torch.nn.functional.grad is torch.nn.grad, as in PyTorch)

for _mod in (_functional_losses, _functional_spatial, _ctc, _functional_more):
    for _name in _mod.__all__:
        if _name not in __all__:  # a core kernel of the same name wins
            globals()[_name] = getattr(_mod, _name)
            __all__.append(_name)

del annotations  # the __future__ import's name is not part of torch.nn.functional
