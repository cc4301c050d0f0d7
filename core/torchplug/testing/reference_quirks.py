"""Answers of PyTorch that change with its CPU dispatch level, and the value compared instead.

PyTorch picks a vectorized kernel per CPU (``ATEN_CPU_CAPABILITY``: ``default``, ``avx2``,
``avx512``); for a few special inputs those kernels disagree with each other, so torch's answer
on one machine is not a reference for another.  Each entry below names the op, the inputs it
concerns and the mathematically right value that the conformance suite and the fuzzer compare
with instead.  torchplug's kernels return that value on every machine.

To find the next one, the test suite runs the differential tests at the machine's native level
and again with ``ATEN_CPU_CAPABILITY=default`` (see ``tox.ini``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ReferenceQuirk", "QUIRKS", "correct_reference"]


@dataclass(frozen=True)
class ReferenceQuirk:
    """One ISA-dependent answer of torch's: where it happens and what is right instead."""

    op_path: str  # as in the OpInfo table, e.g. "nn.functional.gelu"
    dtypes: frozenset[str]  # dtype names it was seen for
    applies: Callable[[tuple[Any, ...], dict[str, Any]], bool]  # on the call's (torch) arguments
    fix: Callable[[Any, tuple[Any, ...]], Any]  # (torch's result, torch's args) -> the right reference
    seen: str  # what torch gives, and where


def _exact_gelu(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return kwargs.get("approximate", "none") == "none" and (len(args) < 2 or args[1] == "none")


def _gelu_at_plus_inf(result: Any, args: tuple[Any, ...]) -> Any:
    # gelu(x) = x * Phi(x) -> +inf as x -> +inf.  Only +inf inputs change; everything else stays torch's.
    x = args[0]
    return result.masked_fill(x == float("inf"), float("inf"))


QUIRKS: tuple[ReferenceQuirk, ...] = (
    ReferenceQuirk(
        op_path="nn.functional.gelu",
        dtypes=frozenset({"float16", "bfloat16", "float32"}),
        applies=_exact_gelu,
        fix=_gelu_at_plus_inf,
        seen="torch 2.13 gelu(+inf) (approximate='none') is nan on some AVX-512 and AVX2 machines and +inf at "
             "ATEN_CPU_CAPABILITY=default on others (its vectorized erf path); float64 gives +inf everywhere",
    ),
)


def correct_reference(op_path: str, dtype: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> Any:
    """torch's ``result`` for ``op_path(*args, **kwargs)``, with ISA-dependent answers replaced by the right ones."""
    for quirk in QUIRKS:
        if quirk.op_path == op_path and dtype in quirk.dtypes and result is not None and quirk.applies(args, kwargs):
            result = quirk.fix(result, args)
    return result
