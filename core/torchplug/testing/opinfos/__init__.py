"""The OpInfo registry: one module per op area, each defining ``OPS: list[OpInfo]``, collected automatically.

To add an area, create ``torchplug/testing/opinfos/<area>.py``::

    from __future__ import annotations

    from torchplug.testing.opinfo import FLOAT_DTYPES, OpInfo, SampleInput, Skip, T

    __all__ = ["OPS"]

    def _softmax(dtype):
        yield SampleInput((T((3, 4)), 1))                       # a 3x4 tensor of the dtype under test
        yield SampleInput((T((2, 5), noncontig=True), -1))      # non-contiguous
        yield SampleInput((T(()), 0), name="0d")                # 0-dim
        yield SampleInput((T((0, 3)), 1), name="empty")         # empty

    OPS = [
        OpInfo("softmax", _softmax, dtypes=FLOAT_DTYPES, op="nn.functional.softmax",
               aten=("_softmax",), tolerances={"float16": (1e-2, 1e-3)}),
    ]

Every module of this package except private ones (``_name.py``) is imported in name order;
OpInfo names must be unique across areas (the registry raises on duplicates).  See
``docs/conformance.md`` for the spec language and flags.
"""

from __future__ import annotations

import importlib
import pkgutil

from torchplug.testing.opinfo import OpInfo

__all__ = ["op_db", "area_modules"]

_DB: list[OpInfo] | None = None


def area_modules() -> list[str]:
    """Names of the area modules, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def op_db() -> list[OpInfo]:
    """Every OpInfo of every area module (cached)."""
    global _DB
    if _DB is None:
        ops: list[OpInfo] = []
        seen: dict[str, str] = {}
        for name in area_modules():
            module = importlib.import_module(f"{__name__}.{name}")
            for op in module.OPS:
                if op.name in seen:
                    raise ValueError(f"OpInfo {op.name!r} is defined by both opinfos/{seen[op.name]}.py and opinfos/{name}.py")
                seen[op.name] = name
                ops.append(op)
        _DB = ops
    return list(_DB)
