"""Thread-local autograd state: grad mode, inference mode, anomaly mode and saved-tensor hooks."""

from __future__ import annotations

import threading

from torchplug._dispatch.keys import AUTOGRAD_BAND
from torchplug._dispatch.tls import tls

__all__ = ["STATE", "GLOBAL", "FW", "set_grad_mode", "AUTOGRAD_BAND"]


class _AutogradTLS(threading.local):
    # Class attributes are each new thread's defaults (grad mode on, like PyTorch).
    grad_enabled: bool = True
    inference: bool = False
    saved_hooks: tuple = ()  # stack of (pack, unpack) pairs, innermost last
    # set_multithreading_enabled's flag; the engine runs backward on the calling thread either way
    multithreading: bool = True
    # the backward running on this thread: (id, no inputs= capture), (-1, True) outside backward
    graph_task: tuple = (-1, True)


class _Global:
    """Process-wide switches (PyTorch's anomaly mode is global too)."""

    __slots__ = ("anomaly", "anomaly_check_nan", "saved_hooks_live", "lock")

    def __init__(self) -> None:
        self.anomaly = False
        self.anomaly_check_nan = True
        # saved_tensors_hooks contexts open on any thread: while 0, recording skips the thread-local
        # read of STATE.saved_hooks (a threading.local attribute costs several plain ones)
        self.saved_hooks_live = 0
        self.lock = threading.Lock()


class _ForwardState:
    """Process-wide forward-AD state (PyTorch's forward levels are global, not per thread).

    ``live``: a dual level exists (grad mode then no longer masks the autograd keys, see
    ``set_grad_mode``); ``on``: tangents propagate now (false while a tangent is being computed).
    """

    __slots__ = ("live", "on", "levels", "next_id", "duals")

    def __init__(self) -> None:
        self.live = False
        self.on = False
        self.levels: list[int] = []  # active level ids, outermost first
        self.next_id = 0
        self.duals: dict[int, list] = {}  # level id -> weak references to tensors given a tangent


STATE = _AutogradTLS()
GLOBAL = _Global()
FW = _ForwardState()
_NOT_BAND = ~AUTOGRAD_BAND


def set_grad_mode(enabled: bool) -> None:
    """Set grad mode on this thread.

    Grad mode off excludes the autograd keys from dispatch (like PyTorch's
    AutoDispatchBelowAutograd), so ops on tensors that require grad cost the same as plain ones.
    Only the autograd band of the TLS mask is touched, so other plugins' bits survive.  While a
    forward-AD level exists the band stays in (grad mode does not stop forward AD, as in PyTorch)
    and the kernels skip only the backward recording.
    """
    STATE.grad_enabled = enabled
    if (enabled or FW.live) and not STATE.inference:
        tls.mask |= AUTOGRAD_BAND
    else:
        tls.mask &= _NOT_BAND
