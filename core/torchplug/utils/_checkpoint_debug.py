"""``checkpoint(debug=True)``: log the ops of the forward and of the recomputation, and show both
(with where each op was called from) when the recomputation does not save what the forward saved."""

from __future__ import annotations

import traceback
from typing import Any, Callable, NoReturn

import torchplug
from torchplug.utils._checkpoint_error import CheckpointError
from torchplug.utils._dispatch_mode import DispatchMode

__all__ = ["debug_context_and_cb"]

_TEMPLATE = """\
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


def _describe(x: Any) -> str:
    if isinstance(x, torchplug.Tensor):
        return f"{x.dtype}{list(x.shape)}".replace("torchplug.", "")
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_describe(v) for v in x) + "]"
    return repr(x)


class _LoggingMode(DispatchMode):
    """Records each op (its name, argument and result shapes) and the Python stack that called it."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.tbs: list[list[traceback.FrameSummary]] = []

    def __enter__(self) -> _LoggingMode:
        self.logs, self.tbs = [], []  # each run (forward, every recomputation) logs afresh
        return super().__enter__()  # type: ignore[return-value]

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        described = ", ".join([_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in (kwargs or {}).items()])
        name = str(func)  # aten.mm.default, as torch prints an OpOverload
        self.logs.append(f"{_describe(out)} = {name}({described})")
        # the caller's frames only: torchplug's own (generated entries and kernels included) are noise
        self.tbs.append([f for f in traceback.extract_stack()[:-1] if not f.filename.startswith("<")
                         and "/torchplug/" not in f.filename and "/torchplug_" not in f.filename])
        return out


def _traces(label: str, mode: _LoggingMode) -> str:
    out = ""
    for i, (log, tb) in enumerate(zip(mode.logs, mode.tbs)):
        out += f"{log}   ({i + 1} of {len(mode.logs)} in {label})\n\n"
        out += "".join(f"{f.filename}:{f.lineno}:{f.name}\n" for f in tb) + "\n\n"
    return out


def debug_context_and_cb() -> tuple[Callable[[], tuple[Any, Any]], Callable[[CheckpointError], NoReturn]]:
    """The ``context_fn`` that logs the forward's and the recomputation's ops, and the callback that
    turns a CheckpointError into one showing both logs."""
    forward, recompute = _LoggingMode(), _LoggingMode()

    def unpack_error_cb(e: CheckpointError) -> NoReturn:
        raise CheckpointError(_TEMPLATE.format(
            forward_traces=_traces("original", forward), recompute_traces=_traces("recompute", recompute),
            forward_ops="\n".join(forward.logs), recompute_ops="\n".join(recompute.logs))) from e

    def context_fn() -> tuple[Any, Any]:
        return forward, recompute

    return context_fn, unpack_error_cb
