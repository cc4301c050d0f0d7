"""Shared test helpers: convert between torchplug and real torch through NumPy."""

from __future__ import annotations

import numpy as np

import torchplug


def to_np(t):
    return np.asarray(t.detach().tolist() if hasattr(t, "detach") else t)


def has_autograd() -> bool:
    from torchplug_nn import _grad

    torchplug.plugins.report()
    return _grad.autograd_available()
