"""The weights-only unpickler: a pickle interpreter that runs only what the allow-list permits.

It accepts the protocol-2 opcodes ``torch.save`` writes (the same set as PyTorch's weights-only
unpickler; anything else is "Unsupported operand") and never imports: a GLOBAL resolves through
the exact ``(module, name)`` table of ``_checkpoint_globals`` or the user's ``add_safe_globals``
list, or it is refused.  REDUCE and NEWOBJ run only the checked constructors registered for an
allow-listed object (or a user-allowed object itself); BUILD sets state only on state-dict
containers and user-allowed types; persistent ids only name storages.  Every malformed input is a
``pickle.UnpicklingError``: a hostile file cannot surface as a raw IndexError or KeyError.
"""

from __future__ import annotations

import _compat_pickle
import collections
import pickle
import struct
import warnings
from typing import Any, Callable

from . import _checkpoint_globals as G
from ._rebuild import describe
from ._safe_globals import user_allowed_globals

__all__ = ["WeightsOnlyUnpickler", "globals_in_pickle", "unsupported_global_message"]

UnpicklingError = pickle.UnpicklingError

# Modules PyTorch never resolves from a checkpoint, even when a user allow-lists one of their
# functions.  This is PyTorch's documented behaviour for add_safe_globals, not the security
# boundary: that is the allow-list, which these names are never part of.
_BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt"})

# opcode -> number of argument bytes to skip in a static scan (GLOBAL and strings handled apart).
_FIXED_ARGS = {
    b"a"[0]: 0, b"e"[0]: 0, b"G"[0]: 8, b"h"[0]: 1, b"J"[0]: 4, b"K"[0]: 1, b"M"[0]: 2, b"Q"[0]: 0,
    b"q"[0]: 1, b"b"[0]: 0, b"}"[0]: 0, b"]"[0]: 0, 0x8F: 0, b")"[0]: 0, b"j"[0]: 4, b"r"[0]: 4,
    b"("[0]: 0, 0x89: 0, 0x81: 0, 0x88: 0, b"N"[0]: 0, b"R"[0]: 0, b"s"[0]: 0, b"u"[0]: 0, b"t"[0]: 0,
    0x85: 0, 0x86: 0, 0x87: 0,
}
_GLOBAL, _BINUNICODE, _SHORT_BINSTRING, _LONG1, _PROTO, _STOP = b"c"[0], b"X"[0], b"U"[0], 0x8A, 0x80, b"."[0]
_U32 = struct.Struct("<I").unpack


def _map_py2(module: str, name: str) -> tuple[str, str]:
    # Protocol-2 pickles may spell Python 2 names (``__builtin__.set``); map them as pickle does.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def unsupported_global_message(full_path: str) -> str:
    """PyTorch's message for a GLOBAL outside the allow-list (builtins are named without prefix)."""
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return (
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this global "
        "if you trust this class/function."
    )


class _Reader:
    """Bounds-checked reads from the pickle bytes (a short read is a truncated file)."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise UnpicklingError(f"pickle data was truncated: needed {n} bytes at offset {self.pos}")
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise UnpicklingError("pickle data was truncated (no STOP opcode)")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def line(self) -> str:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise UnpicklingError(f"pickle data was truncated inside a GLOBAL at offset {self.pos}")
        raw = self.data[self.pos:end]
        self.pos = end + 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UnpicklingError(f"GLOBAL at offset {self.pos} is not valid UTF-8") from None

    def global_name(self) -> tuple[str, str]:
        module = self.line()
        return _map_py2(module, self.line())


def globals_in_pickle(data: bytes) -> set[str]:
    """Every ``module.name`` a pickle's GLOBAL opcodes name (a static scan; nothing is resolved)."""
    r = _Reader(data)
    found: set[str] = set()
    while True:
        op = r.byte()
        if op == _GLOBAL:
            module, name = r.global_name()
            found.add(f"{module}.{name}")
        elif op in _FIXED_ARGS:
            r.take(_FIXED_ARGS[op])
        elif op == _BINUNICODE:
            r.take(struct.unpack("<I", r.take(4))[0])
        elif op in (_SHORT_BINSTRING, _LONG1):
            r.take(r.byte())
        elif op == _PROTO:
            r.byte()
        elif op == _STOP:
            return found
        else:
            raise UnpicklingError(f"Unsupported operand {op}")


