"""Collectives of picklable Python objects (``all_gather_object``, ``broadcast_object_list``...).

Objects travel pickled, through the group's CPU backend, whatever device its tensors use; as in PyTorch,
unpickling runs arbitrary code, so use them only between trusted ranks.
"""

from __future__ import annotations

import pickle
from typing import Any

from .distributed_c10d import resolve_group

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
           "send_object_list", "recv_object_list"]


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """``object_list[i]`` = rank ``i``'s ``obj`` (``object_list`` has one slot per rank)."""
    pg = resolve_group(group, "all_gather_object")
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have one slot per rank ({pg.size()}), "
                         f"got {len(object_list)}")
    for i, data in enumerate(pg._bootstrap.allgather_bytes(pickle.dumps(obj))):
        object_list[i] = pickle.loads(data)


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: Any = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Replace every rank's ``object_list`` items with rank ``src``'s (the lists have the same length)."""
    pg = resolve_group(group, "broadcast_object_list")
    if pg is None:
        return
    root = group_src if group_src is not None else pg._group_rank(0 if src is None else src, "broadcast_object_list",
                                                                  "source")
    payload = pickle.dumps(list(object_list)) if pg.rank() == root else None
    received = pickle.loads(pg._bootstrap.broadcast_bytes(payload, root))
    if pg.rank() != root:
        object_list[:len(received)] = received


def gather_object(obj: Any, object_gather_list: list[Any] | None = None, dst: int | None = None, group: Any = None,
                  group_dst: int | None = None) -> None:
    """Rank ``dst``'s ``object_gather_list[i]`` = rank ``i``'s ``obj``."""
    pg = resolve_group(group, "gather_object")
    if pg is None:
        return
    root = group_dst if group_dst is not None else pg._group_rank(0 if dst is None else dst, "gather_object",
                                                                  "destination")
    if pg.rank() == root and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank, with one slot per "
                         "rank.")
    gathered = pg._bootstrap.allgather_bytes(pickle.dumps(obj))
    if pg.rank() == root:
        for i, data in enumerate(gathered):
            object_gather_list[i] = pickle.loads(data)


def scatter_object_list(scatter_object_output_list: list[Any], scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: Any = None, group_src: int | None = None) -> None:
    """``scatter_object_output_list[0]`` = rank ``src``'s ``scatter_object_input_list[this rank]``."""
    pg = resolve_group(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = group_src if group_src is not None else pg._group_rank(0 if src is None else src, "scatter_object_list",
                                                                  "source")
    payload = None
    if pg.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != pg.size():
            raise ValueError("scatter_object_list: scatter_object_input_list must have one object per rank on the "
                             "source rank")
        payload = pickle.dumps(list(scatter_object_input_list))
    scatter_object_output_list[0] = pickle.loads(pg._bootstrap.broadcast_bytes(payload, root))[pg.rank()]


def send_object_list(object_list: list[Any], dst: int | None = None, group: Any = None, device: Any = None,
                     group_dst: int | None = None) -> None:
    """Send the objects of ``object_list`` to rank ``dst`` (which calls :func:`recv_object_list`)."""
    import torchplug

    from .collectives import send

    data = pickle.dumps(list(object_list))
    send(torchplug.tensor([len(data)], dtype=torchplug.int64), dst, group, group_dst=group_dst)
    send(torchplug.frombuffer(bytearray(data), dtype=torchplug.uint8), dst, group, group_dst=group_dst)


def recv_object_list(object_list: list[Any], src: int | None = None, group: Any = None, device: Any = None,
                     group_src: int | None = None) -> int:
    """Fill ``object_list`` with the objects rank ``src`` sent; returns the sender's rank."""
    import torchplug

    from .collectives import recv

    size = torchplug.zeros(1, dtype=torchplug.int64)
    sender = recv(size, src, group, group_src=group_src)
    payload = torchplug.empty(int(size.item()), dtype=torchplug.uint8)
    recv(payload, sender, group)
    received = pickle.loads(payload.numpy().tobytes())
    object_list[:len(received)] = received
    return sender
