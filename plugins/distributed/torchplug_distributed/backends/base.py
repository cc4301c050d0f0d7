"""The interface a process-group backend implements (``torchplug.distributed_backends`` entry points).

A backend is a class.  ``init_process_group(backend=NAME)`` looks ``NAME`` up in the entry-point group,
checks ``is_available()``, and makes one instance per process group: ``Backend(rank, world_size, timeout,
bootstrap=...)`` for the default group, ``instance.new_group(ranks)`` for the groups of ``new_group``.
Every collective takes and returns tensors of one of the backend's ``devices`` and returns a
:class:`~torchplug_distributed.distributed.work.Work`; ranks are ranks *in the group*.  The API layer
(``torchplug.distributed``) has already checked the arguments PyTorch checks, so a backend only moves data.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Backend"]


class Backend:
    """Base class of process-group backends; every collective raises until a subclass implements it."""

    #: device types whose tensors this backend handles
    devices: tuple[str, ...] = ()

    @classmethod
    def is_available(cls) -> bool:
        """Whether the libraries the backend needs are importable."""
        return False

    @classmethod
    def launch_info(cls) -> tuple[int, int] | None:
        """``(rank, world_size)`` when the process was started by this backend's launcher (e.g. mpiexec), else None."""
        return None

    def __init__(self, rank: int, world_size: int, timeout: float, *, bootstrap: Any = None) -> None:
        self.rank = rank
        self.world_size = world_size
        self.timeout = timeout

    def _unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"the {type(self).__name__} process-group backend does not implement {what}")

    def new_group(self, ranks: list[int], bootstrap: Any = None) -> Backend | None:
        """A backend over ``ranks`` (collective over this group); None on ranks not in it."""
        raise self._unsupported("new_group")

    def shutdown(self) -> None:
        """Release the group's resources (``destroy_process_group``)."""

    def allreduce(self, tensor: Any, op: Any) -> Any:
        raise self._unsupported("all_reduce")

    def broadcast(self, tensor: Any, root: int) -> Any:
        raise self._unsupported("broadcast")

    def reduce(self, tensor: Any, root: int, op: Any) -> Any:
        raise self._unsupported("reduce")

    def allgather(self, outputs: list[Any], tensor: Any) -> Any:
        raise self._unsupported("all_gather")

    def allgather_into_tensor(self, output: Any, tensor: Any) -> Any:
        raise self._unsupported("all_gather_into_tensor")

    def reduce_scatter(self, output: Any, inputs: list[Any], op: Any) -> Any:
        raise self._unsupported("reduce_scatter")

    def reduce_scatter_tensor(self, output: Any, input: Any, op: Any) -> Any:
        raise self._unsupported("reduce_scatter_tensor")

    def gather(self, tensor: Any, outputs: list[Any] | None, root: int) -> Any:
        raise self._unsupported("gather")

    def scatter(self, tensor: Any, inputs: list[Any] | None, root: int) -> Any:
        raise self._unsupported("scatter")

    def alltoall(self, outputs: list[Any], inputs: list[Any]) -> Any:
        raise self._unsupported("all_to_all")

    def alltoall_single(self, output: Any, input: Any, output_splits: list[int], input_splits: list[int]) -> Any:
        raise self._unsupported("all_to_all_single")

    def send(self, tensor: Any, dst: int, tag: int) -> Any:
        raise self._unsupported("send")

    def recv(self, tensor: Any, src: int | None, tag: int) -> Any:
        raise self._unsupported("recv")

    def barrier(self) -> Any:
        raise self._unsupported("barrier")

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's ``data`` (the object collectives pickle through this)."""
        raise self._unsupported("object collectives")

    def broadcast_bytes(self, data: bytes | None, root: int) -> bytes:
        """``root``'s ``data`` on every rank."""
        raise self._unsupported("object collectives")
