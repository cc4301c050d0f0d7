"""The fuzz op table by area: each module defines ``OPS: list[FuzzOp]`` (collected by
:func:`torchplug.testing.fuzz.op_table`; private ``_name`` modules are helpers)."""

from __future__ import annotations

__all__: list[str] = []
