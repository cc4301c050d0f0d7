"""How tensors cross process boundaries through ``torchplug.multiprocessing`` (queues, pipes, process
arguments): a host tensor is moved into shared memory (``share_memory_()``) and sent as its segment's name and
its view (offset, shape, strides), so sender and receiver share the data, as with PyTorch. Tensors of other
devices are pickled by value (a copy)."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._tensor import shared_memory as shm
from torchplug._tensor.tensor import Tensor

__all__ = ["init_reductions", "reduce_tensor", "rebuild_shared_tensor"]


def rebuild_shared_tensor(cls: type, name: str, numel: int, np_dtype: Any, offset: int, shape: tuple,
                          stride: tuple, requires_grad: bool) -> Tensor:
    """The receiving side of :func:`reduce_tensor`: a tensor over the same shared bytes (sharing the storage
    when the segment is mapped in this process already)."""
    import torchplug
    from torchplug._tensor.construct import new_view

    storage, root = shm.attach(name, numel, np_dtype)
    if storage is None:
        storage = torchplug.from_numpy(root)._storage
        shm.adopt(storage, root)
        root = storage.data
    itemsize = root.dtype.itemsize
    data = np.ndarray(shape, dtype=root.dtype, buffer=root, offset=offset * itemsize,
                      strides=tuple(s * itemsize for s in stride))
    keyset = torchplug.empty(0)._keyset  # the host backend's key
    out = new_view(data, D.from_numpy_dtype(root.dtype), storage.device, keyset, storage, None)
    if requires_grad:
        out.requires_grad_(True)
    if cls is not Tensor:
        out = _as_class(cls, out, requires_grad)
    return out


def _as_class(cls: type, tensor: Tensor, requires_grad: bool) -> Tensor:
    # nn's Parameter and Buffer wrap a tensor (sharing its storage); other subclasses come back as plain tensors
    try:
        return cls(tensor, requires_grad) if cls.__name__ == "Parameter" else cls(tensor)
    except TypeError:
        return tensor


def reduce_tensor(tensor: Tensor) -> tuple:
    """``ForkingPickler``'s reducer for tensors (see the module docstring)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if tensor.device.type != "cpu" or not isinstance(tensor._storage.data, np.ndarray):
        return tensor.__reduce_ex__(4)  # by value
    shm.share_storage(tensor)
    segment = shm.segment_of(tensor._storage)
    shm.mark_sent(segment)
    root = tensor._storage.data
    itemsize = root.dtype.itemsize
    offset = (tensor._data.__array_interface__["data"][0] - segment.base) // itemsize
    return (rebuild_shared_tensor, (type(tensor), segment.name, root.size, root.dtype, offset,
                                    tuple(tensor.shape), tuple(tensor.stride()), tensor.requires_grad))


def _subclasses(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(_subclasses(sub))
    return found


def init_reductions() -> None:
    """Register :func:`reduce_tensor` with ``multiprocessing``'s pickler for Tensor and its subclasses
    (``nn.Parameter`` included); called when ``torchplug.multiprocessing`` is imported."""
    import torchplug

    try:
        torchplug.nn  # noqa: B018  (loads the nn plugin, so Parameter and Buffer are registered too)
    except AttributeError:
        pass
    for cls in _subclasses(Tensor):
        ForkingPickler.register(cls, reduce_tensor)
