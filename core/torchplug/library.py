"""``torchplug.library``: define operators and register kernels, scoped and attributed.

Registrations live until :meth:`Library.close` (or the end of a ``with`` block), never until
garbage collection.  Kernels receive the op's arguments positionally, in schema order, with
defaults filled in.  ``Library`` and the kernel tables are the dispatch layer's
(:mod:`torchplug._dispatch.library`); the custom-operator API (``custom_op``, ``register_fake``,
``opcheck``...) is :mod:`torchplug._library`'s, imported on first use.
"""

from __future__ import annotations

from typing import Any

from torchplug._dispatch.library import (
    Library, KernelTable, fallthrough_kernel, RegistrationError, SchemaError, get_kernel, collect_tables,
)

__all__ = [
    "Library", "KernelTable", "fallthrough_kernel", "RegistrationError", "SchemaError", "get_kernel", "collect_tables",
    # custom operators (torchplug._library, loaded on first use)
    "custom_op", "CustomOpDef", "OpLibrary", "infer_schema", "register_kernel", "register_fake", "register_autograd",
    "register_autocast", "opcheck", "get_ctx", "FakeImplCtx", "define", "impl", "register_vmap",
]

# name -> module of torchplug._library that defines it; imported on first access so that
# ``import torchplug`` (which needs Library) does not pay for the custom-op machinery.
_LAZY = {
    "custom_op": "custom_ops", "CustomOpDef": "custom_ops", "OpLibrary": "custom_ops",
    "register_kernel": "custom_ops", "register_fake": "custom_ops", "register_autograd": "custom_ops",
    "register_autocast": "custom_ops", "infer_schema": "infer_schema", "opcheck": "opcheck",
    "get_ctx": "fake", "FakeImplCtx": "fake", "define": "low_level", "impl": "low_level",
    "register_vmap": "custom_ops",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"torchplug._library.{module}"), name)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"torchplug._library.{module}"), name)


from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# the lookup above first; its plain "has no attribute" for a name PyTorch has becomes "not supported yet"
__getattr__ = _fallback_getattr("torch.library", __name__, __getattr__)
