"""Lazy modules: ``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``, ``LazyBatchNorm*``, ``LazyInstanceNorm*``.

Their parameters start as :class:`~torchplug.nn.parameter.UninitializedParameter`; the first forward
infers the missing size from the input, materializes them (the same objects, so an optimizer built
earlier keeps working), initializes them and turns the module into its ``cls_to_become`` (``Linear``...).
Loading a state dict materializes them from the checkpoint's shapes.
"""

from __future__ import annotations

import itertools
from typing import Any

import torchplug

from ... import _grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            _NormBase)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Shape inference on the first forward for modules whose parameters are uninitialized."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # uninitialized tensors are saved as themselves (detaching one would give an empty plain tensor)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, *args: Any) -> None:
        """Materialize each uninitialized tensor with the shape of its entry in the loaded state dict."""
        state_dict, prefix = args[-7], args[-6]
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with _grad.no_grad():
                    param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the parameters from the first forward's arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer is still uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy forward "
                           "pass to correctly initialize the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is inferred from the first input's last dim."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(**fk)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**fk)

    def reset_parameters(self) -> None:
        """Initialize as ``Linear`` does, once the parameters are materialized."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        """Materialize ``weight`` as ``(out_features, input.shape[-1])`` and initialize."""
        if self.has_uninitialized_params():
            with _grad.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # loaded from a state dict: the weight has its shape already
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    _nd = 2

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any, *args: Any, **kwargs: Any) -> None:
        """Materialize the weight with ``in_channels`` taken from the input's channel dim."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with _grad.no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input: Any) -> int:
        no_batch = self._nd + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(name: str, base: type, nd: int) -> type:
    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        fk = {"device": device, "dtype": dtype}
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, **fk)
        _finish(self, out_channels, bias, fk)

    def __init_transposed__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                            output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                            padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        fk = {"device": device, "dtype": dtype}
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                      **fk)
        _finish(self, out_channels, bias, fk)

    init = __init_transposed__ if base.transposed else __init__
    init.__name__ = "__init__"
    cls = type(name, (_LazyConvXdMixin, base), {
        "__init__": init, "cls_to_become": base, "_nd": nd, "__module__": __name__,
        "__doc__": f"A ``{base.__name__}`` whose ``in_channels`` is inferred from the first input's channel dim."})
    return cls


def _finish(self: Any, out_channels: int, bias: bool, fk: dict) -> None:
    # the base constructor ran with zero channels; the lazy hooks are registered by LazyModuleMixin.__init__,
    # which the base chain skipped: register them here
    self.weight = UninitializedParameter(**fk)
    self.out_channels = out_channels
    if bias:
        self.bias = UninitializedParameter(**fk)
    self._load_hook = self.register_load_state_dict_pre_hook(self._lazy_load_hook)
    self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, 3)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__(0, eps, momentum, False, False, **fk, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(**fk)
            if bias:
                self.bias = UninitializedParameter(**fk)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(**fk)
            self.running_var = UninitializedBuffer(**fk)
            self.num_batches_tracked = torchplug.tensor(0, dtype=torchplug.long, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        """Materialize weight, bias and running stats with ``num_features = input.shape[1]``."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with _grad.no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(name: str, base: type) -> type:
    return type(name, (_LazyNormBase, base), {
        "cls_to_become": base, "__module__": __name__,
        "__doc__": f"A ``{base.__name__}`` whose ``num_features`` is inferred from the first input's dim 1."})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d)
