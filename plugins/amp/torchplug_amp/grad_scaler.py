"""``torchplug.amp.GradScaler``: dynamic loss scaling written over generic ops, so every backend has it."""

from __future__ import annotations

import contextlib
import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

import torchplug
from torchplug._runtime.backends import registered_backends

__all__ = ["GradScaler", "OptState"]


class _MultiDeviceReplicator:
    """Lazily serves copies of a tensor to the devices that ask, one copy per device."""

    def __init__(self, master: Any) -> None:
        self.master = master
        self._per_device_tensors: dict[Any, Any] = {}

    def get(self, dev: Any) -> Any:
        found = self._per_device_tensors.get(dev)
        if found is None:
            found = self.master.to(device=dev, copy=True)
            self._per_device_tensors[dev] = found
        return found


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _no_grad() -> Any:
    """``torchplug.no_grad()`` when the autograd plugin is there; nothing to turn off otherwise."""
    try:
        return torchplug.no_grad()
    except AttributeError:
        return contextlib.nullcontext()


def non_finite_check_and_unscale_(grads: list[Any], found_inf: Any, inv_scale: Any) -> None:
    """Multiply every grad by ``inv_scale`` in place; set ``found_inf`` to 1 if any has an inf/NaN.

    PyTorch's ``_amp_foreach_non_finite_check_and_unscale_`` in generic ops: no host sync."""
    for g in grads:
        bad = torchplug.logical_not(torchplug.isfinite(g)).any().to(found_inf.dtype)
        found_inf.copy_(torchplug.maximum(found_inf, bad))
        g.mul_(inv_scale)


def update_scale_(scale: Any, growth_tracker: Any, found_inf: Any, growth_factor: float, backoff_factor: float,
                  growth_interval: int) -> None:
    """PyTorch's ``_amp_update_scale_`` in generic ops: back off on inf/NaN, grow after
    ``growth_interval`` clean steps in a row (never to inf)."""
    found = found_inf > 0
    successful = growth_tracker + 1
    interval_done = successful == growth_interval
    grown = scale * growth_factor
    grow = torchplug.logical_and(torchplug.logical_and(torchplug.logical_not(found), interval_done), torchplug.isfinite(grown))
    new_scale = torchplug.where(found, scale * backoff_factor, torchplug.where(grow, grown, scale))
    new_tracker = torchplug.where(torchplug.logical_or(found, interval_done), 0, successful)
    scale.copy_(new_scale)
    growth_tracker.copy_(new_tracker)


class GradScaler:
    """Scale the loss so small gradients survive lower precision, skip steps with inf/NaN grads.

    ``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`` as in PyTorch.
    Any object with ``param_groups`` (each a dict with ``'params'``) and ``step()`` works as the
    optimizer.  Only generic ops are used (``isfinite``, ``mul_``, ``where``...), so any backend
    gets gradient scaling without dedicated kernels.

    Args:
        device: the device type of the scale tensor (``'cuda'`` by default, as in PyTorch; a
            device type that is not registered warns and disables the scaler).
        init_scale, growth_factor, backoff_factor, growth_interval, enabled: as in PyTorch.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and not _device_available(device):
            what = "torch.cuda.amp.GradScaler" if device == "cuda" else f"GradScaler for device type {device!r}"
            where = "CUDA" if device == "cuda" else f"device type {device!r}"
            warnings.warn(f"{what} is enabled, but {where} is not available.  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Any = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Any, Any]:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        self._scale = torchplug.full((), self._init_scale, dtype=torchplug.float32, device=dev)
        self._growth_tracker = torchplug.full((), self._init_growth_tracker, dtype=torchplug.int32, device=dev)

    def scale(self, outputs: Any) -> Any:
        """Multiply a tensor or a (nested) iterable of tensors by the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, torchplug.Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        stash: list[_MultiDeviceReplicator] = []

        def apply_scale(val: Any) -> Any:
            if isinstance(val, torchplug.Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Any, found_inf: Any, allow_fp16: bool) -> dict[Any, Any]:
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        grads: dict[Any, dict[Any, list[Any]]] = defaultdict(lambda: defaultdict(list))
        with _no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, torchplug.Tensor):
                        raise AssertionError(f"expected param to be torchplug.Tensor, got {type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is torchplug.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads[grad.device][grad.dtype].append(grad)
            for dev, per_dtype in grads.items():
                for group_grads in per_dtype.values():
                    non_finite_check_and_unscale_(group_grads, per_device_found_inf.get(dev), per_device_inv_scale.get(dev))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale in place and record inf/NaN (optional;
        call it before clipping or inspecting gradients)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = torchplug.reciprocal(self._scale)
        found_inf = torchplug.full((), 0.0, dtype=torchplug.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer: Any, state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless :meth:`unscale_` did), then call ``optimizer.step(*args, **kwargs)``
        unless a gradient holds inf/NaN.  Returns what ``optimizer.step`` returned, or None."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            # The optimizer unscales and skips by itself, reading grad_scale and found_inf.
            if state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scaler = self._scale
            found_inf = sum(t.to(scaler.device) for t in state["found_inf_per_device"].values())
            optimizer.grad_scale = (
                getattr(optimizer, "grad_scale", None)
                if state["stage"] == OptState.UNSCALED
                else scaler * getattr(optimizer, "grad_scale", 1)
            )
            optimizer.found_inf = found_inf
            retval = optimizer.step(*args, **kwargs)
            state["stage"] = OptState.STEPPED
            del optimizer.grad_scale
            del optimizer.found_inf
            return retval
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Any | None = None) -> None:
        """Update the scale once per iteration, after every optimizer stepped: multiply by
        ``backoff_factor`` if any step was skipped, by ``growth_factor`` after
        ``growth_interval`` clean iterations; ``new_scale`` sets it instead."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = "new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor with requires_grad=False."
                if new_scale.device.type != self._device or new_scale.numel() != 1 or new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [
                found_inf.to(device=scale.device)
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for extra in found_infs[1:]:
                combined = combined + extra
            update_scale_(scale, growth_tracker, combined, self._growth_factor, self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self) -> Any:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` ({} when disabled)."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning of an iteration, or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer: Any) -> dict[Any, Any]:
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = torchplug.full((), 1.0, dtype=torchplug.float32, device=scale.device)
        found_inf = torchplug.full((), 0.0, dtype=torchplug.float32, device=scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True
        )
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer: Any) -> dict[Any, Any]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]


def _device_available(device_type: str) -> bool:
    from torchplug._plugins import ensure_loaded

    ensure_loaded()
    backend = registered_backends().get(device_type)
    if backend is None or not backend.has_data:
        return False
    # The backend contract's runtime answers availability (Backend records have no is_available).
    check = getattr(getattr(backend, "runtime", None), "is_available", None) or getattr(backend, "is_available", None)
    try:
        return bool(check()) if callable(check) else True
    except Exception:  # noqa: BLE001 - an unavailable device disables the scaler, as in PyTorch
        return False
