"""torchplug-amp: autocast and gradient scaling as a core-layer plugin (``torchplug.amp``).

Autocast policies are data contributed by backends (``torchplug_register_autocast_policy``);
this plugin merges them, registers one generic kernel per listed op at each backend's
``Autocast<Backend>`` key, and flips that key in the thread-local dispatch state when a region
is entered.  Inspect with :func:`explain` and :func:`policy`; change with
:func:`register_policy` and :func:`set_op_policy`.
"""

from __future__ import annotations

from typing import Any

from torchplug._runtime.backends import registered_backends
from torchplug._plugins import ensure_loaded

from . import autocast_mode, grad_scaler
from ._plugin import torchplug_configure  # noqa: F401 - the plugin hook (entry point amp = torchplug_amp)
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler
from .legacy import device_amp_module
from .policy import CAST_POLICIES, AutocastPolicy
from .registry import REGISTRY, AutocastExplanation, PolicyHandle
from .state import (
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

__all__ = [
    "autocast",
    "custom_fwd",
    "custom_bwd",
    "is_autocast_available",
    "GradScaler",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "AutocastPolicy",
    "AutocastExplanation",
    "PolicyHandle",
    "CAST_POLICIES",
    "policy",
    "policies",
    "register_policy",
    "set_op_policy",
    "reset_op_policy",
    "explain",
    "unknown_ops",
    "refresh",
    "summary",
    "autocast_mode",
    "grad_scaler",
    "device_amp_module",
]


def policy(device_type: str) -> AutocastPolicy:
    """The merged autocast policy of ``device_type`` (a copy: change it with :func:`register_policy`
    or :func:`set_op_policy`)."""
    ensure_loaded()
    table = REGISTRY.tables.get(device_type)
    if table is None:
        raise RuntimeError(
            f"No autocast policy is registered for device type {device_type!r}; "
            f"device types with one: {sorted(REGISTRY.tables)}."
        )
    lists = table.lists()
    return AutocastPolicy(
        device_type=device_type,
        default_dtype=table.default_dtype,
        supported_dtypes=tuple(table.supported_dtypes),
        lower_precision_fp=tuple(lists["lower_precision_fp"]),
        fp32=tuple(lists["fp32"]),
        fp32_set_opt_dtype=tuple(lists["fp32_set_opt_dtype"]),
        promote=tuple(lists["promote"]),
        banned={n: table.rules[n].message or "" for n in lists["banned"]},
    )


def policies() -> dict[str, AutocastPolicy]:
    """Device type -> merged policy, for every device type that has one."""
    return {d: policy(d) for d in sorted(REGISTRY.tables)}


def register_policy(data: AutocastPolicy | Any, device_type: str = "", *, owner: str = "user") -> PolicyHandle:
    """Add a policy contribution (merged after the plugins' ones, op by op); returns a handle
    whose ``remove()`` takes it back (also a context manager).

    Example:
        >>> with torchplug.amp.register_policy({"fp32": ["mm"]}, "cpu"):  # doctest: +SKIP
        ...     ...  # mm runs in float32 under cpu autocast here
    """
    ensure_loaded()
    return REGISTRY.add_user_policy(AutocastPolicy.from_data(data, device_type), owner)


def set_op_policy(device_type: str, op: Any, cast_policy: str | None, *, message: str | None = None, owner: str = "user") -> None:
    """Put one op on a list of ``device_type`` (``'lower_precision_fp'``, ``'fp32'``,
    ``'fp32_set_opt_dtype'``, ``'promote'``, ``'banned'``) or, with ``None``, take it off every
    list.  Undo with :func:`reset_op_policy`."""
    ensure_loaded()
    REGISTRY.set_override(device_type, op, cast_policy, owner, message)


def reset_op_policy(device_type: str, op: Any) -> None:
    """Drop a :func:`set_op_policy` override; the plugins' lists apply again."""
    ensure_loaded()
    REGISTRY.reset_override(device_type, op)


def explain(device_type: str, op: Any) -> AutocastExplanation:
    """Which autocast list ``op`` is on for ``device_type``, who put it there, and its kernel.

    Example:
        >>> print(torchplug.amp.explain("cpu", "mm"))  # doctest: +SKIP
        aten::mm on 'cpu': lower_precision_fp (runs in the autocast dtype, torchplug.bfloat16 by default)
          listed as 'aten::mm' by plugin 'cpu' (torchplug-cpu 0.1.0)
          kernel: AutocastCPU: torchplug_amp.kernel:autocast[cpu:lower_precision_fp] [registered by plugin 'amp' ...]
    """
    ensure_loaded()
    return REGISTRY.explain(device_type, op)


def unknown_ops(device_type: str) -> list[str]:
    """Listed names of ``device_type`` that no plugin defines (yet)."""
    ensure_loaded()
    return REGISTRY.unknown_names(device_type)


def refresh() -> None:
    """Re-read every policy and re-register every autocast kernel (ops defined later are picked
    up automatically; this is for anything else)."""
    ensure_loaded()
    REGISTRY.rebuild()


def summary() -> list[str]:
    """One line per device type: dtypes, list sizes, kernels and unknown names (for the doctor)."""
    ensure_loaded()
    lines = []
    for device_type in sorted(REGISTRY.tables):
        table = REGISTRY.tables[device_type]
        lists = table.lists()
        counts = ", ".join(f"{k} {len(v)}" for k, v in lists.items() if v)
        supported = ", ".join(str(d).rsplit(".", 1)[-1] for d in table.supported_dtypes)
        key = "Autocast" + registered_backends()[device_type].key_name if is_autocast_available(device_type) else None
        lines.append(
            f"{device_type:<8} dtype={str(table.default_dtype).rsplit('.', 1)[-1]}  supported=[{supported}]  "
            f"policy from {table.dtype_owner or '-'}"
        )
        lines.append(
            f"{'':<8} lists: {counts or 'empty'}; "
            + (f"{len(table.kernels)} kernels at {key}" if key else "device not registered, no kernels")
            + f"; {len(unknown_ops(device_type))} listed ops not defined yet"
        )
        lines.extend(f"  problem: {p}" for p in table.problems)
    return lines
