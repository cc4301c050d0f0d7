"""The fuzz report: counts per category and per op, the exception-type agreement, one reproducer
per distinct failure, which documented allowances matched; as text, Markdown or JSON."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from torchplug.testing.fuzz._run import CATEGORIES, FAILURES, Outcome

__all__ = ["FuzzReport"]

_NUMBERS = re.compile(r"-?\d+(\.\d+)?")


def _signature(o: Outcome) -> tuple[str, ...]:
    """What makes two failures the same failure: op, category, error types and message shapes."""
    def norm(text: str) -> str:
        return _NUMBERS.sub("#", text)[:70]

    if o.category == "value_mismatch":
        return o.op, o.category, norm(o.detail.split(";")[0])[:40]
    return o.op, o.category, norm(o.torch_error), norm(o.ours_error)


@dataclass
class FuzzReport:
    """All outcomes of a fuzz run plus its settings."""

    outcomes: list[Outcome]
    device: str
    seed: int
    engine: str
    seconds: float = 0.0
    allowance_ids: list[str] = field(default_factory=list)

    # ---- figures -----------------------------------------------------------------------------------------------
    def counts(self, allowed: bool | None = None) -> Counter[str]:
        """Cases per category (``allowed=False``: only failures no allowance covers)."""
        return Counter(o.category for o in self.outcomes
                       if allowed is None or o.category not in FAILURES or bool(o.allowed) == allowed)

    def per_op(self) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            out.setdefault(o.op, Counter())[o.category] += 1
        return dict(sorted(out.items()))

    def type_agreement(self, documented: bool = False) -> float:
        """Share of both-raise cases with the same exception type (1.0 when none raised).

        ``documented=True`` leaves out the mismatches the documented list covers.
        """
        c = self.counts(allowed=False) if documented else self.counts()
        total = c["both_raise"] + c["type_mismatch"]
        return c["both_raise"] / total if total else 1.0

    def unallowed(self, category: str) -> list[Outcome]:
        """Failures of ``category`` that no allowance covers."""
        return [o for o in self.outcomes if o.category == category and not o.allowed]

    def examples(self, allowed: bool | None = None) -> list[tuple[tuple[str, ...], int, Outcome]]:
        """One example (the shortest reproducer) per distinct failure, with how often it occurred."""
        groups: dict[tuple[str, ...], list[Outcome]] = {}
        for o in self.outcomes:
            if o.category in FAILURES and (allowed is None or bool(o.allowed) == allowed):
                groups.setdefault(_signature(o), []).append(o)
        out = [(key, len(group), min(group, key=lambda x: len(x.repro) or 10**9)) for key, group in groups.items()]
        return sorted(out, key=lambda item: (FAILURES.index(item[2].category), item[2].op, -item[1]))

    def unused_allowances(self) -> list[str]:
        used = {o.allowed for o in self.outcomes if o.allowed}
        return [a for a in self.allowance_ids if a not in used]

    # ---- output --------------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device, "seed": self.seed, "engine": self.engine, "cases": len(self.outcomes),
            "seconds": round(self.seconds, 1), "counts": dict(self.counts()),
            "counts_outside_allowances": dict(self.counts(allowed=False)),
            "type_agreement": self.type_agreement(),
            "type_agreement_outside_allowances": self.type_agreement(documented=True),
            "per_op": {op: dict(c) for op, c in self.per_op().items()},
            "failures": [{"count": n, **o.to_json()} for _, n, o in self.examples()],
            "unused_allowances": self.unused_allowances(),
        }

    def summary(self) -> str:
        c, out = self.counts(), self.counts(allowed=False)
        parts = [f"{cat} {c[cat]}" + (f" ({c[cat] - out[cat]} allowed)" if cat in FAILURES and c[cat] != out[cat] else "")
                 for cat in CATEGORIES]
        return (f"torchplug fuzz on {self.device}: {len(self.outcomes)} cases in {self.seconds:.0f} s (seed {self.seed}, "
                f"{self.engine}): " + ", ".join(parts) + f"; exception types agree in {100 * self.type_agreement():.2f}% "
                f"of both-raise cases ({100 * self.type_agreement(documented=True):.2f}% leaving out documented "
                "mismatches)")

    def text(self, examples: int = 40) -> str:
        """The counts table per category and per op, then failing examples with reproducers."""
        lines = [self.summary(), ""]
        lines += self._op_table(markdown=False)
        shown = self.examples(allowed=False)
        if shown:
            lines += ["", f"Failures outside the documented allowances ({len(shown)} distinct):"]
            for key, n, o in shown[:examples]:
                lines += ["", f"[{o.category}] {o.op} x{n}: {self._what(o)}", _indent(o.repro)]
        unused = self.unused_allowances()
        if unused:
            lines += ["", "Allowances that matched nothing in this run: " + ", ".join(unused)]
        return "\n".join(lines)

    def markdown(self, title: str = "torchplug differential fuzz report") -> str:
        """The full classified report: counts per category and op, one reproducer per distinct failure."""
        c, out = self.counts(), self.counts(allowed=False)
        lines = [f"# {title}", "", self.summary(), "",
                 "| category | cases | outside the documented list |", "|---|---:|---:|"]
        lines += [f"| {cat} | {c[cat]} | {out[cat] if cat in FAILURES else ''} |" for cat in CATEGORIES]
        lines += ["", "## Per op", ""] + self._op_table(markdown=True)
        heads = ((False, "Failures outside the documented list"), (True, "Failures the documented list covers"))
        for allowed, head in heads:
            shown = self.examples(allowed=allowed)
            lines += ["", f"## {head} ({len(shown)} distinct)"]
            for key, n, o in shown:
                lines += ["", f"### {o.category}: `{o.op}` ({n} case{'s' if n != 1 else ''})"
                          + (f" — allowance `{o.allowed}`" if o.allowed else ""), "", self._what(o), "",
                          "```python", o.repro, "```"]
        unused = self.unused_allowances()
        if unused:
            lines += ["", "Allowances that matched nothing: " + ", ".join(f"`{u}`" for u in unused)]
        return "\n".join(lines) + "\n"

    def _op_table(self, markdown: bool) -> list[str]:
        short = ("agree", "both", "type", "silent", "tp-only", "value", "crash", "skipped")
        rows = [(op, [c[cat] for cat in CATEGORIES]) for op, c in self.per_op().items()]
        if markdown:
            out = ["| op | " + " | ".join(short) + " |", "|---|" + "---:|" * len(short)]
            return out + [f"| `{op}` | " + " | ".join(str(v) for v in vals) + " |" for op, vals in rows]
        width = max((len(op) for op, _ in rows), default=2)
        out = [f"{'op':<{width}} " + " ".join(f"{s:>7}" for s in short)]
        return out + [f"{op:<{width}} " + " ".join(f"{v:>7}" for v in vals) for op, vals in rows]

    @staticmethod
    def _what(o: Outcome) -> str:
        parts = [o.detail] if o.detail else []
        if o.torch_error:
            parts.append(f"torch: {o.torch_error}")
        if o.ours_error:
            parts.append(f"torchplug: {o.ours_error}")
        return "; ".join(parts)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
