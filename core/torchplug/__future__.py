"""``torchplug.__future__``: switches for behaviour that PyTorch plans to make the default.

``set_swap_module_params_on_conversion(True)`` makes ``nn.Module.to()``/``_apply`` and
``load_state_dict`` replace a parameter's contents with :func:`torchplug.utils.swap_tensors`
(the result of ``Tensor.module_load`` in ``load_state_dict``), so the Parameter objects that
optimizers hold stay the module's, even with ``assign=True``.  ``set_overwrite_module_params_on_conversion``
is kept for scripts that call it; torchplug's ``_apply`` always keeps the Parameter objects.
"""

from __future__ import annotations

__all__ = [
    "set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
    "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion",
]

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether ``nn.Module`` conversions assign new Parameter objects instead of changing them in place."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    """The value set by :func:`set_overwrite_module_params_on_conversion` (default False)."""
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether ``nn.Module`` conversions and ``load_state_dict`` swap parameters with ``swap_tensors``."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    """The value set by :func:`set_swap_module_params_on_conversion` (default False)."""
    return _swap_module_params_on_conversion
