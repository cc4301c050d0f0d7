"""``torchplug.save`` / ``torchplug.load`` in PyTorch's zip format (real torch reads our files and vice versa).

Layout: ``<root>/data.pkl`` (protocol-2 pickle whose tensors refer to storages through persistent
ids ``('storage', torch.<Type>Storage, key, location, numel)`` and are rebuilt by
``torch._utils._rebuild_tensor_v2``), ``<root>/data/<key>`` (raw little-endian storage bytes,
64-byte aligned), ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``.

``load`` defaults to ``weights_only=True``: a restricted unpickler that only builds tensors,
containers and primitives and never imports anything else, so an untrusted file cannot run code.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import zipfile
from typing import Any

import numpy as np

import torchplug
from torchplug._tensor import Size, Tensor

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "get_unsafe_globals_in_checkpoint", "register_package"]

_ALIGN = 64

# dtype name <-> legacy storage class name (what torch pickles as the storage type).
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_STORAGE_TO_DTYPE = {v: k for k, v in _STORAGE_NAMES.items()}
_DTYPE_NAMES = set(_STORAGE_NAMES) | {"uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"}


# ---- saving -------------------------------------------------------------------------------------
class _Global:
    """Pickles as ``GLOBAL module name`` without importing the module (torch need not be installed)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")
_TORCH_SIZE = _Global("torch", "Size")


class _StorageRef:
    __slots__ = ("key", "dtype_name", "location", "numel")

    def __init__(self, key: str, dtype_name: str, location: str, numel: int) -> None:
        self.key, self.dtype_name, self.location, self.numel = key, dtype_name, location, numel


def _dtype_name(dt: Any) -> str:
    return getattr(dt, "name", None) or str(dt).rsplit(".", 1)[-1]


class _Pickler(pickle._Pickler):  # type: ignore[misc, name-defined]
    """Pure-Python pickler: tensors become torch's reduce form, storages become persistent ids."""

    dispatch = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]

    def __init__(self, file: Any, protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[int, tuple[str, Tensor, _StorageRef]] = {}

    def save_global_ref(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", _STORAGE_NAMES.get(obj.dtype_name, "ByteStorage")), obj.key,
                    obj.location, obj.numel)
        return None

    def reducer_override(self, obj: Any) -> Any:  # pure-python pickler consults this through save()
        return NotImplemented

    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, Tensor):
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return None
            super().save(self._tensor_reduce(obj), save_persistent_id)
            self.memoize(obj)
            return None
        if isinstance(obj, Size):
            return super().save(_Reduce(_TORCH_SIZE, (tuple(int(s) for s in obj),)), save_persistent_id)
        if isinstance(obj, torchplug.dtype):
            return super().save(_Global("torch", _dtype_name(obj)), save_persistent_id)
        if isinstance(obj, torchplug.device):
            return super().save(_Reduce(_Global("torch", "device"), (str(obj),)), save_persistent_id)
        return super().save(obj, save_persistent_id)

    def _storage_for(self, t: Tensor) -> tuple[_StorageRef, int]:
        storage = t.untyped_storage()
        sid = id(storage)
        itemsize = t.element_size()
        base = getattr(storage, "data", None)
        entry = self.storages.get(sid)
        if entry is None:
            key = str(len(self.storages))
            location = _location(t)
            numel = storage.nbytes // itemsize if itemsize else 0
            ref = _StorageRef(key, _dtype_name(t.dtype), location, numel)
            self.storages[sid] = (key, t, ref)
            entry = self.storages[sid]
        _ = base
        return entry[2], t.storage_offset()

    def _tensor_reduce(self, t: Tensor) -> Any:
        from .nn.parameter import Parameter

        ref, offset = self._storage_for(t)
        args = (ref, offset, tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride()),
                bool(t.requires_grad) and not isinstance(t, Parameter), _Reduce(_ORDERED_DICT, ()))
        rebuilt = _Reduce(_REBUILD_V2, args)
        if isinstance(t, Parameter):
            return _Reduce(_REBUILD_PARAM, (rebuilt, bool(t.requires_grad), _Reduce(_ORDERED_DICT, ())))
        return rebuilt


class _Reduce:
    """An object whose pickle is ``func(*args)`` with ``func`` written as a plain GLOBAL."""

    __slots__ = ("func", "args")

    def __init__(self, func: _Global, args: tuple) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> Any:
        return (self.func, self.args)


def _save_reduce_obj(self: _Pickler, obj: _Reduce) -> None:
    self.save(obj.func)
    self.save(obj.args)
    self.write(pickle.REDUCE)


_Pickler.dispatch[_Reduce] = _save_reduce_obj


def _location(t: Tensor) -> str:
    dev = t.device
    return "cpu" if dev.type == "cpu" else str(dev)


def _storage_bytes(t: Tensor) -> bytes:
    """The whole storage behind ``t`` as little-endian bytes."""
    storage = t.untyped_storage()
    base = getattr(storage, "data", None)
    if isinstance(base, np.ndarray):
        arr = base
    else:
        host = t.detach().to("cpu") if t.device.type != "cpu" else t
        base = getattr(host.untyped_storage(), "data", None)
        arr = base if isinstance(base, np.ndarray) else np.asarray(host.numpy(force=True))
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    return arr.tobytes()


