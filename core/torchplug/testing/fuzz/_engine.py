"""Draws the sequence of fuzz cases: case ``k`` of a run is the same for the same seed, engine and ops.

``hypothesis`` (default): Hypothesis generates the choices (seeded with ``@seed``, no example
database, no deadline, the generate phase only: nothing fails inside it, so nothing to shrink).
``random``: ``random.Random`` seeded with ``(seed, k)`` per case, no Hypothesis needed; case ``k``
can be drawn without the ones before it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from torchplug.testing.fuzz._draw import HypothesisDraw, RandomDraw
from torchplug.testing.fuzz._spec import Call
from torchplug.testing.fuzz._table import FuzzOp, generate

__all__ = ["ENGINES", "drive"]

ENGINES = ("hypothesis", "random")


def drive(count: int, seed: int, engine: str, ops: Sequence[FuzzOp], visit: Callable[[int, Call], None],
          start: int = 0) -> int:
    """Call ``visit(k, case)`` for cases ``start..count-1`` of the run; returns how many were visited.

    Under Hypothesis, cases before ``start`` are drawn again (not run) so that case ``k`` stays case ``k``.
    """
    if engine == "random":
        for k in range(start, count):
            visit(k, generate(RandomDraw(seed * 1_000_003 + k), ops))
        return max(count - start, 0)
    if engine != "hypothesis":
        raise ValueError(f"unknown fuzz engine {engine!r}; expected one of {ENGINES}")
    return _drive_hypothesis(count, seed, ops, visit, start)


def _drive_hypothesis(count: int, seed: int, ops: Sequence[FuzzOp], visit: Callable[[int, Call], None],
                      start: int) -> int:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    counter = [0, 0]  # cases drawn, cases visited

    # Hypothesis may skip an example it has already tried: ask for a few more than needed, run ``count``
    @hseed(seed)
    @settings(max_examples=count + count // 20 + 10, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, report_multiple_bugs=False)
    @given(st.data())
    def body(data: st.DataObject) -> None:
        # always draw the whole case: Hypothesis checks that a choice sequence draws the same way each time
        call = generate(HypothesisDraw(data), ops)
        k = counter[0]
        counter[0] += 1
        if start <= k < count:
            counter[1] += 1
            visit(k, call)

    body()
    return counter[1]
