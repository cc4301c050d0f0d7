"""Host tensors in shared memory: ``Tensor.share_memory_()`` moves a cpu storage's buffer into a POSIX
shared-memory segment (``shm_open``, see :class:`_Mapping`), and ``torchplug.multiprocessing`` sends such tensors
between processes as the segment's name, so every process maps the same bytes (PyTorch's ``file_system``-like
strategy). Fork-started children inherit the mapping itself.

The storage's root buffer is replaced in place; the tensor moved, the base it is a view of, and the tensors
made from the storage later use the segment. Another view taken *before* the move keeps the old private
buffer (PyTorch's views follow the storage). Lifetime: the creating process unlinks a segment's name when its storage dies if it was never sent,
and at its exit if it was (so a receiver can still map it after the sender dropped the tensor, but not after
the sender exited: as with PyTorch's ``file_descriptor`` strategy, a sender must outlive the hand-over).
Receivers keep their mapping as long as they use it. Storages of other devices are only marked shared
(``is_shared()``), as PyTorch does for cuda.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np

__all__ = ["share_storage", "is_shared", "segment_of", "attach", "adopt", "mark_sent", "SharedSegment"]


class SharedSegment:
    """A storage's shared-memory segment: its name, the segment object and whether this process created it."""

    __slots__ = ("shm", "owner", "base", "sent")

    def __init__(self, shm: _Mapping, owner: bool) -> None:
        self.shm = shm
        self.owner = os.getpid() if owner else None  # a fork child inherits the record: only this pid unlinks
        self.sent = False
        self.base = np.frombuffer(shm.buf, dtype=np.uint8).__array_interface__["data"][0]

    @property
    def name(self) -> str:
        return self.shm.name


_SEGMENTS: weakref.WeakKeyDictionary[Any, SharedSegment] = weakref.WeakKeyDictionary()  # storage -> segment
_BY_NAME: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()  # segment name -> storage
_MARKED: weakref.WeakSet[Any] = weakref.WeakSet()  # non-host storages marked shared
_UNCLOSED: list[_Mapping] = []  # segments whose buffers were still exported when released


def is_shared(storage: Any) -> bool:
    """Whether ``storage`` lives in shared memory (or, off the host, was marked shared)."""
    return storage in _SEGMENTS or storage in _MARKED


def segment_of(storage: Any) -> SharedSegment | None:
    return _SEGMENTS.get(storage)


_SENT: dict[str, _Mapping] = {}  # segments this process created and sent: unlinked at exit


def mark_sent(segment: SharedSegment) -> None:
    """The segment's name went to another process: keep it until this process exits."""
    if not segment.sent and segment.owner == os.getpid():
        segment.sent = True
        _SENT[segment.name] = segment.shm
        _ExitHook.install()


def _unlink_sent() -> None:
    for name, segment in list(_SENT.items()):
        try:
            segment.unlink()
        except FileNotFoundError:
            pass
        del _SENT[name]


class _ExitHook:
    """Registers :func:`_unlink_sent` with multiprocessing's exit function, which runs in the main process
    (atexit) and in every child, forked ones included (they skip atexit, and start with an empty registry:
    ``register_after_fork`` registers again there before the child's target runs). Priority -10: after the
    queues' feeder threads (-5) have pickled, and so sent, what was put last."""

    _installed: _ExitHook | None = None

    @classmethod
    def install(cls) -> None:
        # On the first segment sent, not at import: multiprocessing's util module costs ~15 ms to import, and a
        # process forked before this has sent nothing (it installs its own hook when it sends).
        if cls._installed is None:
            cls._installed = cls()

    def __init__(self) -> None:
        from multiprocessing import util as mp_util

        self.register()
        mp_util.register_after_fork(self, _ExitHook.register)

    def register(self) -> None:
        from multiprocessing import util as mp_util

        mp_util.Finalize(None, _unlink_sent, exitpriority=-10)


def _release(segment: SharedSegment) -> None:
    if segment.sent:
        return  # unlinked at exit (see mark_sent); the mapping stays with the SharedMemory object until then
    if segment.owner == os.getpid():
        try:
            segment.shm.unlink()
        except FileNotFoundError:
            pass
    try:
        segment.shm.close()
    except BufferError:  # a NumPy view of the buffer is still alive: close it later
        _UNCLOSED.append(segment.shm)


def _retry_closes() -> None:
    for shm in list(_UNCLOSED):
        try:
            shm.close()
        except BufferError:
            continue
        _UNCLOSED.remove(shm)


