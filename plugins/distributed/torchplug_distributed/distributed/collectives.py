"""The tensor collectives and point-to-point operations of ``torch.distributed``.

Each function checks what PyTorch checks (types, sizes, ranks), picks the group's backend for the
tensor's device and starts the operation; with ``async_op=True`` it returns the
:class:`~torchplug_distributed.distributed.work.Work`, else it waits (raising after the group's timeout).
Ranks (``src``, ``dst``, ``peer``) are global ranks, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import torchplug

from .distributed_c10d import ProcessGroup, resolve_group
from .reduce_op import ReduceOp, as_kind

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single", "send", "recv", "isend",
           "irecv", "P2POp", "batch_isend_irecv", "barrier", "monitored_barrier"]


def _check_tensor(value: Any, name: str) -> None:
    if not isinstance(value, torchplug.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(value)} instead.")


def _check_tensor_list(value: Any, name: str) -> None:
    if not isinstance(value, list) or not all(isinstance(t, torchplug.Tensor) for t in value):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(value)} instead.")


def _check_like(what: str, expected: Any, tensors: list[Any]) -> None:
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(expected.shape) and t.numel() != expected.numel():
            raise RuntimeError(f"{what}: invalid tensor size at index {i} (expected {tuple(expected.shape)}, "
                               f"got {tuple(t.shape)})")
        if t.dtype != expected.dtype:
            raise RuntimeError(f"{what}: invalid tensor type at index {i} (expected {expected.dtype}, got {t.dtype})")


def _check_count(what: str, tensors: list[Any], pg: ProcessGroup, name: str) -> None:
    if len(tensors) != pg.size():
        raise RuntimeError(f"{what}: {name} must have one tensor per rank of the group: got {len(tensors)}, "
                           f"the group has {pg.size()} ranks")


def _finish(work: Any, async_op: bool) -> Any:
    if async_op:
        return work
    work.wait()
    return None


def _root(pg: ProcessGroup, rank: int, what: str, role: str) -> int:
    if not isinstance(rank, int):
        raise TypeError(f"{what}: {role} must be an int rank, got {rank!r}")
    if pg._ranks == list(range(pg.size())) and not 0 <= rank < pg.size():
        raise RuntimeError(f"{what}: invalid root rank: {rank} (the group has ranks 0..{pg.size() - 1})")
    return pg._group_rank(rank, what, role)


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False) -> Any:
    """Reduce ``tensor`` over all ranks in place (every rank gets the result)."""
    _check_tensor(tensor, "tensor")
    kind = as_kind(op)
    pg = resolve_group(group, "all_reduce")
    if pg is None:
        return None
    return _finish(pg._backend_for(tensor, "all_reduce").allreduce(tensor, kind), async_op)


def broadcast(tensor: Any, src: int | None = None, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Any:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "broadcast")
    if pg is None:
        return None
    root = group_src if group_src is not None else _root(pg, 0 if src is None else src, "broadcast", "source")
    return _finish(pg._backend_for(tensor, "broadcast").broadcast(tensor, root), async_op)


def reduce(tensor: Any, dst: int | None = None, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Any:
    """Reduce ``tensor`` over all ranks into rank ``dst``'s ``tensor``."""
    _check_tensor(tensor, "tensor")
    kind = as_kind(op)
    pg = resolve_group(group, "reduce")
    if pg is None:
        return None
    root = group_dst if group_dst is not None else _root(pg, 0 if dst is None else dst, "reduce", "destination")
    return _finish(pg._backend_for(tensor, "reduce").reduce(tensor, root, kind), async_op)


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None, async_op: bool = False) -> Any:
    """``tensor_list[i]`` = rank ``i``'s ``tensor``."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "all_gather")
    if pg is None:
        return None
    _check_count("all_gather", tensor_list, pg, "tensor_list")
    _check_like("all_gather", tensor, tensor_list)
    return _finish(pg._backend_for(tensor, "all_gather").allgather(tensor_list, tensor), async_op)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any, group: Any = None, async_op: bool = False) -> Any:
    """Every rank's ``input_tensor`` concatenated (or stacked) along dim 0 into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    pg = resolve_group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.numel() != input_tensor.numel() * pg.size():
        raise ValueError(f"all_gather_into_tensor: output tensor size must be equal to world_size times input "
                         f"tensor size: output has {output_tensor.numel()} elements, input {input_tensor.numel()}, "
                         f"world size {pg.size()}")
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError(f"all_gather_into_tensor: output tensor must have the same type as input tensor "
                        f"({output_tensor.dtype} vs {input_tensor.dtype})")
    backend = pg._backend_for(input_tensor, "all_gather_into_tensor")
    return _finish(backend.allgather_into_tensor(output_tensor, input_tensor), async_op)


