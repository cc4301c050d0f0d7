"""The ``mpi`` process-group backend: collectives of CPU tensors through mpi4py (``gloo`` is its alias).

Every operation is a non-blocking MPI call; waiting polls it with ``Testall`` until it completes or the
group's timeout passes, so a rank that died or diverged raises an error naming this rank instead of
hanging.  MPI moves the bytes of contiguous NumPy views of the tensors (copies for other layouts or
devices, written back on completion); reductions use MPI's typed reductions, in float32 for float16 and
bfloat16 (which MPI has no type for) and MPI's logical ones for bool.
"""

from __future__ import annotations

import os
import time
from typing import Any

import ml_dtypes
import numpy as np

from ..distributed.reduce_op import RedOpType, as_kind
from ..distributed.work import DistBackendError, Work
from ._host import HostBuffer, byte_view
from .base import Backend

__all__ = ["MPIBackend", "abort_job", "launch_info_from_env"]

# (rank variable, size variable) of the MPI launchers: MPICH/Intel MPI (hydra), Open MPI, MVAPICH, PMIx.
_LAUNCH_ENV = (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
               ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"), ("PMIX_RANK", "PMIX_SIZE"))

_HALF = frozenset({np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)})  # reduced in float32
_BROKEN = False  # set once an operation timed out: MPI_Finalize could then wait forever, so exit skips it


def launch_info_from_env(environ: Any = None) -> tuple[int, int] | None:
    """``(rank, world_size)`` set by an MPI launcher (mpiexec/mpirun/srun), else None."""
    env = os.environ if environ is None else environ
    for rank_var, size_var in _LAUNCH_ENV:
        if rank_var in env and size_var in env:
            return int(env[rank_var]), int(env[size_var])
    return None


def _mpi() -> Any:
    from mpi4py import MPI  # initializes MPI on first import: only when a process group is made

    return MPI


def abort_job(code: int) -> None:
    """End this process with ``code`` at once, and with it the whole MPI job.

    With MPI initialized in a job of several ranks this is ``MPI_Abort``, the one call every MPI process
    manager answers by stopping the other ranks (a rank that merely exits may leave them running until
    their own timeouts); otherwise the process simply exits, skipping MPI_Finalize and Python's shutdown.
    """
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    MPI = sys.modules.get("mpi4py.MPI")  # never initialize MPI just to abort it
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
        # The process manager forwards our output through pipes and stops reading them when the abort
        # arrives: give it a moment to forward the traceback just written.
        time.sleep(0.5)
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def _exit_if_broken() -> None:
    if _BROKEN:
        abort_job(1)


def _install_excepthook() -> None:
    """An uncaught exception ends the whole job (as ``python -m mpi4py`` does), never a hang.

    Otherwise the failed rank would sit in MPI_Finalize and the others in their next collective (until
    the timeout): after the usual traceback, exit at once with status 1, which makes the MPI process
    manager stop the other ranks (``MPI_Abort``).
    """
    import sys

    previous = sys.excepthook
    if getattr(previous, "_torchplug_mpi", False):
        return

    def hook(exc_type: Any, exc: Any, tb: Any) -> None:
        previous(exc_type, exc, tb)
        world = _mpi().COMM_WORLD
        if world.Get_size() > 1:
            sys.stderr.write(f"[Rank {world.Get_rank()}] uncaught {exc_type.__name__}: ending the job\n")
            abort_job(1)

    hook._torchplug_mpi = True  # type: ignore[attr-defined]
    sys.excepthook = hook


def _reduction(array: np.ndarray, kind: RedOpType, what: str) -> tuple[np.ndarray, Any]:
    """The array MPI reduces (float32 for float16/bfloat16) and the MPI op for ``kind`` on its dtype."""
    MPI = _mpi()
    dtype = array.dtype
    if dtype == np.bool_:
        if kind in (RedOpType.AVG, RedOpType.PREMUL_SUM):
            raise RuntimeError(f"{what}: Cannot use ReduceOp.{kind.name} with bool dtype")
        return array, {RedOpType.SUM: MPI.LOR, RedOpType.MAX: MPI.LOR, RedOpType.BOR: MPI.LOR,
                       RedOpType.PRODUCT: MPI.LAND, RedOpType.MIN: MPI.LAND, RedOpType.BAND: MPI.LAND,
                       RedOpType.BXOR: MPI.LXOR}[kind]
    if kind in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind not in "iu":
        raise RuntimeError(f"Cannot use ReduceOp.{kind.name} with non-integral dtype")
    if kind in (RedOpType.MIN, RedOpType.MAX) and dtype.kind == "c":
        raise RuntimeError(f"Cannot use ReduceOp.{kind.name} with complex dtype")
    if kind in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        raise ValueError(f"{what}: ReduceOp.{kind.name} is not supported by the mpi backend; use SUM, AVG, "
                         "PRODUCT, MIN, MAX, BAND, BOR or BXOR")
    if dtype in _HALF:
        array = array.astype(np.float32)  # MPI has no 16-bit float type
    op = {RedOpType.SUM: MPI.SUM, RedOpType.AVG: MPI.SUM, RedOpType.PRODUCT: MPI.PROD, RedOpType.MIN: MPI.MIN,
          RedOpType.MAX: MPI.MAX, RedOpType.BAND: MPI.BAND, RedOpType.BOR: MPI.BOR, RedOpType.BXOR: MPI.BXOR}[kind]
    return array, op