def _register(storage: Any, segment: SharedSegment) -> None:
    _SEGMENTS[storage] = segment
    _BY_NAME[segment.name] = storage
    weakref.finalize(storage, _release, segment)


def share_storage(tensor: Any) -> None:
    """Move ``tensor``'s storage into shared memory (no-op when it is there already).

    ``tensor`` may also be a storage itself (``UntypedStorage.share_memory_()``); then only tensors made from
    the storage afterwards see the segment."""
    storage = getattr(tensor, "_storage", tensor)
    if storage in _SEGMENTS or storage in _MARKED:
        return
    root = storage.data
    if storage.device.type != "cpu" or not isinstance(root, np.ndarray):
        _MARKED.add(storage)
        return
    if root.ndim != 1:
        if not root.flags.c_contiguous:
            raise RuntimeError(f"share_memory_(): cannot move a non-contiguous {root.ndim}-dimensional root buffer "
                               "into shared memory; share a contiguous copy instead (tensor.clone().share_memory_()).")
        root = root.reshape(-1)  # a flat view of the same bytes: offsets and strides stay valid
    _retry_closes()
    itemsize = root.dtype.itemsize
    shm = _Mapping(size=max(root.size * itemsize, 1))
    new_root = np.ndarray((root.size,), dtype=root.dtype, buffer=shm.buf)
    np.copyto(new_root, root)
    segment = SharedSegment(shm, owner=True)
    # the tensor's view (and its base's, when it is a view), re-expressed on the contiguous copy of the
    # (possibly strided) root
    root_addr, root_stride = root.__array_interface__["data"][0], root.strides[0] or itemsize
    storage.data = new_root
    moved = tensor if tensor is not storage else None
    while moved is not None and moved._storage is storage:
        data = moved._data
        offset = (data.__array_interface__["data"][0] - root_addr) // root_stride * itemsize
        strides = tuple(s // root_stride * itemsize for s in data.strides)
        moved._data = np.ndarray(data.shape, dtype=data.dtype, buffer=shm.buf, offset=offset, strides=strides)
        moved = moved._base
    _register(storage, segment)


def attach(name: str, numel: int, np_dtype: Any) -> tuple[Any, np.ndarray]:
    """``(storage or None, root buffer)`` of the segment ``name``: the storage this process already has for it
    (a tensor coming back), else a fresh mapping of the segment whose storage the caller registers with
    :func:`adopt`."""
    existing = _BY_NAME.get(name)
    if existing is not None:
        return existing, existing.data
    shm = _Mapping(name)
    root = np.ndarray((numel,), dtype=np_dtype, buffer=shm.buf)
    _PENDING[id(root)] = SharedSegment(shm, owner=False)
    return None, root


_PENDING: dict[int, SharedSegment] = {}


class _Mapping:
    """A POSIX shared-memory segment mapped into this process: created (``size`` given) or opened by name.

    Not ``multiprocessing.shared_memory.SharedMemory``: Python 3.11 registers every segment with the resource
    tracker, which a receiver shares with the creator (it would unlink the creator's segment) and which raises
    when a storage's finalizer unlinks a segment during a garbage collection inside another tracker call (a
    queue's feeder thread then drops the tensor it was pickling). Segments here are unlinked by their creating
    process only: when their storage dies unsent, or at exit once sent; a crashed creator leaks its names in
    /dev/shm, as PyTorch's file_system strategy does without its manager process.
    """

    def __init__(self, name: str | None = None, size: int = 0) -> None:
        import _posixshmem
        import mmap
        import secrets

        flags = os.O_RDWR
        if name is None:
            name, flags = f"/psm_tp_{secrets.token_hex(6)}", os.O_RDWR | os.O_CREAT | os.O_EXCL
        elif not name.startswith("/"):
            name = "/" + name
        self._name = name
        fd = _posixshmem.shm_open(name, flags, mode=0o600)
        try:
            if flags & os.O_CREAT:
                os.ftruncate(fd, size)
            self._mmap = mmap.mmap(fd, size or os.fstat(fd).st_size)
        finally:
            os.close(fd)
        self.buf = memoryview(self._mmap)

    @property
    def name(self) -> str:
        return self._name.lstrip("/")

    def unlink(self) -> None:
        import _posixshmem

        _posixshmem.shm_unlink(self._name)

    def close(self) -> None:
        self.buf.release()
        self._mmap.close()


def adopt(storage: Any, root: np.ndarray) -> None:
    """Register the storage built over a root returned by :func:`attach`."""
    segment = _PENDING.pop(id(root))
    _register(storage, segment)
