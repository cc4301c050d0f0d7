"""The func plugin's hooks: batching rules and the per-sample fallback at the Batched key, and
``torchplug.func`` / ``torchplug.vmap``."""

from __future__ import annotations

import sys
from typing import Any

from torchplug.hookspecs import hookimpl

__all__ = ["torchplug_register_kernels", "torchplug_configure"]


@hookimpl
def torchplug_register_kernels(ctx: Any) -> None:
    from torchplug._dispatch.dispatcher import DISPATCHER

    from ._kernels import batched_fallback, make_rule_kernel
    from ._rules import rules_for_table

    aten = {name: entry for name, entry in list(DISPATCHER.ops.items()) if name.startswith("aten::")}
    lib = ctx.library("aten", "IMPL")
    for name, rule in rules_for_table(aten).items():
        lib.impl(name, make_rule_kernel(aten[name], rule), "Batched", with_keyset=True)
    # every other op (and ops defined later, custom ops included): decomposition, random handling or the loop
    lib.fallback(batched_fallback, "Batched", with_keyset=True)


@hookimpl
def torchplug_configure(ctx: Any) -> None:
    func = sys.modules["torchplug_func"]
    ctx.expose("func", func)
    ctx.expose("vmap", func.vmap)
