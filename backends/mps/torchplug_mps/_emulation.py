"""Emulation: the cpu backend's NumPy kernels registered for the MPS key behind a guard.

The guard (one closure per op, built at registration) enforces MPS's limits and PyTorch's mps
behaviour, then runs the cpu kernel and re-homes what it created onto the mps device:

- the device must be available (``TORCHPLUG_MPS_EMULATE=1``), else the unavailability error;
- float64 is refused with PyTorch's TypeError (tensors on mps, ``dtype=`` arguments);
- tensors on another device may only be 0-dim host scalars, except for ``copy_`` (the
  cross-device copy every ``.to()`` goes through) and index arguments;
- random ops draw from the mps generator (``torchplug.mps.manual_seed``) unless given one;
- fresh results get the mps device and key set, and their buffers move from the cpu allocator
  to the mps allocator (``torchplug._runtime.allocator.rehome``): mps statistics stay exact and cpu's
  forget the buffer.  Scratch tensors a cpu kernel frees before returning still show in cpu's
  cumulative counters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchplug._base import dtype as D
from torchplug._runtime.allocator import rehome
from torchplug._tensor.tensor import Tensor
from torchplug.library import KernelTable

from . import _runtime, _state

__all__ = ["emulated_tables", "guard"]

_F64 = D.float64
_C128 = D.complex128
_RT = _runtime.MPSRuntime()


def emulated_tables() -> list[KernelTable]:
    """The cpu tables' kernels, guarded, as one ``MPS`` table (empty if torchplug-cpu is missing)."""
    try:
        from torchplug_cpu.kernels import all_tables
    except ImportError:
        return []
    table = KernelTable("MPS")
    for cpu_table in all_tables():
        if cpu_table.dispatch_key != "CPU":
            continue
        for name, fn, key, with_keyset in cpu_table.kernels:
            if key == "CPU":
                table.add(name, guard(name, fn, with_keyset), key="MPS", with_keyset=with_keyset)
    return [table]


def _schema_args(name: str) -> list[Any]:
    from torchplug._dispatch.dispatcher import DISPATCHER

    entry = DISPATCHER.ops.get(name if "::" in name else f"aten::{name}")
    return list(entry.schema.arguments) if entry is not None else []


def _dtype_error(dtype: D.dtype) -> TypeError:
    if dtype is _F64:
        return TypeError(_runtime.FLOAT64_ERROR)
    return TypeError(f"Cannot convert a MPS Tensor to {dtype.name} dtype as the MPS framework doesn't support "
                     f"{dtype.name}. Please use complex64 instead.")


def guard(name: str, fn: Callable[..., Any], with_keyset: bool) -> Callable[..., Any]:
    """The MPS kernel of op ``name`` that runs the cpu kernel ``fn`` under MPS's limits."""
    args_schema = _schema_args(name)
    off = 1 if with_keyset else 0
    gen_idx = next((i + off for i, a in enumerate(args_schema) if a.name == "generator"), None)
    mixed_ok = name.split("::")[-1].split(".")[0] in ("copy_", "_copy_from", "_to_copy") or "index" in name

    def check(value: Any) -> None:
        if isinstance(value, Tensor):
            if value._device.type == "mps":
                if value._dtype is _F64 or value._dtype is _C128:
                    raise _dtype_error(value._dtype)
            elif not mixed_ok and value._data.ndim != 0:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two devices, "
                    f"{_state.MPS} and {value._device}!"
                )
        elif value is _F64 or value is _C128:
            raise _dtype_error(value)
        elif value.__class__ in (list, tuple):
            for item in value:
                check(item)

    def kernel(*args: Any) -> Any:
        if not _RT.is_available():
            raise RuntimeError(_runtime.unavailable_message())
        for value in args[off:]:
            check(value)
        if gen_idx is not None and gen_idx < len(args) and args[gen_idx] is None:
            args = (*args[:gen_idx], _state.BACKEND.rng.generator(0), *args[gen_idx + 1:])
        from torchplug_cpu import _common as C

        saved = C.STATS.save_peaks()
        out = fn(*args)
        _rehome_all(out, args, C, {})
        C.STATS.restore_peaks(saved)
        return out

    kernel.__name__ = f"mps_{getattr(fn, '__name__', 'kernel')}"
    kernel.__qualname__ = f"emulated[{getattr(fn, '__qualname__', fn)}]"
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]
    return kernel


def _rehome_all(out: Any, args: tuple[Any, ...], C: Any, memo: dict[int, Any]) -> None:
    if isinstance(out, Tensor):
        _rehome_tensor(out, args, C, memo)
    elif isinstance(out, (tuple, list)):
        for item in out:
            _rehome_all(item, args, C, memo)


def _rehome_tensor(t: Tensor, args: tuple[Any, ...], C: Any, memo: dict[int, Any]) -> None:
    if t._device is not C.CPU or any(t is a for a in args):
        return  # already on mps, or an argument handed back (copy_ into a cpu tensor)
    t._device = _state.MPS
    t._keyset = (t._keyset & ~C.KEYSET) | _state.KEYSET
    st = t._storage
    if st.device is C.CPU:  # a buffer the cpu kernel allocated: move it to the mps allocator
        moved = memo.get(id(st))
        if moved is None:
            moved = memo[id(st)] = rehome(st, _state.MPS, _state.STATS) if hasattr(st.allocation, "slow") else st
            if moved is st:
                st.device = _state.MPS
        t._storage = moved
    if t._base is not None:
        _rehome_tensor(t._base, args, C, memo)
