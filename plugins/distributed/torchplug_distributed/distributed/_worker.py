"""The per-rank entry of ``torchplugrun``: torchrun's environment, then the user's script or module.

MPI's process manager starts one of these per rank.  It sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_RANK`` and ``ROLE_RANK`` from the MPI launch, runs the target as
``__main__``, and on an uncaught exception writes the rank and the error to the launcher's error
directory and ends the job with ``MPI_Abort`` (never MPI_Finalize, which could wait for the ranks still in a
collective): the process manager then stops the other ranks and the launcher reports this one.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import sys
import traceback

__all__ = ["main", "set_rank_environment"]


def set_rank_environment(environ: dict[str, str]) -> tuple[int, int]:
    """Fill torchrun's per-rank variables from the MPI launcher's; returns (rank, local rank)."""
    from ..backends.mpi import launch_info_from_env

    info = launch_info_from_env(environ)
    rank, world_size = info if info is not None else (0, 1)
    nproc = int(environ.get("LOCAL_WORLD_SIZE") or environ.get("TORCHPLUG_NPROC_PER_NODE") or world_size)
    local_rank = int(environ.get("MPI_LOCALRANKID", environ.get("OMPI_COMM_WORLD_LOCAL_RANK", rank % nproc)))
    environ.update({"RANK": str(rank), "WORLD_SIZE": str(world_size), "LOCAL_RANK": str(local_rank),
                    "LOCAL_WORLD_SIZE": str(nproc), "GROUP_RANK": str(rank // nproc), "ROLE_RANK": str(rank),
                    "ROLE_WORLD_SIZE": str(world_size), "ROLE_NAME": "default"})
    return rank, local_rank


def _report(rank: int, local_rank: int, exc: BaseException, exit_code: int) -> None:
    text = "".join(traceback.format_exception(exc))
    sys.stderr.write(f"[rank {rank}] failed with exit code {exit_code}:\n{text}")
    error_dir = os.environ.get("TORCHPLUG_ERROR_DIR")
    if error_dir:
        record = {"rank": rank, "local_rank": local_rank, "exit_code": exit_code, "hostname": os.uname().nodename,
                  "pid": os.getpid(), "error": f"{type(exc).__name__}: {exc}", "traceback": text}
        path = os.path.join(error_dir, f"error-rank{rank}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.replace(path + ".tmp", path)


def _line_buffered_output() -> None:
    """Each line of output reaches the launcher promptly and in one write, so the ranks' lines never
    interleave mid-line (unbuffered, e.g. under PYTHONUNBUFFERED, print writes a line's text and its
    newline separately, and another rank's line can land in between)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # replaced by something without a file descriptor
            continue
        stream.flush()
        raw = io.FileIO(fd, "w", closefd=False)
        setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                                            line_buffering=True))


def _record_pid(rank: int, local_rank: int) -> None:
    """Tell the launcher which rank this pid is, so it can name a rank that dies without a Python error."""
    error_dir = os.environ.get("TORCHPLUG_ERROR_DIR")
    if error_dir:
        host = os.uname().nodename
        with open(os.path.join(error_dir, f"pid-{host}-{os.getpid()}.json"), "w") as f:
            json.dump({"rank": rank, "local_rank": local_rank, "hostname": host, "pid": os.getpid()}, f)


def main(argv: list[str] | None = None) -> None:
    """``python -m torchplug_distributed.distributed._worker [-m] TARGET ARGS...`` (started by the launcher)."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_module = bool(args) and args[0] == "-m"
    if as_module:
        args = args[1:]
    if not args:
        raise SystemExit("usage: _worker [-m] script-or-module [args...]")
    target, rest = args[0], args[1:]
    rank, local_rank = set_rank_environment(os.environ)  # type: ignore[arg-type]
    _record_pid(rank, local_rank)
    _line_buffered_output()
    sys.argv = [target, *rest]
    code = 0
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        if exc.code in (None, 0):
            code = 0
        else:
            code = exc.code if isinstance(exc.code, int) else 1
            if not isinstance(exc.code, int):
                sys.stderr.write(f"{exc.code}\n")
            _report(rank, local_rank, exc, code)
    except BaseException as exc:  # the rank's failure, reported with its rank; then stop without finalizing
        code = 1
        _report(rank, local_rank, exc, code)
    if code:
        from ..backends.mpi import abort_job

        abort_job(code)


if __name__ == "__main__":
    main()
