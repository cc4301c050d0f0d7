"""The ``nccl`` process-group backend: collectives of cuda tensors through CuPy's NCCL bindings.

The communicator is made at ``init_process_group``/``new_group`` on this rank's GPU (``LOCAL_RANK`` modulo
the GPU count, as ``torch.cuda.set_device(local_rank)`` would pick), from a unique id that rank 0 draws
and the CPU backend (MPI) broadcasts.  Operations are queued on CuPy's current stream and complete
asynchronously; ``Work.wait`` polls an event recorded after them, raising after the group's timeout.
NCCL has no bitwise reductions; bool tensors reduce as uint8 (SUM/MAX: any, PRODUCT/MIN: all).
Tensors are used in place through ``__cuda_array_interface__`` (non-contiguous ones through a copy).
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..distributed.reduce_op import RedOpType, as_kind
from ..distributed.work import DistBackendError, Work
from .base import Backend

__all__ = ["NCCLBackend"]


def _cupy() -> Any:
    import cupy

    return cupy


def _nccl() -> Any:
    from cupy.cuda import nccl

    return nccl


_DTYPES = {"float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64", "float16": "NCCL_FLOAT16", "int64": "NCCL_INT64",
           "int32": "NCCL_INT32", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "bool": "NCCL_UINT8",
           "bfloat16": "NCCL_BFLOAT16"}


class _Buffer:
    """A cuda tensor as a contiguous CuPy array sharing its memory (or a copy, written back by commit)."""

    __slots__ = ("array", "target")

    def __init__(self, tensor: Any) -> None:
        cp = _cupy()
        if tensor.device.type != "cuda":
            raise RuntimeError(f"No backend type associated with device type {tensor.device.type}: the nccl backend "
                               "takes cuda tensors only; use init_process_group('cpu:mpi,cuda:nccl') for both")
        if tensor.is_conj() or tensor.is_neg():  # its memory holds the unconjugated values
            raise RuntimeError("the nccl backend takes no lazily conjugated/negated views: pass "
                               "tensor.resolve_conj() (or resolve_neg()) and copy the result back")
        view = cp.asarray(tensor.detach())
        self.target = view
        self.array = view if view.flags.c_contiguous else cp.ascontiguousarray(view)

    def commit(self) -> None:
        if self.array is not self.target:
            self.target[...] = self.array


class NCCLWork(Work):
    """Operations queued on a stream; done when the event recorded after them has fired."""

    def __init__(self, backend: NCCLBackend, what: str, finish: Any = None, result: list[Any] | None = None) -> None:
        super().__init__()
        cp = _cupy()
        self._event = cp.cuda.Event(block=False, disable_timing=True)
        self._event.record(backend.stream)
        self._backend = backend
        self._what = what
        self._finish = finish
        self._result = result or []
        self._done = False
        self._deadline = time.monotonic() + backend.timeout

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()

    def is_completed(self) -> bool:
        if not self._done and self._exception is None and self._event.done:
            self._complete()
        return self._done or self._exception is not None

    def wait(self, timeout: Any = None) -> bool:
        if self._exception is not None:
            raise self._exception
        limit = self._backend.timeout if timeout is None else (
            timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout))
        deadline = self._deadline if timeout is None else time.monotonic() + limit
        while not self._event.done:
            if time.monotonic() > deadline:
                self._backend.comm.abort()
                b = self._backend
                self._exception = DistBackendError(
                    f"[Rank {b.global_rank}] {self._what} (nccl) timed out after {limit:g} s waiting for the other "
                    f"{b.world_size - 1} rank(s) of its group; the communicator was aborted")
                raise self._exception
            time.sleep(0.0001)
        if not self._done:
            self._complete()
        return True


class NCCLBackend(Backend):
    """Process groups as NCCL communicators (one per group), bootstrapped through the CPU backend."""

    devices = ("cuda",)

    @classmethod
    def is_available(cls) -> bool:
        try:
            cp = _cupy()
            _nccl().get_version()
            return cp.cuda.runtime.getDeviceCount() > 0
        except Exception:  # no CuPy, no NCCL in it, or no GPU: the backend is installed but cannot run
            return False

    @classmethod
    def unavailable_reason(cls) -> str:
        try:
            cp = _cupy()
        except ImportError:
            return "CuPy is not installed: pip install 'torchplug-distributed[nccl]'"
        try:
            _nccl().get_version()
        except Exception as exc:
            return f"CuPy has no NCCL ({exc})"
        return f"{cp.cuda.runtime.getDeviceCount()} CUDA devices"

    def __init__(self, rank: int, world_size: int, timeout: float, *, bootstrap: Any = None,
                 device: int | None = None) -> None:
        super().__init__(rank, world_size, timeout)
        if bootstrap is None:
            raise RuntimeError("the nccl backend needs the CPU backend to share its unique id")
        cp, nccl = _cupy(), _nccl()
        if device is None:
            device = int(os.environ.get("LOCAL_RANK", rank)) % cp.cuda.runtime.getDeviceCount()
        self.device = device
        uid = nccl.get_unique_id() if rank == 0 else None
        import pickle

        uid = pickle.loads(bootstrap.broadcast_bytes(pickle.dumps(uid) if rank == 0 else None, 0))
        with cp.cuda.Device(device):
            self.comm = nccl.NcclCommunicator(world_size, uid, rank)
            self.stream = cp.cuda.get_current_stream()
        self.global_rank = getattr(bootstrap, "global_rank", rank)
        self.bootstrap = bootstrap

    def new_group(self, ranks: list[int], bootstrap: Any = None) -> NCCLBackend | None:
        if bootstrap is None:  # not a member: the CPU backend gave this rank no subgroup
            return None
        return NCCLBackend(bootstrap.rank, bootstrap.world_size, self.timeout, bootstrap=bootstrap, device=self.device)

    def shutdown(self) -> None:
        if self.comm is not None:
            self.comm.destroy()
        self.comm = None

    # -- helpers ----------------------------------------------------------------------------------------------
    def _dtype(self, array: Any) -> Any:
        name = _DTYPES.get(array.dtype.name)
        if name is None or not hasattr(_nccl(), name):
            raise RuntimeError(f"the nccl backend does not support dtype {array.dtype.name}")
        return getattr(_nccl(), name)

    def _op(self, kind: RedOpType, array: Any) -> Any:
        nccl = _nccl()
        if kind in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM):
            raise RuntimeError(f"Cannot use ReduceOp.{kind.name} with NCCL")
        if array.dtype.name == "bool":
            if kind == RedOpType.AVG:
                raise RuntimeError("Cannot use ReduceOp.AVG with bool dtype")
            return nccl.NCCL_MAX if kind in (RedOpType.SUM, RedOpType.MAX) else nccl.NCCL_MIN
        return {RedOpType.SUM: nccl.NCCL_SUM, RedOpType.PRODUCT: nccl.NCCL_PROD, RedOpType.MIN: nccl.NCCL_MIN,
                RedOpType.MAX: nccl.NCCL_MAX, RedOpType.AVG: getattr(nccl, "NCCL_AVG", nccl.NCCL_SUM)}[kind]

    def _after(self, kind: RedOpType, buf: _Buffer) -> Any:
        """What completes a reduction: AVG's division where CuPy lacks NCCL_AVG, then the write-back."""
        if kind != RedOpType.AVG or hasattr(_nccl(), "NCCL_AVG"):
            return buf.commit

        def finish() -> None:
            a = buf.array
            if a.dtype.kind in "iu":
                a[...] = _cupy().sign(a) * (abs(a) // self.world_size)
            else:
                a /= self.world_size
            buf.commit()

        return finish

    def _s(self) -> int:
        return self.stream.ptr

    def _work(self, what: str, finish: Any = None, result: list[Any] | None = None) -> NCCLWork:
        return NCCLWork(self, what, finish, result)

    # -- collectives --------------------------------------------------------------------------------------------
    def allreduce(self, tensor: Any, op: Any) -> Work:
        buf = _Buffer(tensor)
        a = buf.array
        kind = as_kind(op)
        self.comm.allReduce(a.data.ptr, a.data.ptr, a.size, self._dtype(a), self._op(kind, a), self._s())
        return self._work("all_reduce", self._after(kind, buf), [tensor])

    def broadcast(self, tensor: Any, root: int) -> Work:
        buf = _Buffer(tensor)
        a = buf.array
        self.comm.bcast(a.data.ptr, a.nbytes, _nccl().NCCL_UINT8, root, self._s())
        return self._work("broadcast", buf.commit, [tensor])

    def reduce(self, tensor: Any, root: int, op: Any) -> Work:
        buf = _Buffer(tensor)
        a = buf.array
        kind = as_kind(op)
        self.comm.reduce(a.data.ptr, a.data.ptr, a.size, self._dtype(a), self._op(kind, a), root, self._s())
        return self._work("reduce", self._after(kind, buf) if self.rank == root else None, [tensor])

    def allgather_into_tensor(self, output: Any, tensor: Any) -> Work:
        out, inp = _Buffer(output), _Buffer(tensor)
        self.comm.allGather(inp.array.data.ptr, out.array.data.ptr, inp.array.nbytes, _nccl().NCCL_UINT8, self._s())
        return self._work("all_gather_into_tensor", out.commit, [output])

    def allgather(self, outputs: list[Any], tensor: Any) -> Work:
        cp = _cupy()
        inp = _Buffer(tensor).array
        flat = cp.empty(inp.nbytes * self.world_size, cp.uint8)
        self.comm.allGather(inp.data.ptr, flat.data.ptr, inp.nbytes, _nccl().NCCL_UINT8, self._s())

        def finish() -> None:
            for i, t in enumerate(outputs):
                b = _Buffer(t)
                b.array.reshape(-1).view(cp.uint8)[...] = flat[i * inp.nbytes:(i + 1) * inp.nbytes]
                b.commit()

        return self._work("all_gather", finish, outputs)

    def reduce_scatter_tensor(self, output: Any, input: Any, op: Any) -> Work:
        out, inp = _Buffer(output), _Buffer(input)
        a = out.array
        kind = as_kind(op)
        self.comm.reduceScatter(inp.array.data.ptr, a.data.ptr, a.size, self._dtype(a), self._op(kind, a), self._s())
        return self._work("reduce_scatter_tensor", self._after(kind, out), [output])

    def reduce_scatter(self, output: Any, inputs: list[Any], op: Any) -> Work:
        cp = _cupy()
        flat = cp.concatenate([_Buffer(t).array.reshape(-1) for t in inputs])
        out = _Buffer(output)
        a = out.array
        kind = as_kind(op)
        self.comm.reduceScatter(flat.data.ptr, a.data.ptr, a.size, self._dtype(a), self._op(kind, a), self._s())
        return self._work("reduce_scatter", self._after(kind, out), [output])

    def _p2p(self, pairs: list[tuple[str, Any, int]]) -> None:
        nccl = _nccl()
        nccl.groupStart()
        for kind, a, peer in pairs:
            if kind == "send":
                self.comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, peer, self._s())
            else:
                self.comm.recv(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, peer, self._s())
        nccl.groupEnd()

    def send(self, tensor: Any, dst: int, tag: int) -> Work:
        self._p2p([("send", _Buffer(tensor).array, dst)])
        return self._work(f"send to rank {dst}", None, [tensor])

    def recv(self, tensor: Any, src: int | None, tag: int) -> Work:
        if src is None:
            raise RuntimeError("the nccl backend cannot receive from any source: pass src=")
        buf = _Buffer(tensor)
        self._p2p([("recv", buf.array, src)])
        return self._work(f"recv from rank {src}", buf.commit, [tensor])

    def alltoall_single(self, output: Any, input: Any, output_splits: list[int], input_splits: list[int]) -> Work:
        out, inp = _Buffer(output), _Buffer(input)
        o, i = out.array.reshape(out.array.shape[0] if out.array.ndim else 1, -1), inp.array.reshape(
            inp.array.shape[0] if inp.array.ndim else 1, -1)
        pairs, so, si = [], 0, 0
        for peer in range(self.world_size):
            pairs.append(("send", i[si:si + input_splits[peer]], peer))
            pairs.append(("recv", o[so:so + output_splits[peer]], peer))
            si += input_splits[peer]
            so += output_splits[peer]
        self._p2p(pairs)
        return self._work("all_to_all_single", out.commit, [output])

    def alltoall(self, outputs: list[Any], inputs: list[Any]) -> Work:
        outs = [_Buffer(t) for t in outputs]
        self._p2p([p for peer in range(self.world_size)
                   for p in (("send", _Buffer(inputs[peer]).array, peer), ("recv", outs[peer].array, peer))])

        def finish() -> None:
            for b in outs:
                b.commit()

        return self._work("all_to_all", finish, outputs)

    def gather(self, tensor: Any, outputs: list[Any] | None, root: int) -> Work:
        inp = _Buffer(tensor).array
        pairs = [("send", inp, root)] if self.rank != root else []
        outs = [_Buffer(t) for t in outputs] if outputs is not None else []
        if self.rank == root:
            outs[root].array[...] = inp
            pairs = [("recv", outs[p].array, p) for p in range(self.world_size) if p != root]
        self._p2p(pairs)

        def finish() -> None:
            for b in outs:
                b.commit()

        return self._work("gather", finish, outputs or [])

    def scatter(self, tensor: Any, inputs: list[Any] | None, root: int) -> Work:
        out = _Buffer(tensor)
        if self.rank == root and inputs is not None:
            out.array[...] = _Buffer(inputs[root]).array
            pairs = [("send", _Buffer(inputs[p]).array, p) for p in range(self.world_size) if p != root]
        else:
            pairs = [("recv", out.array, root)]
        self._p2p(pairs)
        return self._work("scatter", out.commit, [tensor])

    def barrier(self) -> Work:
        cp = _cupy()
        with cp.cuda.Device(self.device):
            one = cp.ones(1, cp.float32)
            self.comm.allReduce(one.data.ptr, one.data.ptr, 1, _nccl().NCCL_FLOAT32, _nccl().NCCL_SUM, self._s())
        return self._work("barrier")

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        return self.bootstrap.allgather_bytes(data)

    def broadcast_bytes(self, data: bytes | None, root: int) -> bytes:
        return self.bootstrap.broadcast_bytes(data, root)
