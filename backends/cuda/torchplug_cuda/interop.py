"""DLPack and ``__cuda_array_interface__`` interop: zero-copy to and from CuPy and torch CUDA tensors.

``from_dlpack(obj)`` makes a cuda tensor sharing ``obj``'s device memory (a CuPy array, a real
``torch`` CUDA tensor, anything with ``__dlpack__`` or ``__cuda_array_interface__``); the memory
stays owned by ``obj`` and is not counted by torchplug's allocator.  ``to_dlpack(t)`` /
``as_cupy(t)`` go the other way; ``torch.from_dlpack(t)`` also works because torchplug tensors
export their payload's ``__dlpack__``.
"""

from __future__ import annotations

from typing import Any

from . import _runtime, _state

__all__ = ["from_dlpack", "to_dlpack", "as_cupy"]


def _require_mode() -> str:
    mode = _runtime.mode()
    if mode is None:
        raise RuntimeError(_runtime.unavailable_message())
    return mode


def from_dlpack(obj: Any) -> Any:
    """A cuda tensor sharing ``obj``'s memory (zero-copy)."""
    from torchplug._base.dtype import from_numpy_dtype
    from torchplug._tensor.tensor import Storage, make_tensor

    mode = _require_mode()
    if mode == "emulate":
        import numpy as np

        arr = obj if isinstance(obj, np.ndarray) else np.from_dlpack(obj)
        index = 0
    else:
        cp = _runtime.cupy()
        if isinstance(obj, cp.ndarray):
            arr = obj
        elif hasattr(obj, "__dlpack__"):
            arr = cp.from_dlpack(obj)
        elif hasattr(obj, "__cuda_array_interface__"):
            arr = cp.asarray(obj)  # zero-copy view of the interface's pointer
        else:
            raise TypeError(f"from_dlpack expects an object with __dlpack__ or __cuda_array_interface__, "
                            f"got {type(obj).__name__}")
        index = arr.device.id
    dev = _state.device(index)
    # Not a TrackedStorage: the producer owns (and accounts) this memory.
    return make_tensor(arr, from_numpy_dtype(arr.dtype), dev, _state.KEYSET, Storage(arr.nbytes, dev, arr))


def as_cupy(t: Any) -> Any:
    """The CuPy array behind a cuda tensor (shares memory)."""
    if _require_mode() != "cupy":
        raise RuntimeError("as_cupy needs a real CUDA device: the emulated cuda device holds NumPy arrays")
    if t.device.type != "cuda":
        raise ValueError(f"as_cupy expects a cuda tensor, got one on {t.device}")
    return t._data


def to_dlpack(t: Any) -> Any:
    """A DLPack capsule of a cuda tensor's memory (for consumers that take capsules)."""
    _require_mode()
    if t.device.type != "cuda":
        raise ValueError(f"to_dlpack expects a cuda tensor, got one on {t.device}")
    return t.__dlpack__()
