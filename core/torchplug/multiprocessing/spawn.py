"""``spawn`` and ``start_processes`` (PyTorch's ``torch.multiprocessing.spawn``): run ``fn(i, *args)`` in
``nprocs`` processes; the first failure ends the others and is raised in the parent with the child's
traceback (``ProcessRaisedException``) or its exit code / signal (``ProcessExitedException``)."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]

log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` (its ``i``) and ``error_pid``."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process's function raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _wrap(fn: Callable[..., Any], i: int, args: tuple, error_file: str) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # SIGINT: stopped by the parent
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(join=False)`` started; ``join()`` waits and raises the first failure."""

    def __init__(self, processes: list[Any], error_files: list[str]) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the processes. True when all have exited successfully, False
        while some still run; the first failure terminates the rest (after ``grace_period``) and is raised."""
        if len(self.sentinels) == 0:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL", process.pid)
                process.kill()
            process.join()
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code {exitcode:d}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(self.error_files[error_index])
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n" + original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """The pre-1.4 name of :class:`ProcessContext`."""

    def __init__(self, processes: list[Any], error_files: list[str]) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """Start ``nprocs`` processes running ``fn(i, *args)`` with ``start_method``; with ``join`` wait for them
    (raising the first failure), else return their :class:`ProcessContext`."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle", delete=False)  # noqa: SIM115
        tf.close()
        os.unlink(tf.name)  # the child writes it only when fn raises
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        error_files.append(tf.name)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """Spawn ``nprocs`` processes that run ``fn(i, *args)`` (``fn`` must be importable: a module-level
    function). Always uses the ``spawn`` start method; see :func:`start_processes` for others."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different "
                      "start_method use:\n\t\t torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
