"""torchplug-autograd: reverse-mode automatic differentiation as a core-layer plugin.

This module holds only the plugin hooks.  ``torchplug.autograd`` is the public package
(:mod:`torchplug_autograd.autograd`); the grad-mode names are also exposed on ``torchplug``.
"""

from __future__ import annotations

from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_kernels", "torchplug_configure"]

_GRAD_MODE_NAMES = ("no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
                    "is_inference_mode_enabled")


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from ._inference import inference_fallback
    from ._register import register_all

    lib = ctx.library("aten", "IMPL")
    register_all(lib)
    lib.fallback(inference_fallback, "Inference", with_keyset=True)


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    from torchplug._tensor.tensor import autograd_hooks

    from . import _graph, _saved, _tensor_api, autograd
    from ._views import check_view_write

    _graph.SAVED_VIEW[:] = [_saved]  # grad_fn._saved_<x> / _raw_saved_<x>

    ctx.expose("autograd", autograd)
    for name in _GRAD_MODE_NAMES:
        ctx.expose(name, getattr(autograd, name))
    autograd_hooks.set_requires_grad = _tensor_api.set_requires_grad
    autograd_hooks.tensor_api = _tensor_api
    autograd_hooks.check_view_write = check_view_write
    autograd_hooks.status = "loaded"
