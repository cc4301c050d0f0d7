"""``torchplug.optim``: optimizers with PyTorch's update rules and state_dict format, and ``lr_scheduler``."""

from __future__ import annotations

from . import lr_scheduler  # noqa: F401
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import Adagrad, RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
