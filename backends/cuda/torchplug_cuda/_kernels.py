"""The ``CUDA`` kernel table: every cpu kernel, instantiated for the device's array namespace, behind a guard.

Registration needs no CuPy: the table holds one guard per op of the cpu tables.  At the first
call the guard picks the mode (``_runtime.mode()``), instantiates the cpu kernel modules for it
once (:mod:`torchplug_cuda._families`) and from then on looks the op up in a dict.  The guard:

- raises the unavailability error (``no CUDA device was found``) when there is no device;
- enforces PyTorch's device rules: all tensors on one cuda device; tensors on another device
  only as 0-dim scalars or index arguments, except in copies (``.to()``, ``copy_``);
- on the GPU moves such host scalars and indices to the device (CuPy does not mix host arrays);
- runs the kernel on the tensors' device (``cupy.cuda.Device``) and the thread's current stream;
- draws random numbers from the device's generator unless the caller gave one (on the device:
  :mod:`torchplug_cuda._device_random` replaces the shared random kernels);
- runs an op CuPy cannot compute in bfloat16 in float32, rounding back (:mod:`torchplug_cuda._bfloat16`);
- stamps results with that device: the family's ``_common`` is bound to it before the call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._tensor.tensor import Tensor
from torchplug.library import KernelTable

from . import _bfloat16, _runtime, _state

__all__ = ["cuda_tables", "guard", "impls_for"]

_IMPLS: dict[str, dict[str, Callable[..., Any]]] = {}
_COPY_OPS = ("copy_", "_copy_from", "_to_copy")


def cuda_tables() -> list[KernelTable]:
    """One ``CUDA`` table with a guard for every ``CPU`` kernel of torchplug-cpu (empty without it)."""
    try:
        from torchplug_cpu.kernels import all_tables
    except ImportError:
        return []
    table = KernelTable("CUDA")
    for cpu_table in all_tables():
        if cpu_table.dispatch_key != "CPU":
            continue
        for name, _fn, key, with_keyset in cpu_table.kernels:
            if key == "CPU":
                table.add(name, guard(name, with_keyset), key="CUDA", with_keyset=with_keyset)
    return [table]


def impls_for(mode: str | None) -> dict[str, Callable[..., Any]]:
    """Op name -> the family's kernel for ``mode`` (instantiating the family on first use)."""
    found = _IMPLS.get(mode or "")
    if found is not None:
        return found
    if mode is None:
        raise RuntimeError(_runtime.unavailable_message())
    from ._families import family

    impls: dict[str, Callable[..., Any]] = {}
    for module in family(mode).all_kernel_modules():
        table = getattr(module, "TABLE", None)
        for name, fn, key, _with_keyset in getattr(table, "kernels", ()):
            if key == "CPU":
                impls[name] = fn
    # random numbers drawn on the device (CuPy's generators; NumPy's under emulation), not on the host
    from ._device_random import kernels

    impls.update(kernels(mode, dict(impls), family(mode).common()))
    _IMPLS[mode] = impls
    return impls


def _schema_args(name: str) -> list[Any]:
    from torchplug._dispatch.dispatcher import DISPATCHER

    entry = DISPATCHER.ops.get(name if "::" in name else f"aten::{name}")
    return list(entry.schema.arguments) if entry is not None else []


def _same_device_error(a: Any, b: Any) -> RuntimeError:
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, {a} and {b}!")


