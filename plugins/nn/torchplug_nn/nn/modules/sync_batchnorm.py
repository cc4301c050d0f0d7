"""``nn.SyncBatchNorm``: batch norm whose statistics are reduced over a process group in distributed
training.  Without an initialized process group (``torchplug.distributed``, the distributed plugin) PyTorch's
SyncBatchNorm computes exactly ``F.batch_norm`` on the local batch, as this one does.  In training with a
process group PyTorch refuses CPU inputs, as this one does; the cross-rank statistics for cuda inputs are
not implemented yet (NotImplementedError)."""

from __future__ import annotations

from typing import Any

from ... import _grad
from .. import functional as F
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _initialized_distributed() -> Any:
    """``torchplug.distributed`` (looked up by name: the distributed plugin) if it has a default group, else None."""
    import torchplug

    try:
        dist = torchplug.distributed
    except AttributeError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over any ``(N, C, ...)`` input; statistics are local (no process group)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input: Any) -> None:
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Any) -> Any:
        """Normalize with the batch's statistics in training (updating the running ones), else the running ones."""
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with _grad.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / self.num_batches_tracked.item()
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        dist = _initialized_distributed() if bn_training and self.training else None
        if dist is not None:
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            if dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError("SyncBatchNorm in training with a process group (statistics reduced across "
                                          "ranks) is not implemented yet in torchplug; use BatchNorm (per-rank "
                                          "statistics) or train without a process group")
        running_mean = self.running_mean if not self.training or self.track_running_stats else None
        running_var = self.running_var if not self.training or self.track_running_stats else None
        return F.batch_norm(input, running_mean, running_var, self.weight, self.bias, bn_training,
                            exponential_average_factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module: Any, process_group: Any = None) -> Any:
        """``module`` with every ``BatchNorm*D`` replaced by a ``SyncBatchNorm`` sharing its parameters and buffers."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with _grad.no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return module_output