def reduce_scatter(output: Any, input_list: list[Any], op: Any = ReduceOp.SUM, group: Any = None,
                   async_op: bool = False) -> Any:
    """``output`` = the reduction over ranks of their ``input_list[this rank]``."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    kind = as_kind(op)
    pg = resolve_group(group, "reduce_scatter")
    if pg is None:
        return None
    _check_count("reduce_scatter", input_list, pg, "input_list")
    _check_like("reduce_scatter", output, input_list)
    return _finish(pg._backend_for(output, "reduce_scatter").reduce_scatter(output, input_list, kind), async_op)


def reduce_scatter_tensor(output: Any, input: Any, op: Any = ReduceOp.SUM, group: Any = None,
                          async_op: bool = False) -> Any:
    """``output`` = this rank's dim-0 chunk of the reduction of every rank's ``input``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    kind = as_kind(op)
    pg = resolve_group(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if input.numel() != output.numel() * pg.size():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be the same size as output size times world "
                         f"size: input has {input.numel()} elements, output {output.numel()}, world size {pg.size()}")
    backend = pg._backend_for(input, "reduce_scatter_tensor")
    return _finish(backend.reduce_scatter_tensor(output, input, kind), async_op)


def gather(tensor: Any, gather_list: list[Any] | None = None, dst: int | None = None, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Any:
    """Rank ``dst``'s ``gather_list[i]`` = rank ``i``'s ``tensor`` (other ranks pass no list)."""
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "gather")
    if pg is None:
        return None
    root = group_dst if group_dst is not None else _root(pg, 0 if dst is None else dst, "gather", "destination")
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        _check_tensor_list(gather_list, "gather_list")
        _check_count("gather", gather_list, pg, "gather_list")
        _check_like("gather", tensor, gather_list)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    backend = pg._backend_for(tensor, "gather")
    return _finish(backend.gather(tensor, gather_list if pg.rank() == root else None, root), async_op)


def scatter(tensor: Any, scatter_list: list[Any] | None = None, src: int | None = None, group: Any = None,
            async_op: bool = False, group_src: int | None = None) -> Any:
    """Each rank's ``tensor`` = rank ``src``'s ``scatter_list[rank]``."""
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "scatter")
    if pg is None:
        return None
    root = group_src if group_src is not None else _root(pg, 0 if src is None else src, "scatter", "source")
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        _check_tensor_list(scatter_list, "scatter_list")
        _check_count("scatter", scatter_list, pg, "scatter_list")
        _check_like("scatter", tensor, scatter_list)
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    backend = pg._backend_for(tensor, "scatter")
    return _finish(backend.scatter(tensor, scatter_list if pg.rank() == root else None, root), async_op)


