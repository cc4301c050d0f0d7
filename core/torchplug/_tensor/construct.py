"""``new_tensor(data, dtype, device, keyset, stats, nbytes)``: a Tensor owning a fresh, accounted buffer;
``new_view(data, dtype, device, keyset, storage, base)``: a Tensor sharing ``storage`` (views, aliases);
``grad_view(view, base)``: what a backend's view wrapper calls when ``base`` requires grad;
``unlink_view(t)``: a view result that must own its storage (PyTorch's non-view results).

Every op's result is made here (through a backend's ``wrap``), so it is the hottest function in
torchplug.  It uses the optional C implementation in :mod:`torchplug._tensor._fastpath` when that was
built (setup.py compiles it where a C compiler exists) and the identical Python steps otherwise;
``TORCHPLUG_PURE_PYTHON=1`` forces the Python version.  Both fill the same slots and make the same
allocator-counter updates as ``TrackedStorage`` (whose ``__del__`` the C module also provides).
"""

from __future__ import annotations

import importlib
from typing import Any

from torchplug._base.env import pure_python
from torchplug._dispatch.codegen import configure_c_entries
from torchplug._dispatch.keys import AUTOGRAD_BAND, INFERENCE_BIT
from torchplug._dispatch.tls import tls
from torchplug._runtime.allocator import DeviceStats, TrackedStorage
from torchplug._tensor.tensor import Tensor, make_tensor

__all__ = ["new_tensor", "new_view", "grad_view", "unlink_view", "mark_inference", "INFERENCE_MASK", "ACCELERATED"]

INFERENCE_MASK = 1 << INFERENCE_BIT

def _new_tensor_py(data: Any, dtype: Any, dev: Any, keyset: int, stats: DeviceStats, nbytes: int) -> Tensor:
    return make_tensor(data, dtype, dev, keyset, TrackedStorage(nbytes, dev, data, stats))


def _new_view_py(data: Any, dtype: Any, dev: Any, keyset: int, storage: Any, base: Any) -> Tensor:
    t = make_tensor(data, dtype, dev, keyset, storage)
    t._base = base
    return t


def grad_view(t: Tensor, base: Tensor) -> Tensor:
    """Mark ``t``, a view of ``base`` (which requires grad), as PyTorch's differentiable view.

    A view made with grad mode on gets its ``grad_fn`` from the autograd kernel right after this; one
    made below autograd (under ``no_grad``) keeps none: it requires grad, is a leaf, its gradient goes
    nowhere, and writing to it in place with grad mode on is refused (PyTorch's NO_GRAD_MODE view).  The
    version recorded here tells the autograd plugin when the view's base was modified since.  Backends
    call this only when ``base._requires_grad``, so views of other tensors pay one attribute test.
    """
    dt = t._dtype
    if dt.is_floating_point or dt.is_complex:  # integer views of a float base never require grad
        t._requires_grad = True
        t._keyset |= base._keyset & AUTOGRAD_BAND  # the base's own bit: an emulating backend rehomes the rest
        d = t.__dict__
        d["_vv"] = t._storage.version
        if tls.include & INFERENCE_MASK:  # made in inference_mode: PyTorch's refusals then name that mode
            d["_view_mode"] = "inference"
    return t


def mark_inference(t: Tensor) -> Tensor:
    """Make ``t`` an inference tensor when ``inference_mode`` is on (for tensors made without dispatch, such
    as ``tensor()``'s; the autograd plugin's Inference fallback marks every op's results)."""
    if tls.include & INFERENCE_MASK:
        t._keyset |= INFERENCE_MASK
    return t


def unlink_view(t: Tensor) -> Tensor:
    """Make ``t`` own its storage as far as autograd is concerned: not a view, and without the
    requires-grad mark ``grad_view`` gave it (a result with a ``grad_fn`` keeps its history)."""
    t._base = None
    if t._grad_fn is None and t._requires_grad:
        t._requires_grad = False
        d = t.__dict__
        if not d.get("_fw"):  # a dual tensor keeps reaching the autograd kernels
            t._keyset &= ~AUTOGRAD_BAND
    if t.__dict__:
        t.__dict__.pop("_vv", None)
    return t


def _load() -> Any:
    if pure_python():
        return None
    try:
        # import_module, not ``from . import``: that probes torchplug.__getattr__ first, which
        # would load every plugin while this module (which autograd imports) is half made.
        _fastpath = importlib.import_module("torchplug._tensor._fastpath")
    except ImportError:  # not built (no compiler at install time): the Python version is used
        return None
    _fastpath.configure(Tensor, TrackedStorage, DeviceStats)
    return _fastpath


_accelerated = _load()
configure_c_entries(Tensor)  # the C entry points (torchplug._dispatch._centry) read _keyset through Tensor's slot
ACCELERATED = _accelerated is not None
new_tensor = _accelerated.new_tensor if _accelerated is not None else _new_tensor_py
new_view = _accelerated.new_view if _accelerated is not None else _new_view_py