def _finish_reduction(target: np.ndarray, reduced: np.ndarray, kind: RedOpType, size: int) -> None:
    """AVG's division (truncating for integers, as NCCL's), and the cast back from float32."""
    if kind == RedOpType.AVG:
        if reduced.dtype.kind in "iu":
            np.copyto(reduced, np.sign(reduced) * (np.abs(reduced) // size))
        else:
            np.divide(reduced, size, out=reduced)
    if reduced is not target:
        np.copyto(target, reduced, casting="unsafe")


class MPIWork(Work):
    """Pending MPI requests; completing them runs ``finish`` (write-backs, AVG's division)."""

    def __init__(self, backend: MPIBackend, requests: list[Any], what: str, finish: Any = None,
                 result: list[Any] | None = None, status: Any = None) -> None:
        super().__init__()
        self._backend = backend
        self._requests = requests
        self._what = what
        self._finish = finish
        self._result = result or []
        self._status = status
        self._statuses = None if status is None else [status]
        self._done = False
        self._deadline = time.monotonic() + backend.timeout

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()

    def is_completed(self) -> bool:
        if not self._done and self._exception is None and _mpi().Request.Testall(self._requests, self._statuses):
            self._complete()
        return self._done or self._exception is not None

    def wait(self, timeout: Any = None) -> bool:
        if self._exception is not None:
            raise self._exception
        if not self._done:
            if timeout is None:
                deadline, limit = self._deadline, self._backend.timeout
            else:
                limit = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
                deadline = time.monotonic() + limit
            if not _progress(self._requests, deadline, self._statuses):
                global _BROKEN
                _BROKEN = True
                b = self._backend
                self._exception = DistBackendError(
                    f"[Rank {b.global_rank}] {self._what} timed out after {limit:g} s waiting for the other "
                    f"{b.world_size - 1} rank(s) of its group of {b.world_size}: a rank that failed, exited or "
                    "called a different collective blocks it. The process group cannot be used after this; "
                    "set a longer init_process_group(timeout=...) if the ranks are merely slow.")
                raise self._exception
            self._complete()
        return True

    def source_rank(self) -> int:
        """The rank a ``recv``/``irecv`` from any source received from (in the group)."""
        self.wait()
        if self._status is None:
            raise RuntimeError("source_rank() is only defined for recv/irecv work")
        return self._status.Get_source()


def _progress(requests: list[Any], deadline: float, statuses: list[Any] | None = None) -> bool:
    """Drive MPI until ``requests`` complete (True) or ``deadline`` passes (False).

    MPICH progresses only inside MPI calls, so this polls without sleeping (as a blocking call
    would); after a while it yields the CPU between polls, for ranks that outnumber the cores.
    """
    testall = _mpi().Request.Testall
    spins = 0
    while not testall(requests, statuses):
        spins += 1
        if spins & 63 == 0:
            if time.monotonic() > deadline:
                return False
            if spins > 8192:
                os.sched_yield()
    return True


class MPIBackend(Backend):
    """Process groups as MPI communicators (``MPI.COMM_WORLD`` duplicated for the default group)."""

    devices = ("cpu",)

    @classmethod
    def is_available(cls) -> bool:
        try:
            import mpi4py  # noqa: F401  (mpi4py.MPI would initialize MPI: only the package is checked)
        except ImportError:
            return False
        return True

    @classmethod
    def launch_info(cls) -> tuple[int, int] | None:
        return launch_info_from_env()

    def __init__(self, rank: int, world_size: int, timeout: float, *, bootstrap: Any = None, comm: Any = None) -> None:
        super().__init__(rank, world_size, timeout)
        MPI = _mpi()
        if comm is None:
            world = MPI.COMM_WORLD
            if (world.Get_rank(), world.Get_size()) != (rank, world_size):
                raise ValueError(
                    f"init_process_group(rank={rank}, world_size={world_size}) does not match the MPI launch "
                    f"(rank {world.Get_rank()} of {world.Get_size()}): start the {world_size} processes with "
                    f"`torchplugrun --nproc-per-node {world_size} script.py` or `mpiexec -n {world_size} python "
                    "script.py`, and leave rank/world_size unset (or equal to the launcher's)")
            comm = world.Dup()
            import atexit

            atexit.register(_exit_if_broken)  # runs before mpi4py's MPI_Finalize (registered earlier)
            _install_excepthook()
        self.comm = comm
        self.global_rank = MPI.COMM_WORLD.Get_rank()

    # -- groups ---------------------------------------------------------------------------------------------
    def new_group(self, ranks: list[int], bootstrap: Any = None) -> MPIBackend | None:
        MPI = _mpi()
        group = self.comm.Get_group().Incl(list(ranks))
        comm = self.comm.Create_group(group, tag=7) if self.rank in ranks else MPI.COMM_NULL
        group.Free()
        if comm == MPI.COMM_NULL:
            return None
        return MPIBackend(comm.Get_rank(), comm.Get_size(), self.timeout, comm=comm)

    def shutdown(self) -> None:
        if not _BROKEN and self.comm is not None:
            self.comm.Free()
        self.comm = None

    # -- collectives ----------------------------------------------------------------------------------------
    def _work(self, requests: list[Any], what: str, finish: Any = None, result: list[Any] | None = None,
              status: Any = None) -> MPIWork:
        return MPIWork(self, requests, what, finish, result, status)

    def allreduce(self, tensor: Any, op: Any) -> Work:
        kind = as_kind(op)
        buf = HostBuffer(tensor)
        data, mpi_op = _reduction(buf.array, kind, "all_reduce")
        request = self.comm.Iallreduce(_mpi().IN_PLACE, data, mpi_op)

        def finish() -> None:
            _finish_reduction(buf.array, data, kind, self.world_size)
            buf.commit()

        return self._work([request], "all_reduce", finish, [tensor])

    def broadcast(self, tensor: Any, root: int) -> Work:
        buf = HostBuffer(tensor)
        request = self.comm.Ibcast(byte_view(buf.array), root=root)
        return self._work([request], "broadcast", buf.commit, [tensor])

    def reduce(self, tensor: Any, root: int, op: Any) -> Work:
        kind = as_kind(op)
        buf = HostBuffer(tensor)
        data, mpi_op = _reduction(buf.array, kind, "reduce")
        MPI = _mpi()
        if self.rank == root:
            request = self.comm.Ireduce(MPI.IN_PLACE, data, mpi_op, root=root)
        else:
            request = self.comm.Ireduce(data, None, mpi_op, root=root)

        def finish() -> None:
            if self.rank == root:
                _finish_reduction(buf.array, data, kind, self.world_size)
                buf.commit()

        return self._work([request], "reduce", finish, [tensor])

    def allgather(self, outputs: list[Any], tensor: Any) -> Work:
        send = byte_view(HostBuffer(tensor).array)
        recv = np.empty(send.size * self.world_size, np.uint8)
        request = self.comm.Iallgather(send, recv)

        def finish() -> None:
            _unpack(recv, outputs)

        return self._work([request], "all_gather", finish, outputs)

    def allgather_into_tensor(self, output: Any, tensor: Any) -> Work:
        out = HostBuffer(output)
        request = self.comm.Iallgather(byte_view(HostBuffer(tensor).array), byte_view(out.array))
        return self._work([request], "all_gather_into_tensor", out.commit, [output])

    def reduce_scatter(self, output: Any, inputs: list[Any], op: Any) -> Work:
        flat = np.concatenate([HostBuffer(t).array.reshape(-1) for t in inputs])
        return self._reduce_scatter(output, flat, op, "reduce_scatter")

    def reduce_scatter_tensor(self, output: Any, input: Any, op: Any) -> Work:
        return self._reduce_scatter(output, HostBuffer(input).array.reshape(-1), op, "reduce_scatter_tensor")

    def _reduce_scatter(self, output: Any, flat: np.ndarray, op: Any, what: str) -> Work:
        kind = as_kind(op)
        out = HostBuffer(output)
        send, mpi_op = _reduction(flat, kind, what)
        recv, _ = _reduction(out.array, kind, what)
        request = self.comm.Ireduce_scatter_block(send, recv.reshape(-1), mpi_op)

        def finish() -> None:
            _finish_reduction(out.array, recv, kind, self.world_size)
            out.commit()

        return self._work([request], what, finish, [output])

    def gather(self, tensor: Any, outputs: list[Any] | None, root: int) -> Work:
        send = byte_view(HostBuffer(tensor).array)
        recv = np.empty(send.size * self.world_size, np.uint8) if self.rank == root else None
        request = self.comm.Igather(send, recv, root=root)

        def finish() -> None:
            if recv is not None and outputs is not None:
                _unpack(recv, outputs)

        return self._work([request], "gather", finish, outputs or [])

    def scatter(self, tensor: Any, inputs: list[Any] | None, root: int) -> Work:
        out = HostBuffer(tensor)
        send = None
        if self.rank == root and inputs is not None:
            send = np.concatenate([byte_view(HostBuffer(t).array) for t in inputs])
        request = self.comm.Iscatter(send, byte_view(out.array), root=root)
        return self._work([request], "scatter", out.commit, [tensor])

    def alltoall(self, outputs: list[Any], inputs: list[Any]) -> Work:
        send_parts = [byte_view(HostBuffer(t).array) for t in inputs]
        send = np.concatenate(send_parts) if send_parts else np.empty(0, np.uint8)
        send_counts = [p.size for p in send_parts]
        recv_counts = [_nbytes(t) for t in outputs]
        recv = np.empty(sum(recv_counts), np.uint8)
        MPI = _mpi()
        request = self.comm.Ialltoallv([send, (send_counts, _displs(send_counts)), MPI.BYTE],
                                       [recv, (recv_counts, _displs(recv_counts)), MPI.BYTE])

        def finish() -> None:
            _unpack(recv, outputs)

        return self._work([request], "all_to_all", finish, outputs)

    def alltoall_single(self, output: Any, input: Any, output_splits: list[int], input_splits: list[int]) -> Work:
        out = HostBuffer(output)
        send = HostBuffer(input).array
        send_row = send[0].nbytes if send.ndim and send.shape[0] else 0
        recv_row = out.array[0].nbytes if out.array.ndim and out.array.shape[0] else 0
        send_counts = [s * send_row for s in input_splits]
        recv_counts = [s * recv_row for s in output_splits]
        MPI = _mpi()
        request = self.comm.Ialltoallv([byte_view(send), (send_counts, _displs(send_counts)), MPI.BYTE],
                                       [byte_view(out.array), (recv_counts, _displs(recv_counts)), MPI.BYTE])
        return self._work([request], "all_to_all_single", out.commit, [output])

    def send(self, tensor: Any, dst: int, tag: int) -> Work:
        data = HostBuffer(tensor).array
        request = self.comm.Isend(byte_view(data), dest=dst, tag=tag)
        return self._work([request], f"send to rank {dst}", None, [tensor])

    def recv(self, tensor: Any, src: int | None, tag: int) -> Work:
        MPI = _mpi()
        out = HostBuffer(tensor)
        status = MPI.Status()
        source = MPI.ANY_SOURCE if src is None else src
        request = self.comm.Irecv(byte_view(out.array), source=source, tag=tag)
        return self._work([request], "recv" if src is None else f"recv from rank {src}", out.commit, [tensor], status)

    def barrier(self) -> Work:
        return self._work([self.comm.Ibarrier()], "barrier")

    # -- bytes, for the object collectives -----------------------------------------------------------------
    def allgather_bytes(self, data: bytes) -> list[bytes]:
        sizes = np.zeros(self.world_size, np.int64)
        self._work([self.comm.Iallgather(np.array([len(data)], np.int64), sizes)], "all_gather_object").wait()
        counts = [int(s) for s in sizes]
        recv = np.empty(sum(counts), np.uint8)
        send = np.frombuffer(data, np.uint8)
        MPI = _mpi()
        displs = _displs(counts)
        self._work([self.comm.Iallgatherv(send, [recv, (counts, displs), MPI.BYTE])], "all_gather_object").wait()
        return [recv[d:d + c].tobytes() for d, c in zip(displs, counts)]

    def broadcast_bytes(self, data: bytes | None, root: int) -> bytes:
        size = np.array([len(data) if self.rank == root and data is not None else 0], np.int64)
        self._work([self.comm.Ibcast(size, root=root)], "broadcast_object_list").wait()
        if self.rank == root and data is not None:
            buf = np.frombuffer(data, np.uint8).copy()
        else:
            buf = np.empty(int(size[0]), np.uint8)
        self._work([self.comm.Ibcast(buf, root=root)], "broadcast_object_list").wait()
        return buf.tobytes()


def _nbytes(tensor: Any) -> int:
    return tensor.numel() * tensor.element_size()


def _displs(counts: list[int]) -> list[int]:
    out, total = [], 0
    for c in counts:
        out.append(total)
        total += c
    return out


def _unpack(recv: np.ndarray, outputs: list[Any]) -> None:
    """Copy consecutive byte ranges of ``recv`` into the tensors of ``outputs``."""
    offset = 0
    for t in outputs:
        buf = HostBuffer(t)
        view = byte_view(buf.array)
        view[...] = recv[offset:offset + view.size]
        offset += view.size
        buf.commit()
