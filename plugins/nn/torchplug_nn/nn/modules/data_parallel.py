"""``nn.DataParallel``: wraps a module (``.module``; state dict keys gain the ``module.`` prefix).

Without an accelerator (or on mps) PyTorch's DataParallel runs the module unchanged and keeps no
device list; with one device it moves the module there and the inputs to it.  Splitting a batch
over several devices (replicas) is not implemented in torchplug.
"""

from __future__ import annotations

from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from .module import Module

__all__ = ["DataParallel"]


def _available_device_type() -> str | None:
    accelerator = torchplug.accelerator.current_accelerator(check_available=True)
    return None if accelerator is None else accelerator.type


def _index(device: Any) -> int:
    if isinstance(device, int):
        return device
    device = torchplug.device(device)
    return 0 if device.index is None else device.index


def _to_device(obj: Any, device: Any) -> Any:
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    """Run ``module`` data-parallel over ``device_ids`` (PyTorch's API; see the module docstring for what runs)."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        device_type = _available_device_type()
        if device_type is None or device_type == "mps":
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(torchplug.accelerator.device_count()))
        if not device_ids:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = torchplug.device(device_type, self.device_ids[0])
        if len(self.device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over several devices ({self.device_ids}) is not implemented in torchplug: pass "
                "device_ids=[one index] (or use one device per process with DistributedSampler)")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """``module(*inputs, **kwargs)``, with the inputs moved to the module's device when there is one."""
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        return self.module(*_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj))
