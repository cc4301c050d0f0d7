"""Thread-local autograd state: grad mode, inference mode, anomaly mode and saved-tensor hooks."""

from __future__ import annotations

import threading

from torchplug._dispatch.keys import AUTOGRAD_BAND
from torchplug._dispatch.tls import tls

__all__ = ["STATE", "GLOBAL", "set_grad_mode", "AUTOGRAD_BAND"]


class _AutogradTLS(threading.local):
    # Class attributes are each new thread's defaults (grad mode on, like PyTorch).
    grad_enabled: bool = True
    inference: bool = False
    saved_hooks: tuple = ()  # stack of (pack, unpack) pairs, innermost last
    # set_multithreading_enabled's flag; the engine runs backward on the calling thread either way
    multithreading: bool = True


class _Global:
    """Process-wide switches (PyTorch's anomaly mode is global too)."""

    __slots__ = ("anomaly", "anomaly_check_nan")

    def __init__(self) -> None:
        self.anomaly = False
        self.anomaly_check_nan = True


STATE = _AutogradTLS()
GLOBAL = _Global()
_NOT_BAND = ~AUTOGRAD_BAND


def set_grad_mode(enabled: bool) -> None:
    """Set grad mode on this thread.

    Grad mode off excludes the autograd keys from dispatch (like PyTorch's
    AutoDispatchBelowAutograd), so ops on tensors that require grad cost the same as plain ones.
    Only the autograd band of the TLS mask is touched, so other plugins' bits survive.
    """
    STATE.grad_enabled = enabled
    if enabled and not STATE.inference:
        tls.mask |= AUTOGRAD_BAND
    else:
        tls.mask &= _NOT_BAND
