"""``torchplug.nn``: Module, Parameter, containers, layers, losses, ``functional`` and ``init``."""

from __future__ import annotations

from . import functional, grad, init, parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import modules as _modules_pkg  # noqa: E402
from .modules.module import Module  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from . import utils  # noqa: F401,E402
from . import parallel  # noqa: F401,E402
from . import attention  # noqa: F401,E402
from ._factory import factory_kwargs  # noqa: E402
from ._functional_more import LinearCrossEntropyOptions  # noqa: E402

__all__ = ["Module", "Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils",
           "parameter", "modules", "parallel", "factory_kwargs", "LinearCrossEntropyOptions"]
__all__ += [n for n in dir(_modules_pkg) if not n.startswith("_") and n[0].isupper()]
modules = _modules_pkg
