"""``torchplug.utils.data``: datasets, samplers and ``DataLoader``, provided by the ``nn`` plugin.

The nn plugin exposes its implementation under the internal key ``"utils.data"``
(``ctx.expose("utils.data", module)``); this module re-exports it, so a blocked or missing
plugin gives a clear ImportError instead of a half-working module.
"""

from __future__ import annotations

from typing import Any

from torchplug._plugins.exposure import EXPOSED
from torchplug._plugins.manager import MANAGER


def _provider() -> Any:
    MANAGER.ensure_loaded()
    found = EXPOSED.get("utils.data")
    if found is not None:
        return found[0]
    record = MANAGER.records.get("nn")
    state = "not installed" if record is None else (record.reason or record.status)
    raise ImportError(
        f"torchplug.utils.data is provided by the 'nn' plugin, which is {state}. It ships with torchplug: "
        "remove it from TORCHPLUG_BLOCK_PLUGINS, unset TORCHPLUG_DISABLE_PLUGIN_AUTOLOAD, or load it with "
        "torchplug.plugins.load_plugin(...). See `python -m torchplug`."
    )


_impl = _provider()
__all__ = list(_impl.__all__)
globals().update({name: getattr(_impl, name) for name in __all__})


def __getattr__(name: str) -> Any:
    # Submodules and private helpers of the implementation (e.g. ``dataloader``, ``sampler``).
    try:
        return getattr(_impl, name)
    except AttributeError:
        raise AttributeError(f"module 'torchplug.utils.data' has no attribute {name!r}") from None


from torchplug._compat.missing import fallback_getattr as _fallback_getattr  # noqa: E402

# the lookup above first; its plain "has no attribute" for a name PyTorch has becomes "not supported yet"
__getattr__ = _fallback_getattr("torch.utils.data", __name__, __getattr__)