class WeightsOnlyUnpickler:
    """Interpret one pickle under the weights-only rules; ``persistent_load`` resolves storage ids."""

    def __init__(self, data: bytes, persistent_load: Callable[[Any], Any], *, encoding: str = "utf-8") -> None:
        self._r = _Reader(data)
        self._persistent_load = persistent_load
        self._encoding = encoding
        self._table = G.allowed_globals()
        self._user = user_allowed_globals()
        self._user_ids = {id(v) for v in self._user.values()}
        self.memo: dict[int, Any] = {}
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []

    # -- helpers ----------------------------------------------------------------------------------
    def _is_user_allowed(self, obj: Any) -> bool:
        return id(obj) in self._user_ids and any(v is obj for v in self._user.values())

    def _is_value_only(self, obj: Any) -> bool:
        return any(entry.value is obj for entry in self._table.values())

    def _pop_mark(self) -> list[Any]:
        if not self.metastack:
            raise UnpicklingError("malformed pickle: no MARK for this opcode")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _pop(self) -> Any:
        if not self.stack:
            raise UnpicklingError(f"malformed pickle: stack underflow at offset {self._r.pos - 1}")
        return self.stack.pop()

    def _top(self) -> Any:
        if not self.stack:
            raise UnpicklingError(f"malformed pickle: stack underflow at offset {self._r.pos - 1}")
        return self.stack[-1]

    # -- opcodes that resolve or run something ------------------------------------------------------
    def _global(self) -> None:
        module, name = self._r.global_name()
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        entry = self._table.get((module, name))
        if entry is not None:
            self.stack.append(entry.value)
            return
        if full in self._user:
            self.stack.append(self._user[full])
            return
        if full in G.TORCH_ALLOWED_UNSUPPORTED:
            raise RuntimeError(
                f"The checkpoint uses {full}, which PyTorch allows in weights-only loads but torchplug does not "
                "implement: it has no quantized, sparse or nested tensors, no legacy tensor-type classes and only the "
                "dtypes in torchplug._base.dtype.ALL_DTYPES. Convert those tensors in PyTorch before saving (e.g. "
                ".dequantize(), .to_dense(), .to(torch.float32))."
            )
        raise UnpicklingError(unsupported_global_message(full))

    def _reduce(self) -> None:
        args = self._pop()
        func = self._top()
        impl = G.call_for(func)
        if impl is None:
            if not self._is_user_allowed(func):
                msg = f"Trying to call reduce for unrecognized function {describe(func)}"
                if self._is_value_only(func):
                    msg += " (it is allowed in a weights-only checkpoint as a value, but calling it is not)"
                if hasattr(func, "__self__"):
                    msg += f" which belongs to {describe(func.__self__)}"
                raise UnpicklingError(msg)
            impl = func
        if not isinstance(args, tuple):
            raise UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
        self.stack[-1] = impl(*args)

    def _newobj(self) -> None:
        args = self._pop()
        cls = self._pop()
        if not isinstance(args, tuple):
            raise UnpicklingError(f"NEWOBJ arguments must be a tuple, got {type(args).__name__}")
        impl = G.new_for(cls)
        if impl is not None:
            self.stack.append(impl(*args))
        elif isinstance(cls, type) and self._is_user_allowed(cls):
            self.stack.append(cls.__new__(cls, *args))
        else:
            raise UnpicklingError(
                f"Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` but got {describe(cls)}"
            )

    def _build(self) -> None:
        state = self._pop()
        inst = self._top()
        kind = type(inst)
        if kind in G.BUILD_DICT_TYPES:
            # torch sets a state dict's ``_metadata`` this way; names that would shadow the
            # container's own methods (``keys``, ``copy``, ...) are refused.
            if not isinstance(state, dict):
                raise UnpicklingError(f"BUILD state for {kind.__name__} must be a dict, got {type(state).__name__}")
            for key in state:
                if not isinstance(key, str) or not key.isidentifier() or key.startswith("__") or hasattr(kind, key):
                    raise UnpicklingError(f"BUILD cannot set attribute {describe(key)} on {kind.__name__}")
            inst.__dict__.update(state)
        elif self._is_user_allowed(kind):
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None:
                setstate(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
        else:
            raise UnpicklingError(
                "Can only build Tensor, Parameter, OrderedDict or types allowlisted via `add_safe_globals`, "
                f"but got {kind}"
            )

    def _persid(self) -> None:
        pid = self._pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid:
            kind = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
            if kind != "storage":
                raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {describe(pid[0])}")
        self.stack.append(self._persistent_load(pid))

    # -- the loop -------------------------------------------------------------------------------------
    def load(self) -> Any:
        """Run the pickle to its STOP opcode and return the object it built."""
        r, dispatch = self._r, self._DISPATCH
        data, end = r.data, len(r.data)
        while True:
            start = r.pos
            if start >= end:
                raise UnpicklingError("pickle data was truncated (no STOP opcode)")
            op = data[start]
            r.pos = start + 1
            handler = dispatch.get(op)
            if handler is None:
                raise UnpicklingError(f"Unsupported operand {op}")
            try:
                if handler(self):
                    return self._pop()
            except (UnpicklingError, RuntimeError, MemoryError):
                raise
            except Exception as exc:  # noqa: BLE001 - a hostile file must not surface raw errors
                raise UnpicklingError(
                    f"malformed pickle at offset {start} (opcode {bytes([op])!r}): {type(exc).__name__}: {exc}"
                ) from exc

    # One handler per accepted opcode (PyTorch's weights-only set); a true result means STOP.
    def _binput(self) -> None:
        self.memo[self._r.byte()] = self._top()

    def _long_binput(self) -> None:
        self.memo[_U32(self._r.take(4))[0]] = self._top()

    def _get(self, idx: int) -> None:
        if idx not in self.memo:
            raise UnpicklingError(f"Memo value not found at index {idx}")
        self.stack.append(self.memo[idx])

    def _binget(self) -> None:
        self._get(self._r.byte())

    def _long_binget(self) -> None:
        self._get(_U32(self._r.take(4))[0])

    def _binunicode(self) -> None:
        n = _U32(self._r.take(4))[0]
        self.stack.append(str(self._r.take(n), "utf-8", "surrogatepass"))

    def _short_binstring(self) -> None:
        data = self._r.take(self._r.byte())
        self.stack.append(data if self._encoding == "bytes" else data.decode(self._encoding, "strict"))

    def _binint(self) -> None:
        self.stack.append(struct.unpack("<i", self._r.take(4))[0])

    def _binint1(self) -> None:
        self.stack.append(self._r.byte())

    def _binint2(self) -> None:
        self.stack.append(struct.unpack("<H", self._r.take(2))[0])

    def _binfloat(self) -> None:
        self.stack.append(struct.unpack(">d", self._r.take(8))[0])

    def _long1(self) -> None:  # at most 255 bytes: no huge integers
        self.stack.append(pickle.decode_long(self._r.take(self._r.byte())))

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self) -> None:
        items = self._pop_mark()
        self.stack.append(tuple(items))

    def _tuple_n(self, n: int) -> None:
        stack = self.stack
        if len(stack) < n:
            raise UnpicklingError(f"malformed pickle: TUPLE{n} needs {n} stack items")
        stack[-n:] = [tuple(stack[-n:])]

    def _append(self) -> None:
        item = self._pop()
        target = self._top()
        if type(target) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(target)}")
        target.append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        target = self._top()
        if type(target) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(target)}")
        target.extend(items)

    def _setitem(self) -> None:
        value = self._pop()
        key = self._pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        if len(items) % 2:
            raise UnpicklingError("malformed pickle: SETITEMS needs key/value pairs")
        target = self._dict_target("SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _proto(self) -> None:
        proto = self._r.byte()
        if proto != 2:
            warnings.warn(
                f"Detected pickle protocol {proto} in the checkpoint, which was not the default pickle protocol "
                "used by `torch.load` (2). The weights_only Unpickler might not support all instructions "
                "implemented by this protocol.",
                stacklevel=4,
            )

    def _dict_target(self, opcode: str) -> Any:
        target = self._top()
        if type(target) not in (dict, collections.OrderedDict, collections.Counter):
            raise UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, but got {type(target)}"
            )
        return target

    def _push(value: Any) -> Callable[[WeightsOnlyUnpickler], None]:  # type: ignore[misc]  # noqa: N805
        # A fresh object per use for the mutable empties (list/dict/set), a shared one otherwise.
        make = value if callable(value) else (lambda: value)
        return lambda self: self.stack.append(make())

    _DISPATCH: dict[int, Callable[[WeightsOnlyUnpickler], Any]] = {
        _GLOBAL: _global, 0x52: _reduce, 0x81: _newobj, 0x62: _build, 0x51: _persid,  # c R \x81 b Q
        0x71: _binput, 0x72: _long_binput, 0x68: _binget, 0x6A: _long_binget,  # q r h j
        0x58: _binunicode, 0x55: _short_binstring, 0x4A: _binint, 0x4B: _binint1, 0x4D: _binint2,  # X U J K M
        0x47: _binfloat, 0x8A: _long1,  # G LONG1
        0x4E: _push(lambda: None), 0x88: _push(lambda: True), 0x89: _push(lambda: False),  # N NEWTRUE NEWFALSE
        0x29: _push(tuple), 0x5D: _push(list), 0x7D: _push(dict), 0x8F: _push(set),  # ) ] } EMPTY_SET
        0x28: _mark, 0x74: _tuple,  # ( t
        0x85: lambda self: self._tuple_n(1), 0x86: lambda self: self._tuple_n(2), 0x87: lambda self: self._tuple_n(3),
        0x61: _append, 0x65: _appends, 0x73: _setitem, 0x75: _setitems,  # a e s u
        0x80: _proto, _STOP: lambda self: True,
    }
    del _push
