"""``torchplug.optim``: optimizers with PyTorch's update rules and state_dict format, and ``lr_scheduler``."""

from __future__ import annotations

from . import lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import Adagrad, RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adafactor", "Adamax", "ASGD",
           "LBFGS", "Muon", "NAdam", "RAdam", "Rprop", "SparseAdam", "lr_scheduler", "swa_utils"]
