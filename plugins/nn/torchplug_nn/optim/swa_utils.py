"""``torchplug.optim.swa_utils``: Stochastic Weight Averaging and EMA of a model's weights.

``AveragedModel`` keeps a running average of another model's parameters (and, with
``use_buffers=True``, its buffers); ``SWALR`` anneals each group's learning rate to a constant
SWA rate; ``update_bn`` recomputes BatchNorm statistics for the averaged weights.  The update
rules follow ``torch.optim.swa_utils`` operation for operation, so trajectories match PyTorch's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable as _Callable, Iterable as _Iterable
from copy import deepcopy
from typing import Any

import torchplug as _tp
from torchplug._tensor.tensor import Tensor

from .. import _grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer as _Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

_AvgFn = _Callable[[Tensor, Tensor, Any], Tensor]
_MultiAvgFn = _Callable[[list[Tensor], list[Tensor], Any], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _lerps(tensor: Tensor) -> bool:
    # torch's foreach lerp takes floating and complex tensors; others take the explicit formula
    return tensor.is_floating_point() or tensor.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> _MultiAvgFn:
    """An in-place exponential moving average over lists of tensors: ``ema += (1 - decay) * (p - ema)``."""
    _check_decay(decay)

    def ema_update(ema_param_list: list[Tensor], current_param_list: list[Tensor], _: Any) -> None:
        with _grad.no_grad():
            if _lerps(ema_param_list[0]):
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> _MultiAvgFn:
    """An in-place running mean over lists of tensors (the SWA average of ``num_averaged + 1`` models)."""

    def swa_update(averaged_param_list: list[Tensor], current_param_list: list[Tensor], num_averaged: Any) -> None:
        with _grad.no_grad():
            if _lerps(averaged_param_list[0]):
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, 1 / (num_averaged + 1))
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    diff = p_model - p_avg
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> _AvgFn:
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with _grad.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> _AvgFn:
    """The running mean of one tensor: ``avg + (current - avg) / (num_averaged + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with _grad.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the average (SWA, or EMA with ``multi_avg_fn``) of the
    parameters ``update_parameters`` is given.

    Args:
        model: the model to average (deep-copied).
        device: where the averaged copy lives (default: where ``model`` is).
        avg_fn: ``(averaged, current, num_averaged) -> new averaged`` for one tensor.
        multi_avg_fn: ``(averaged_list, current_list, num_averaged)`` updating the lists in place.
        use_buffers: average the buffers too (else they are copied from ``model`` at each update).
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: _AvgFn | None = None,
                 multi_avg_fn: _MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        assert avg_fn is None or multi_avg_fn is None, "Only one of avg_fn and multi_avg_fn should be provided"
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tp.tensor(0, dtype=_tp.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers with ``use_buffers``) into the average."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers
                      else self.parameters())
        model_param = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        self_detached: list[Tensor] = []
        model_detached: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        with _grad.no_grad():
            for p_averaged, p_model in zip(self_param, model_param):
                p_model_ = p_model.detach().to(p_averaged.device)
                self_detached.append(p_averaged.detach())
                model_detached.append(p_model_)
                if copy_param:
                    p_averaged.detach().copy_(p_model_)
            if bool(self.n_averaged > 0):
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    for (self_group, model_group) in _grouped(self_detached, model_detached):
                        n_averaged = self.n_averaged.to(self_group[0].device)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(self_group, model_group, n_averaged)
                        else:
                            get_swa_multi_avg_fn()(self_group, model_group, n_averaged)
                else:
                    for p_averaged, p_model in zip(self_detached, model_detached):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model, n_averaged))
            if not self.use_buffers:
                # buffers are not averaged: keep them in sync with the source model
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def _grouped(averaged: list[Tensor], current: list[Tensor]) -> _Iterable[tuple[list[Tensor], list[Tensor]]]:
    """The pairs grouped by (device, dtype) of the averaged tensor, first-seen order (torch's grouping)."""
    groups: dict[tuple[str, Any], tuple[list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current):
        mine = groups.setdefault((str(a.device), a.dtype), ([], []))
        mine[0].append(a)
        mine[1].append(c)
    return groups.values()


def update_bn(loader: _Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader`` (cumulative averages).

    Each batch is ``model``'s input, or a list/tuple whose first element is.
    """
    with _grad.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            if device is not None:
                input = input.to(device)
            model(input)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each param group's learning rate to ``swa_lr`` over ``anneal_epochs`` (cosine or linear), then hold it."""

    def __init__(self, optimizer: _Optimizer, swa_lr: Any, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state without the optimizer and the anneal function (restored from its name)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore ``state_dict()``'s state (and the anneal function it names)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
