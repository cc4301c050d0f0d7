"""What plugins expose as ``torchplug.<name>``: the registry.

A plugin calls ``ctx.expose("autograd", module)`` (or any object) from a hook; afterwards
``torchplug.autograd``, ``import torchplug.autograd`` and ``from torchplug.autograd.graph
import ...`` all resolve to the plugin's module and its submodules (:mod:`torchplug._plugins.lookup`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from torchplug._runtime.backends import WELL_KNOWN_DEVICE_TYPES
from torchplug._runtime.device_placeholder import drop_cached

__all__ = ["EXPOSED", "EXPOSE_LISTENERS", "exposed_objects", "expose", "unexpose", "unexpose_plugin", "PROVIDERS", "SEPARATE_DISTRIBUTIONS"]

# name -> (object, plugin name)
EXPOSED: dict[str, tuple[Any, str]] = {}
# (name, object) -> None, told after each expose (the layer's lookup module subscribes, wired by torchplug's __init__)
EXPOSE_LISTENERS: list[Callable[[str, Any], None]] = []
# Names the core-layer plugins provide, so a missing one can say which plugin to enable.
PROVIDERS = {
    "autograd": "autograd", "no_grad": "autograd", "enable_grad": "autograd", "set_grad_enabled": "autograd",
    "is_grad_enabled": "autograd", "inference_mode": "autograd", "is_inference_mode_enabled": "autograd",
    "nn": "nn", "optim": "nn", "save": "nn", "load": "nn", "amp": "amp", "autocast": "amp",
    "distributed": "distributed", "distributions": "distributions", "func": "func", "vmap": "func",
    "profiler": "profiler",
    # ATen's loss operators torch has at the top level (the nn plugin's nn/_aten_losses.py)...
    "cosine_embedding_loss": "nn", "margin_ranking_loss": "nn", "hinge_embedding_loss": "nn",
    "triplet_margin_loss": "nn", "poisson_nll_loss": "nn", "ctc_loss": "nn",
    # and its sampling-grid operators (nn/_aten_spatial.py)
    "grid_sampler": "nn", "grid_sampler_2d": "nn", "grid_sampler_3d": "nn", "affine_grid_generator": "nn",
}
# Plugins that are distributions of their own (not inside the torchplug distribution): the folder of the
# repository that installs each.
SEPARATE_DISTRIBUTIONS = {"distributed": "plugins/distributed", "distributions": "plugins/distributions",
                          "func": "plugins/func", "profiler": "plugins/profiler"}


def expose(name: str, obj: Any, plugin: str) -> None:
    existing = EXPOSED.get(name)
    if existing is not None and existing[0] is not obj:
        raise RuntimeError(f"torchplug.{name} is already provided by plugin {existing[1]!r}; plugin {plugin!r} tried to provide it too.")
    EXPOSED[name] = (obj, plugin)
    if name in WELL_KNOWN_DEVICE_TYPES:  # a backend's device module replaces the placeholder
        drop_cached(name)
    for listener in EXPOSE_LISTENERS:  # e.g. the legacy names of a device module (torchplug._plugins.lookup)
        listener(name, obj)
    if isinstance(obj, ModuleType):
        from torchplug._compat.missing import attach_loaded

        attach_loaded(exposed_objects())  # after the legacy names: a missing name of the module says it is not supported yet


def unexpose_plugin(plugin: str) -> None:
    package = sys.modules.get("torchplug")
    for name in [n for n, (_, p) in EXPOSED.items() if p == plugin]:
        del EXPOSED[name]
        sys.modules.pop(f"torchplug.{name}", None)
        if package is not None:
            package.__dict__.pop(name, None)  # drop the cached attribute


def unexpose(name: str) -> None:
    EXPOSED.pop(name, None)


def exposed_objects() -> dict[str, Any]:
    """``name -> object`` of everything plugins expose now."""
    return {name: obj for name, (obj, _) in EXPOSED.items()}
