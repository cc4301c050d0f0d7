"""The allow-list: which ``(module, name)`` globals a weights-only load resolves, and to what.

Every entry is an exact pair from PyTorch's weights-only set (``torch._weights_only_unpickler``),
mapped to torchplug's equivalent.  Nothing is looked up by name at load time: a global is either a
key of this table (or of the user's ``add_safe_globals`` list) or it is refused.  Separately, an
entry says whether a checkpoint may *call* the object (REDUCE) or *instantiate* it (NEWOBJ), and
through which checked constructor in ``_rebuild``; ``torch.Tensor``, dtypes and storage classes are
values only.
"""

from __future__ import annotations

import collections
import functools
from typing import Any, Callable, NamedTuple

import torchplug
from torchplug._base.dtype import ALL_DTYPES

from . import _rebuild as R

__all__ = ["Allowed", "allowed_globals", "TORCH_ALLOWED_UNSUPPORTED", "STORAGE_NAMES", "storage_type_for", "call_for",
           "new_for", "BUILD_DICT_TYPES"]


class Allowed(NamedTuple):
    """One allow-listed global: the object pushed, and how (if at all) it may be called/instantiated."""

    value: Any
    call: Callable[..., Any] | None = None  # REDUCE value(*args) runs call(*args)
    new: Callable[..., Any] | None = None  # NEWOBJ value.__new__(value, *args) runs new(*args)


# dtype name -> legacy storage class name (what torch pickles as a record's storage type).
STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}

# Names PyTorch allows in weights-only loads that torchplug cannot build (dtypes, storages and
# tensor kinds it lacks).  They are safe, so get_unsafe_globals_in_checkpoint does not list them,
# but using one is a RuntimeError that says so.
TORCH_ALLOWED_UNSUPPORTED = frozenset(
    [f"torch.{n}" for n in (
        "uint16", "uint32", "uint64", "complex32", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
        "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8",
        "qint32", "qint8", "quint2x4", "quint4x2", "quint8", "per_channel_affine", "per_channel_affine_float_qparams",
        "per_channel_symmetric", "per_tensor_affine", "per_tensor_symmetric",
        "QInt32Storage", "QInt8Storage", "QUInt2x4Storage", "QUInt4x2Storage", "QUInt8Storage",
    )]
    + [f"torch.uint{i}" for i in range(1, 8)] + [f"torch.int{i}" for i in range(1, 8)]
    + [f"{m}.{k}Tensor" for m in ("torch", "torch.cuda") for k in
       ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")]
    + [f"{m}.{k}Tensor" for m in ("torch.sparse", "torch.cuda.sparse") for k in
       ("BFloat16", "Byte", "Char", "Double", "Float", "Half", "Int", "Long", "Short")]
    + ["torch.storage.TypedStorage"]
    + [f"torch._utils.{n}" for n in (
        "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
        "_rebuild_device_tensor_from_numpy")]
)


@functools.cache
def _storage_types() -> dict[str, R.StorageType]:
    return {name: R.StorageType(name, getattr(torchplug, dt)) for dt, name in STORAGE_NAMES.items()}


def storage_type_for(dtype: Any) -> str:
    """The legacy storage class name torch pickles for records of ``dtype``."""
    return STORAGE_NAMES[dtype.name]


@functools.cache
def allowed_globals() -> dict[tuple[str, str], Allowed]:
    """The built-in allow-list, keyed by the exact ``(module, name)`` a checkpoint's GLOBAL names."""
    from .nn.parameter import Parameter

    table: dict[tuple[str, str], Allowed] = {
        ("collections", "OrderedDict"): Allowed(collections.OrderedDict, R.make_ordered_dict, R.make_ordered_dict),
        ("collections", "Counter"): Allowed(collections.Counter, R.make_counter, R.make_counter),
        ("builtins", "set"): Allowed(set, R.make_set, R.make_set),
        ("builtins", "complex"): Allowed(complex, R.make_complex, R.make_complex),
        ("builtins", "bytearray"): Allowed(bytearray, R.make_bytearray, R.make_bytearray),
        ("_codecs", "encode"): Allowed(R.codecs_encode, R.codecs_encode),
        ("torch", "Size"): Allowed(torchplug.Size, R.make_size, R.make_size),
        ("torch", "device"): Allowed(torchplug.device, R.make_device, R.make_device),
        # A value only (the type argument of _rebuild_from_type_v2): Tensor(n) would allocate n
        # elements that the checkpoint does not hold.
        ("torch", "Tensor"): Allowed(torchplug.Tensor),
        ("torch.nn.parameter", "Parameter"): Allowed(Parameter, R.make_parameter, R.make_parameter),
        ("torch.serialization", "_get_layout"): Allowed(R.get_layout, R.get_layout),
        ("torch._tensor", "_rebuild_from_type_v2"): Allowed(R.rebuild_from_type_v2, R.rebuild_from_type_v2),
    }
    for fn_name, fn in (
        ("_rebuild_tensor", R.rebuild_tensor),
        ("_rebuild_tensor_v2", R.rebuild_tensor_v2),
        ("_rebuild_tensor_v3", R.rebuild_tensor_v3),
        ("_rebuild_parameter", R.rebuild_parameter),
        ("_rebuild_parameter_with_state", R.rebuild_parameter_with_state),
        ("_rebuild_meta_tensor_no_storage", R.rebuild_meta_tensor_no_storage),
        ("_rebuild_device_tensor_from_cpu_tensor", R.rebuild_device_tensor_from_cpu_tensor),
    ):
        table[("torch._utils", fn_name)] = Allowed(fn, fn)
    for dt in ALL_DTYPES:
        table[("torch", dt.name)] = Allowed(dt)
    storages = _storage_types()
    for name, stype in storages.items():
        table[("torch", name)] = Allowed(stype)
        table[("torch.cuda", name)] = Allowed(stype)  # the record's location, not the class, says where
    table[("torch.storage", "UntypedStorage")] = Allowed(R.StorageType("UntypedStorage", torchplug.uint8))
    return table


@functools.cache
def _by_identity(kind: str) -> dict[int, tuple[Any, Callable[..., Any]]]:
    out: dict[int, tuple[Any, Callable[..., Any]]] = {}
    for entry in allowed_globals().values():
        fn = entry.call if kind == "call" else entry.new
        if fn is not None:
            out[id(entry.value)] = (entry.value, fn)
    return out


def call_for(obj: Any) -> Callable[..., Any] | None:
    """The checked implementation of REDUCE ``obj(*args)``, or None when ``obj`` may not be called."""
    hit = _by_identity("call").get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else None


def new_for(obj: Any) -> Callable[..., Any] | None:
    """The checked implementation of NEWOBJ ``obj.__new__(obj, *args)``, or None when refused."""
    hit = _by_identity("new").get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else None


# BUILD (setting state on an instance) is allowed on these exact built-in types: torch uses it for
# the ``_metadata`` attribute of state dicts.
BUILD_DICT_TYPES = (collections.OrderedDict, collections.Counter)
