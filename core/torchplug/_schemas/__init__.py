"""The ``aten`` operator table: every schema the core defines, in one declarative list (data; may import
``_base``, ``_compat``, ``_dispatch``).

The table is assembled from section modules in this package (``base`` first, then the others
in name order); each defines ``ROWS``, a tuple of lines ``schema | flags``.  Flags:

- ``wrapped``: Tensor arguments also accept Python numbers (binary pointwise ops), which take
  part in type promotion as PyTorch's "wrapped numbers" do.
- ``inplace``: also define ``name_`` (self written in place).
- ``out``: also define the ``.out`` overload (``*, Tensor(a!) out``); ``out=NAME`` names it.
- any other word is recorded as a tag (``pointwise``, ``reduction``, ``view``, ``factory``...).

Where PyTorch splits one Python function over several overloads only to encode optional
arguments (``sum``/``sum.dim_IntList``, ``div.Tensor``/``div.Tensor_mode``), this table keeps
one overload with optional arguments, so a backend writes one kernel.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["SCHEMA_TABLE", "expand_table", "section_rows"]


def section_rows() -> dict[str, tuple[str, ...]]:
    """Section name -> its rows, ``base`` first then alphabetical."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    names.sort(key=lambda n: n != "base")
    return {name: importlib.import_module(f"{__name__}.{name}").ROWS for name in names}


SCHEMA_TABLE = tuple(row for rows in section_rows().values() for row in rows)


def _variants(schema: str, flags: list[str]) -> list[tuple[str, list[str]]]:
    """Expand ``inplace``/``out`` flags into the extra overload schemas."""
    head, _, ret = schema.partition(" -> ")
    name_part, _, args = head.partition("(")
    args = args[:-1]
    base, _, overload = name_part.partition(".")
    out_name = next((f.split("=", 1)[1] for f in flags if f.startswith("out=")), None)
    flags = ["out" if f.startswith("out=") else f for f in flags]
    tags = [f for f in flags if f not in ("inplace", "out")]
    result = [(schema, tags)]
    first, _, rest = args.partition(", ")
    if "inplace" in flags:
        # The written argument is the first one, whatever it is called (self, input).
        self_arg = first.replace("Tensor ", "Tensor(a!) ", 1)
        inplace_args = self_arg + (", " + rest if rest else "")
        dotted = f".{overload}" if overload else ""
        result.append((f"{base}_{dotted}({inplace_args}) -> Tensor(a!)", tags + ["inplace"]))
    if "out" in flags:
        out_overload = out_name or ("out" if overload in ("", "Tensor", "default") else f"{overload}_out")
        kw = ", *, " if "*" not in args.split(", ") else ", "
        result.append((f"{base}.{out_overload}({args}{kw}Tensor(a!) out) -> Tensor(a!)", tags + ["out"]))
    return result


def expand_table() -> list[tuple[str, tuple[str, ...], bool]]:
    """(schema, tags, wrapped_numbers) for every overload the table defines."""
    rows = []
    for line in SCHEMA_TABLE:
        schema, _, flag_text = line.partition(" | ")
        flags = flag_text.split()
        wrapped = "wrapped" in flags
        flags = [f for f in flags if f != "wrapped"]
        for variant, tags in _variants(schema.strip(), flags):
            rows.append(("aten::" + variant, tuple(tags), wrapped))
    return rows
