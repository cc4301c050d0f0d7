"""Hand-assembled checkpoints for the loader's tests: protocol-2 pickle opcodes and zip archives.

Each builder returns the bytes of one opcode sequence, so a test can write exactly the pickle a
hostile or corrupted file would contain (no Python object has to exist to be pickled).
"""

from __future__ import annotations

import io
import struct
import zipfile

import numpy as np

PROTO2 = b"\x80\x02"
STOP = b"."
MARK = b"("
TUPLE = b"t"
TUPLE1, TUPLE2, TUPLE3 = b"\x85", b"\x86", b"\x87"
EMPTY_TUPLE, EMPTY_LIST, EMPTY_DICT, EMPTY_SET = b")", b"]", b"}", b"\x8f"
REDUCE, BUILD, NEWOBJ = b"R", b"b", b"\x81"
APPEND, APPENDS, SETITEM, SETITEMS = b"a", b"e", b"s", b"u"
NONE, TRUE, FALSE = b"N", b"\x88", b"\x89"
BINPERSID = b"Q"


def S(text: str) -> bytes:
    """BINUNICODE."""
    raw = text.encode("utf-8")
    return b"X" + struct.pack("<I", len(raw)) + raw


def SB(raw: bytes) -> bytes:
    """SHORT_BINSTRING (a Python 2 str)."""
    return b"U" + bytes([len(raw)]) + raw


def I(n: int) -> bytes:  # noqa: E743 - opcode builder
    """The smallest int opcode torch's pickler would use for ``n``."""
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if 0 <= n < 65536:
        return b"M" + struct.pack("<H", n)
    if -(2**31) <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    nbytes = (n.bit_length() + 8) // 8
    return b"\x8a" + bytes([nbytes]) + n.to_bytes(nbytes, "little", signed=True)


def F(x: float) -> bytes:
    """BINFLOAT."""
    return b"G" + struct.pack(">d", x)


def G(module: str, name: str) -> bytes:
    """GLOBAL."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def PUT(i: int) -> bytes:
    return b"q" + bytes([i])


def GET(i: int) -> bytes:
    return b"h" + bytes([i])


def tup(*items: bytes) -> bytes:
    return MARK + b"".join(items) + TUPLE


def ints(values) -> bytes:
    return tup(*(I(v) for v in values))


def call(func: bytes, *args: bytes) -> bytes:
    """``func(*args)`` via REDUCE."""
    return func + tup(*args) + REDUCE


def storage(stype: str, key: str, numel: int, location: str = "cpu", module: str = "torch") -> bytes:
    """A persistent id naming storage record ``data/<key>``."""
    return tup(S("storage"), G(module, stype), S(key), S(location), I(numel)) + BINPERSID


def tensor(pid: bytes, offset: int, size, stride, requires_grad: bool = False) -> bytes:
    """``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``."""
    return call(G("torch._utils", "_rebuild_tensor_v2"), pid, I(offset), ints(size), ints(stride),
                TRUE if requires_grad else FALSE, call(G("collections", "OrderedDict")))


def pickle_of(body: bytes) -> bytes:
    return PROTO2 + body + STOP


def archive(pkl: bytes, records: dict[str, bytes] | None = None, *, compress: bool = False, byteorder: str | None = "little",
            root: str = "archive") -> io.BytesIO:
    """A zip checkpoint with ``data.pkl`` = ``pkl`` and ``data/<key>`` records."""
    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr(f"{root}/data.pkl", pkl)
        if byteorder is not None:
            zf.writestr(f"{root}/byteorder", byteorder)
        for key, data in (records or {}).items():
            zf.writestr(f"{root}/data/{key}", data)
        zf.writestr(f"{root}/version", "3\n")
    buf.seek(0)
    return buf


def f32(*values: float) -> bytes:
    return np.asarray(values, dtype="<f4").tobytes()
