"""``torchplug.distributed``: process groups and collectives (PyTorch's ``torch.distributed``).

Backends: ``mpi`` (CPU tensors through mpi4py; ``gloo`` is accepted as its name), ``nccl`` (cuda tensors
through CuPy's NCCL), and any a package registers under the entry-point group
``torchplug.distributed_backends``.  Start the ranks with ``torchplugrun`` (``python -m
torchplug.distributed.run``) or ``mpiexec``; see docs/distributed.md.
"""

from __future__ import annotations

from .collectives import (P2POp, all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single,
                          barrier, batch_isend_irecv, broadcast, gather, irecv, isend, monitored_barrier, recv, reduce,
                          reduce_scatter, reduce_scatter_tensor, scatter, send)
from .distributed_c10d import (Backend, GroupMember, ProcessGroup, default_pg_timeout, destroy_process_group,
                               get_backend, get_default_backend_for_device, get_global_rank, get_group_rank,
                               get_node_local_rank, get_pg_count, get_process_group_ranks, get_rank, get_world_size,
                               group, init_process_group, is_available, is_backend_available, is_gloo_available,
                               is_initialized, is_mpi_available, is_nccl_available, is_torchelastic_launched,
                               new_group)
from .objects import (all_gather_object, broadcast_object_list, gather_object, recv_object_list,
                      scatter_object_list, send_object_list)
from .reduce_op import ReduceOp
from .work import DistBackendError, DistError, Work
from . import algorithms  # noqa: E402  (torchplug.distributed.algorithms.ddp_comm_hooks)

__all__ = [
    "is_available", "is_mpi_available", "is_nccl_available", "is_gloo_available", "is_backend_available",
    "is_torchelastic_launched", "init_process_group", "is_initialized", "destroy_process_group", "new_group",
    "get_rank", "get_world_size", "get_backend", "get_default_backend_for_device", "get_process_group_ranks",
    "get_global_rank", "get_group_rank", "get_node_local_rank", "get_pg_count", "default_pg_timeout",
    "Backend", "ProcessGroup", "GroupMember", "group", "ReduceOp", "Work", "DistError", "DistBackendError",
    "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
    "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single", "send", "recv", "isend",
    "irecv", "P2POp", "batch_isend_irecv", "barrier", "monitored_barrier", "all_gather_object",
    "broadcast_object_list", "gather_object", "scatter_object_list", "send_object_list", "recv_object_list",
    "GradBucket", "algorithms",
]


def __getattr__(name: str) -> object:
    # DistributedDataParallel's module: torchplug.nn.parallel looks it up here, so the nn plugin never
    # imports this plugin (they stay independent); loaded on first use only.
    if name in ("_ddp", "GradBucket"):
        import importlib

        ddp = importlib.import_module("torchplug_distributed.distributed._ddp")
        return ddp if name == "_ddp" else ddp.GradBucket
    raise AttributeError(f"module 'torchplug.distributed' has no attribute {name!r}")
