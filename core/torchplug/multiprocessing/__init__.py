"""``torchplug.multiprocessing``: Python's ``multiprocessing`` with PyTorch's additions (``torch.multiprocessing``).

Importing it registers reducers so that tensors sent through its queues, pipes and process arguments arrive
with their data in shared memory: a host tensor is moved into a shared-memory segment (``share_memory_()``)
and the receiver maps the same segment, so writes on either side are seen by both (the Hogwild pattern:
``model.share_memory()``, then processes training it). See :mod:`torchplug._tensor.shared_memory` for the
lifetime rules. ``spawn``/``start_processes`` run a function in several processes and re-raise a child's
failure in the parent.
"""

from __future__ import annotations

import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from torchplug.multiprocessing.reductions import init_reductions
from torchplug.multiprocessing.spawn import (
    ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn,
    start_processes,
)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "SpawnContext"]
__all__ += multiprocessing.__all__  # type: ignore[attr-defined]

# the context functions of multiprocessing's default context (get_context, set_start_method, Queue...), which the
# star import brings as bound methods, work unchanged: the reducers are registered on the pickler every context uses
_sharing_strategy = "file_system" if sys.platform == "darwin" else "file_descriptor"  # PyTorch's defaults
_all_sharing_strategies = {"file_system"} if sys.platform == "darwin" else {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy: str) -> None:
    """Choose how shared tensors are passed; both of PyTorch's strategies name a segment here (POSIX shared memory)."""
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"Invalid sharing strategy: {new_strategy}")
    global _sharing_strategy
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current sharing strategy."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The sharing strategies this platform has."""
    return _all_sharing_strategies


init_reductions()
