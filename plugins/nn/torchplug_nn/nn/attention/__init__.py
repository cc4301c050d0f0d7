"""``torchplug.nn.attention``: choose the backends ``F.scaled_dot_product_attention`` may use (PyTorch's
``torch.nn.attention``). torchplug computes attention with the math kernel; on cpu a request for flash
attention alone is served where PyTorch's cpu flash kernel would run, and refused with PyTorch's errors
where no allowed kernel could run."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator
from typing import Any

from torchplug._base.flags import SDP_ENABLED

from . import bias  # noqa: F401

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

# PyTorch's switch for warning about unfused kernels with attention-bias subclasses; nothing here is fused.
WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The scaled-dot-product-attention backends, with PyTorch's values (``int(backend)`` works)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


# flag name -> backend, in PyTorch's order
_BACKEND_NAMES = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "mem_efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
    "overrideable": SDPBackend.OVERRIDEABLE,
}
_DEFAULT_PRIORITY = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
                     SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_priority = list(_DEFAULT_PRIORITY)  # recorded for set_priority=True; only the math kernel exists here


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    backends = [backend for name, backend in _BACKEND_NAMES.items() if SDP_ENABLED[name]]
    if with_priority:
        backends.sort(key=_priority.index)
    return backends


def _sdpa_kernel(backends: Iterable[SDPBackend], set_priority: bool = False) -> None:
    backends = list(backends)
    for name, backend in _BACKEND_NAMES.items():
        SDP_ENABLED[name] = backend in backends
    if set_priority:
        _priority[:] = backends + [b for b in _priority if b not in backends]


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend, set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """Allow only ``backends`` (one or a list) for scaled dot product attention inside the block; the previous
    setting returns after it. ``set_priority=True`` also records the list's order as the priority. The setting
    is process-wide, as in PyTorch (it is the same switch as ``torchplug.backends.cuda.enable_*_sdp``)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    saved_priority = list(_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, False)
        _priority[:] = saved_priority