def _zip_write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Write one stored record whose data starts at a 64-byte-aligned offset (as torch does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell()
    header = 30 + len(name.encode("utf-8"))
    pad = (-(offset + header + 4)) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, data)


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, state_dicts, optimizer states, ...) to a path or binary file."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    data_pkl = buf.getvalue()
    if isinstance(f, (str, os.PathLike)):
        root = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as fh:
            _write_archive(fh, root, data_pkl, pickler)
    else:
        _write_archive(f, "archive", data_pkl, pickler)


def _write_archive(fh: Any, root: str, data_pkl: bytes, pickler: _Pickler) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        _zip_write(zf, f"{root}/data.pkl", data_pkl)
        _zip_write(zf, f"{root}/.format_version", b"1")
        _zip_write(zf, f"{root}/.storage_alignment", str(_ALIGN).encode())
        _zip_write(zf, f"{root}/byteorder", b"little")
        for key, t, _ref in sorted(pickler.storages.values(), key=lambda e: int(e[0])):
            _zip_write(zf, f"{root}/data/{key}", _storage_bytes(t))
        _zip_write(zf, f"{root}/version", b"3\n")
    fh.write(out.getvalue())


# ---- loading ------------------------------------------------------------------------------------
_safe_globals: dict[str, Any] = {}


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these callables/classes in ``weights_only`` loads (entries may be ``(obj, "module.name")``)."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, name = entry
        else:
            obj, name = entry, f"{entry.__module__}.{entry.__qualname__}"
        _safe_globals[name] = obj


def get_safe_globals() -> list[Any]:
    return list(_safe_globals.values())


def clear_safe_globals() -> None:
    _safe_globals.clear()


class safe_globals:  # noqa: N801 - PyTorch's spelling
    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        self._saved = dict(_safe_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *args: Any) -> None:
        _safe_globals.clear()
        _safe_globals.update(self._saved)


def _rebuild_tensor_v2(storage: Any, storage_offset: int, size: Any, stride: Any, requires_grad: bool,
                       backward_hooks: Any, metadata: Any = None) -> Tensor:
    arr, dev = storage
    flat = torchplug.from_numpy(arr)
    t = flat.as_strided(tuple(size), tuple(stride), storage_offset) if flat.numel() or not size else flat.reshape(size)
    if dev not in ("cpu", None):
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Tensor:
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        p.__dict__.update(state if isinstance(state, dict) else {})
    return p


def _make_size(dims: Any) -> Size:
    return Size(tuple(dims))


def _device(spec: Any, index: Any = None) -> Any:
    return torchplug.device(spec) if index is None else torchplug.device(spec, index)


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype_name = _STORAGE_TO_DTYPE[name]


def _torch_global(name: str, weights_only: bool) -> Any:
    """What ``torch.<name>`` means when a checkpoint names it."""
    if name in _STORAGE_TO_DTYPE:
        return _StorageType(name)
    if name in _DTYPE_NAMES or name in ("float", "double", "half", "long", "int", "short", "bool"):
        return getattr(torchplug, name)
    if name == "Size":
        return _make_size
    if name == "device":
        return _device
    if name == "Tensor":
        return Tensor
    if not weights_only:
        return getattr(torchplug, name)
    raise pickle.UnpicklingError(_unsupported(f"torch.{name}"))


_UTILS = {
    "_rebuild_tensor_v2": _rebuild_tensor_v2,
    "_rebuild_parameter": _rebuild_parameter,
    "_rebuild_parameter_with_state": _rebuild_parameter_with_state,
}

_SAFE_BUILTINS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "defaultdict"): collections.defaultdict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
    ("builtins", "range"): range,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "tuple"): tuple,
    ("builtins", "list"): list,
    ("builtins", "dict"): dict,
    ("__builtin__", "set"): set,
}


def _unsupported(what: str) -> str:
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
        "only if you trust the source of the checkpoint. \n\t(1) Re-running `torch.load` with `weights_only` set to "
        "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file "
        "from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended "
        "steps in the following error message.\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {what} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{what.rsplit('.', 1)[-1]}])` or the "
        f"`torch.serialization.safe_globals([{what.rsplit('.', 1)[-1]}])` context manager to allowlist this global "
        "if you trust this class/function."
    )


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: Any, zf: Any, root: str, map_location: Any, weights_only: bool, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.zf, self.root, self.map_location, self.weights_only = zf, root, map_location, weights_only
        self.loaded: dict[str, Any] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch._utils" and name in _UTILS:
            return _UTILS[name]
        if module == "torch":
            return _torch_global(name, self.weights_only)
        if module == "torchplug._dtype" and name == "_from_name":
            return _dtype_from_name
        if (module, name) in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[(module, name)]
        full = f"{module}.{name}"
        if full in _safe_globals:
            return _safe_globals[full]
        if module == "torch.nn.parameter" and name == "Parameter":
            from .nn.parameter import Parameter

            return Parameter
        if self.weights_only:
            raise pickle.UnpicklingError(_unsupported(full))
        if module.startswith("torch.") or module == "torch":
            module = "torchplug" + module[len("torch"):]
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        typename = pid[0].decode() if isinstance(pid[0], bytes) else pid[0]
        if typename != "storage":
            raise pickle.UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'")
        storage_type, key, location, numel = pid[1], pid[2], pid[3], pid[4]
        if key in self.loaded:
            return self.loaded[key]
        dtype_name = storage_type.dtype_name if isinstance(storage_type, _StorageType) else "uint8"
        dtype = getattr(torchplug, dtype_name)
        raw = self.zf.read(f"{self.root}/data/{key}")
        np_dtype = dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else np.dtype(dtype_name)
        arr = np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder("<")).astype(np_dtype, copy=True)
        dev = _map_location(location, self.map_location)
        result = (arr, dev)
        self.loaded[key] = result
        return result