def all_to_all(output_tensor_list: list[Any], input_tensor_list: list[Any], group: Any = None,
               async_op: bool = False) -> Any:
    """``output_tensor_list[i]`` = rank ``i``'s ``input_tensor_list[this rank]``."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = resolve_group(group, "all_to_all")
    if pg is None:
        return None
    _check_count("all_to_all", output_tensor_list, pg, "output_tensor_list")
    _check_count("all_to_all", input_tensor_list, pg, "input_tensor_list")
    for t in output_tensor_list[1:] + input_tensor_list:
        if t.dtype != output_tensor_list[0].dtype:
            raise RuntimeError(f"all_to_all: tensors must all have the same dtype ({output_tensor_list[0].dtype} "
                               f"vs {t.dtype})")
    backend = pg._backend_for(input_tensor_list[0], "all_to_all")
    return _finish(backend.alltoall(output_tensor_list, input_tensor_list), async_op)


def _splits(splits: list[int] | None, tensor: Any, pg: ProcessGroup, name: str) -> list[int]:
    rows = tensor.shape[0] if tensor.dim() else 1
    if splits is None or len(splits) == 0:
        if rows % pg.size():
            raise RuntimeError(f"all_to_all_single: dim 0 of the {name} ({rows}) must be divisible by the group "
                               f"size {pg.size()} when no split sizes are given")
        return [rows // pg.size()] * pg.size()
    splits = [int(s) for s in splits]
    if len(splits) != pg.size() or sum(splits) != rows or min(splits) < 0:
        raise RuntimeError(f"all_to_all_single: {name} split sizes {splits} must be {pg.size()} non-negative "
                           f"numbers summing to its dim 0 ({rows})")
    return splits


def all_to_all_single(output: Any, input: Any, output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: Any = None, async_op: bool = False) -> Any:
    """Split ``input`` along dim 0 and send piece ``i`` to rank ``i``; ``output`` holds the pieces received."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = resolve_group(group, "all_to_all_single")
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise RuntimeError(f"all_to_all_single: output and input must have the same dtype ({output.dtype} vs "
                           f"{input.dtype})")
    out_splits = _splits(output_split_sizes, output, pg, "output")
    in_splits = _splits(input_split_sizes, input, pg, "input")
    backend = pg._backend_for(input, "all_to_all_single")
    return _finish(backend.alltoall_single(output, input, out_splits, in_splits), async_op)


def _peer(pg: ProcessGroup, peer: int, what: str, role: str) -> int:
    from .distributed_c10d import get_rank

    if peer == get_rank():
        if role == "destination":
            raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the "
                             "current process.")
        raise ValueError("Invalid source rank: source rank should not be the same as the rank of the current "
                         "process.")
    if pg._ranks == list(range(pg.size())) and not 0 <= peer < pg.size():
        raise ValueError(f"{what}: invalid {role} rank {peer}: the group has ranks 0..{pg.size() - 1}")
    return pg._group_rank(peer, what, role)


def isend(tensor: Any, dst: int | None = None, group: Any = None, tag: int = 0, group_dst: int | None = None) -> Any:
    """Start sending ``tensor`` to rank ``dst``; returns the Work (None on non-members)."""
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "isend")
    if pg is None:
        return None
    peer = group_dst if group_dst is not None else _peer(pg, dst, "send", "destination")
    return pg._backend_for(tensor, "send").send(tensor, peer, tag)


def irecv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0, group_src: int | None = None) -> Any:
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None); returns the Work."""
    _check_tensor(tensor, "tensor")
    pg = resolve_group(group, "irecv")
    if pg is None:
        return None
    peer = group_src if group_src is not None else (None if src is None else _peer(pg, src, "recv", "source"))
    return pg._backend_for(tensor, "recv").recv(tensor, peer, tag)


def send(tensor: Any, dst: int | None = None, group: Any = None, tag: int = 0, group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` and wait until it left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0, group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any if None); returns the sender's global rank (-1 off-group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = resolve_group(group, "recv")
    return pg._ranks[work.source_rank()] if src is None and group_src is None else (
        pg._ranks[group_src] if group_src is not None else src)


class P2POp:
    """One point-to-point operation for :func:`batch_isend_irecv`: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op: Any, tensor: Any, peer: int | None = None, group: Any = None, tag: int = 0,
                 group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer

    def __repr__(self) -> str:
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, tensor={tuple(self.tensor.shape)})"


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Any]:
    """Start every operation of ``p2p_op_list``; returns their Works (wait on each)."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return [w for w in works if w is not None]


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Any:
    """Wait until every rank of ``group`` reached the barrier."""
    pg = resolve_group(group, "barrier")
    if pg is None:
        return None
    return _finish(pg._bootstrap.barrier(), async_op)


def monitored_barrier(group: Any = None, timeout: Any = None, wait_all_ranks: bool = False) -> None:
    """A barrier that raises after ``timeout`` (default: the group's) naming this rank, instead of hanging."""
    pg = resolve_group(group, "monitored_barrier")
    if pg is None:
        return
    work = pg._bootstrap.barrier()
    work.wait(timeout)


