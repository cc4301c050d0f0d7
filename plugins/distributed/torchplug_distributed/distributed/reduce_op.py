"""``ReduceOp``: the reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter``, named as PyTorch's."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp", "RedOpType"]


class RedOpType(enum.IntEnum):
    """The reduction kinds (PyTorch's ``ReduceOp.RedOpType``, same values)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """``ReduceOp.SUM`` ... ``ReduceOp.BXOR``; ``ReduceOp(ReduceOp.MAX)`` wraps a kind as PyTorch's does."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED

    def __init__(self, op: RedOpType = RedOpType.SUM) -> None:
        self.op = RedOpType(op)

    def __eq__(self, other: object) -> bool:
        return as_kind(other) == self.op if isinstance(other, (ReduceOp, RedOpType, int)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.op)

    def __repr__(self) -> str:
        return f"ReduceOp({self.op!r})"


def as_kind(op: object) -> RedOpType:
    """The :class:`RedOpType` of ``op`` (a kind or a ``ReduceOp``); TypeError for anything else."""
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, RedOpType):
        return op
    if isinstance(op, int) and not isinstance(op, bool) and op in RedOpType._value2member_map_:
        return RedOpType(op)
    raise TypeError(f"op must be a torch.distributed.ReduceOp (e.g. ReduceOp.SUM), got {op!r}")