def guard(name: str, with_keyset: bool) -> Callable[..., Any]:
    """The CUDA kernel of op ``name``: checks, then the family's kernel for the current mode."""
    schema = _schema_args(name)
    off = 1 if with_keyset else 0
    gen_idx = next((i + off for i, a in enumerate(schema) if a.name == "generator"), None)
    dev_idx = next((i + off for i, a in enumerate(schema) if a.name == "device"), None)
    base = name.split("::")[-1].split(".")[0]
    is_copy = base in _COPY_OPS
    mixed_ok = is_copy or "index" in name
    async_ok = name == "aten::copy_"  # copy_(self, src, non_blocking)
    bf16_gap = _bfloat16.known_gap(name)  # CuPy has no bfloat16 kernel for it: computed in float32

    def kernel(*args: Any) -> Any:
        mode = _runtime.mode()
        impls = _IMPLS.get(mode or "") or impls_for(mode)
        fn = impls[name]
        index, foreign = _scan(args, off, mixed_ok, is_copy)
        if index is None:
            dev = args[dev_idx] if dev_idx is not None and dev_idx < len(args) else None
            if dev is not None and getattr(dev, "type", None) == "cuda" and dev.index is not None:
                index = dev.index
                _state.BACKEND.runtime._check_index(index)  # a factory naming a device that does not exist
            else:
                index = _state.BACKEND.runtime.current_device()
        if gen_idx is not None and gen_idx < len(args) and args[gen_idx] is None:
            args = (*args[:gen_idx], _state.BACKEND.rng.generator(index), *args[gen_idx + 1:])
        from ._families import bind_device, family, run_on_device

        bind_device(mode, index)
        if mode == "emulate":
            return fn(*args)
        if _bfloat16.MISSING:
            _bfloat16.refuse(args[off:])
        if foreign and not is_copy:
            args = _to_device(args, index)
        if async_ok and len(args) > off + 2 and args[off + 2] and foreign:
            return run_on_device(index, _copy_maybe_async, (fn, *args))
        if (bf16_gap or name in _bfloat16.LEARNED) and _bfloat16.has_bfloat16(args[off:]):
            return run_on_device(index, _bfloat16.via_float32, (name, fn, family(mode).common(), *args))
        try:
            return run_on_device(index, fn, args)
        except _bfloat16.CUPY_GAPS as exc:
            # perhaps CuPy has no bfloat16 kernel for this op: float32, rounded back (and so from now on)
            return _bfloat16.retry(exc, name, fn, family(mode).common(), args, off,
                                   lambda f, a: run_on_device(index, f, a))

    kernel.__name__ = f"cuda_{base}"
    kernel.__qualname__ = f"cuda_shared[{name}]"
    return kernel


def _copy_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    """``copy_(dst, src, non_blocking=True)`` across host and device: asynchronous when it can be."""
    from ._async_copy import copy_async

    dst, src = args[-3], args[-2]
    if isinstance(src, Tensor) and copy_async(dst, src, _state.BACKEND.host_pinning, _runtime.cupy()):
        return dst
    return fn(*args)


def _scan(args: tuple[Any, ...], off: int, mixed_ok: bool, copy_ok: bool = False) -> tuple[int | None, bool]:
    """(index of the cuda tensors' device or None, whether host tensors take part); raises
    PyTorch's same-device error for a mix it does not allow (copies may cross devices; they run
    on their first tensor's device)."""
    index: int | None = None
    first: Any = None
    foreign = False
    stack = list(reversed(args[off:]))  # popped in argument order, so errors name devices like PyTorch
    while stack:
        value = stack.pop()
        if isinstance(value, Tensor):
            dev = value._device
            if dev.type == "cuda":
                i = dev.index or 0
                if index is None:
                    index, first = i, dev
                elif i != index and not copy_ok:
                    raise _same_device_error(first, dev)
            else:
                if not mixed_ok and value._data is not None and getattr(value._data, "ndim", 1) != 0:
                    raise _same_device_error(_state.device(index or 0) if first is None else first, dev)
                foreign = True
        elif value.__class__ in (list, tuple):
            stack.extend(reversed(value))
    return index, foreign


def _to_device(args: tuple[Any, ...], index: int) -> tuple[Any, ...]:
    """Host tensors (0-dim scalars, indices) copied to cuda device ``index`` (keeping their dtype)."""

    def move(value: Any) -> Any:
        if isinstance(value, Tensor) and value._device.type != "cuda":
            return value.to(_state.device(index))
        if value.__class__ in (list, tuple):
            return value.__class__(move(v) for v in value)
        return value

    return tuple(move(a) for a in args)