def _dtype_from_name(name: str) -> Any:
    return getattr(torchplug, name)


def _map_location(location: str, map_location: Any) -> str:
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return str(map_location.get(location, location))
    if isinstance(map_location, (str, torchplug.device)):
        return str(map_location)
    if callable(map_location):
        return location  # applied to the rebuilt tensors below
    return location


_package_registry: list[tuple[int, Any, Any]] = []


def register_package(priority: int, tagger: Any, deserializer: Any) -> None:
    """Register a device tagger/deserializer pair (kept for API compatibility; cpu and mapped devices are built in)."""
    _package_registry.append((priority, tagger, deserializer))
    _package_registry.sort(key=lambda e: e[0])


def _open_zip(f: Any) -> tuple[zipfile.ZipFile, Any]:
    if isinstance(f, (str, os.PathLike)):
        fh = open(f, "rb")
        return zipfile.ZipFile(fh), fh
    if isinstance(f, (bytes, bytearray)):
        raise TypeError("torch.load expects a file path or a binary file-like object, got bytes")
    data = f.read()
    return zipfile.ZipFile(io.BytesIO(data)), None


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object saved by ``torchplug.save`` or ``torch.save``; ``weights_only=True`` by default."""
    if weights_only is None:
        weights_only = pickle_module is None
    zf, fh = _open_zip(f)
    try:
        names = zf.namelist()
        pkl = next((n for n in names if n.endswith("/data.pkl") or n == "data.pkl"), None)
        if pkl is None:
            raise RuntimeError("Invalid checkpoint: no data.pkl record (only the zip format of torch>=1.6 is supported)")
        root = pkl[: -len("/data.pkl")] if "/" in pkl else ""
        byteorder_name = f"{root}/byteorder"
        if byteorder_name in names and zf.read(byteorder_name) not in (b"little",):
            raise RuntimeError("big-endian checkpoints are not supported")
        unpickler = _Unpickler(io.BytesIO(zf.read(pkl)), zf, root, map_location, weights_only,
                               **{k: v for k, v in pickle_load_args.items() if k in ("encoding", "errors")})
        try:
            result = unpickler.load()
        except pickle.UnpicklingError:
            raise
        except (AttributeError, ImportError) as exc:
            if weights_only:
                raise pickle.UnpicklingError(_unsupported(str(exc))) from exc
            raise
    finally:
        zf.close()
        if fh is not None:
            fh.close()
    if callable(map_location) and not isinstance(map_location, (dict, str, torchplug.device)):
        result = _apply_callable_map(result, map_location)
    return result


def _apply_callable_map(obj: Any, fn: Any) -> Any:
    if isinstance(obj, Tensor):
        out = fn(obj, _location(obj))
        return obj if out is None else out
    if isinstance(obj, dict):
        for k in list(obj):
            obj[k] = _apply_callable_map(obj[k], fn)
        return obj
    if isinstance(obj, list):
        return [_apply_callable_map(v, fn) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_apply_callable_map(v, fn) for v in obj)
    return obj


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """Globals a checkpoint names that ``weights_only`` loading would refuse (a static scan)."""
    import pickletools

    zf, fh = _open_zip(f)
    try:
        pkl = next(n for n in zf.namelist() if n.endswith("data.pkl"))
        data = zf.read(pkl)
    finally:
        zf.close()
        if fh is not None:
            fh.close()
    found: list[str] = []
    strings: list[str] = []
    for op, arg, _pos in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        full = None
        if op.name == "GLOBAL":
            module, name = arg.split(" ", 1)
            full = f"{module}.{name}"
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            full = f"{strings[-2]}.{strings[-1]}"
        if full is None:
            continue
        module, _, name = full.rpartition(".")
        ok = ((module == "torch._utils" and name in _UTILS) or (module, name) in _SAFE_BUILTINS
              or full in _safe_globals or (module == "torch" and (name in _STORAGE_TO_DTYPE or name in _DTYPE_NAMES
                                                                  or name in ("Size", "device"))))
        if not ok and full not in found:
            found.append(full)
    return found
