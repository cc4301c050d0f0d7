"""``torchplug.utils.dlpack``: exchange tensors with NumPy, PyTorch, CuPy... without copying.

:func:`from_dlpack` takes any object with ``__dlpack__``/``__dlpack_device__`` (a NumPy array,
a ``torch.Tensor``, a CuPy array) or a legacy DLPack capsule, and returns a torchplug tensor
sharing its memory: host memory becomes a tensor of the host backend, other DLPack devices go to
the registered backend that declares them (``Backend.dlpack_device_types`` and
``Backend.from_dlpack``; torchplug-cuda takes CUDA).  :func:`to_dlpack` and ``Tensor.__dlpack__``
go the other way: ``numpy.from_dlpack(t)`` and ``torch.from_dlpack(t)`` share ``t``'s memory.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (``__dlpack_device__()[0]``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# The well-known torchplug device type behind a DLPack device (to name what to install).
_DEVICE_TYPE_OF = {DLDeviceType.kDLCUDA: "cuda", DLDeviceType.kDLCUDAManaged: "cuda",
                   DLDeviceType.kDLMetal: "mps", DLDeviceType.kDLOneAPI: "xpu"}
_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, "
                    "so you might have already constructed a tensor from it once.")


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (legacy API: prefer passing the tensor to the
    consumer's ``from_dlpack``, which calls ``tensor.__dlpack__()``)."""
    return tensor.__dlpack__()


class _Capsule:
    """A legacy capsule dressed as a ``__dlpack__`` producer, for consumers that take only those."""

    def __init__(self, capsule: Any, device: tuple[int, int]) -> None:
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


class _Writable:
    """A writable view of an array NumPy imported read-only from a legacy capsule: the legacy
    protocol cannot say "read-only", and its producers (PyTorch's to_dlpack) hand out writable
    memory, as PyTorch's own from_dlpack assumes.  Holds the array, which holds the capsule."""

    def __init__(self, arr: Any) -> None:
        self.arr = arr
        interface = dict(arr.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def _capsule_device(capsule: Any) -> tuple[int, int]:
    """The (device type, id) recorded in a DLPack capsule (legacy or versioned)."""
    import ctypes  # only for capsules: not imported with torchplug

    class _DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    name = api.PyCapsule_GetName(capsule)
    if name not in (b"dltensor", b"dltensor_versioned"):
        raise RuntimeError(_INVALID_CAPSULE)
    pointer = api.PyCapsule_GetPointer(capsule, name)
    # DLManagedTensor starts with its DLTensor {void* data; DLDevice device; ...}; the versioned one
    # has {DLPackVersion (2 x uint32); void* manager_ctx; void* deleter; uint64 flags} before it.
    offset = ctypes.sizeof(ctypes.c_void_p) + (0 if name == b"dltensor" else 8 + 3 * 8)
    device = _DLDevice.from_address(pointer + offset)
    return device.device_type, device.device_id


def _import(ext: Any, device: tuple[int, int]) -> Any:
    """A torchplug tensor sharing the memory of a DLPack producer on ``device``."""
    from torchplug._runtime.backends import install_hint, registered_backends
    from torchplug._plugins import ensure_loaded

    ensure_loaded()
    code = int(device[0])
    backends = registered_backends().values()
    for backend in backends:
        if code in backend.dlpack_device_types and backend.from_dlpack is not None:
            return backend.from_dlpack(ext)
    if code in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost, DLDeviceType.kDLROCMHost):
        import numpy as np

        from torchplug._tensor.creation import from_numpy

        if not any(b.is_host for b in backends):
            raise RuntimeError("from_dlpack needs a host backend to hold host memory, and none is registered. "
                               + install_hint("cpu"))
        arr = np.from_dlpack(ext)
        if isinstance(ext, _Capsule) and not arr.flags.writeable:
            arr = np.asarray(_Writable(arr))
        return from_numpy(arr)
    try:
        where = DLDeviceType(code).name
    except ValueError:
        where = f"DLPack device type {code}"
    wanted = _DEVICE_TYPE_OF.get(code)
    hint = f" {install_hint(wanted)}" if wanted is not None and wanted not in registered_backends() else ""
    raise BufferError(f"from_dlpack: the data lives on {where} (device {device[1]}), and no registered torchplug "
                      f"backend imports DLPack data from there (registered: {sorted(registered_backends())}).{hint}")


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Any:
    """A torchplug tensor from a DLPack producer (or a legacy capsule), sharing its memory.

    Args:
        ext_tensor: an object with ``__dlpack__`` and ``__dlpack_device__``, or a capsule from
            a ``to_dlpack`` (a capsule can be consumed only once).
        device: where the result must live; memory is shared only when that is where the data is.
        copy: True always copies; False never does (``BufferError`` when a copy would be needed);
            None copies only when ``device`` asks for it.
    """
    from torchplug._runtime.device import device as as_device
    from torchplug._tensor.tensor import Tensor

    if hasattr(ext_tensor, "__dlpack__"):
        if isinstance(ext_tensor, Tensor) and ext_tensor.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        source = ext_tensor
        dl_device = tuple(ext_tensor.__dlpack_device__())
    elif type(ext_tensor).__name__ == "PyCapsule":
        dl_device = _capsule_device(ext_tensor)
        source = _Capsule(ext_tensor, dl_device)
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    result = _import(source, dl_device)  # type: ignore[arg-type]
    if device is not None:
        target = as_device(device)
        if target.type != result.device.type or (target.index is not None and target != result.device):
            if copy is False:
                raise BufferError(f"from_dlpack(copy=False): the data is on {result.device}, and moving it to "
                                  f"{target} needs a copy")
            return result.to(target)
    return result.clone() if copy else result
