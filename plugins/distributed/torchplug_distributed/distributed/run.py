"""``torchplugrun`` / ``python -m torchplug.distributed.run``: start the ranks of a job, as ``torchrun`` does.

The ranks are started by MPI's process manager (``mpiexec`` of the MPI that mpi4py uses: the ``mpich``
wheel's unless a system MPI is configured), one per ``--nproc-per-node`` slot on each host; each gets
torchrun's environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``...).  When a rank fails, the process manager stops the others and the launcher exits non-zero
naming the rank and its error.  Several machines: ``--nnodes N --hosts h1,h2,...`` (or ``--hostfile``), run
once on one of them; MPI starts the remote ranks (over ssh, which must work without a password).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid

__all__ = ["main", "parse_args", "mpiexec_command"]


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        try:
            import cupy

            return cupy.cuda.runtime.getDeviceCount()
        except Exception:  # no GPU here: torchrun falls back to the cpu count too
            return os.cpu_count() or 1
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"--nproc-per-node must be at least 1, got {n}")
    return n


def parse_args(argv: list[str]) -> argparse.Namespace:
    """torchrun's options (the elastic ones are accepted for compatibility and ignored), plus the host list."""
    p = argparse.ArgumentParser(prog="torchplugrun", description="Start the ranks of a torchplug.distributed job "
                                "under MPI's process manager, with torchrun's environment variables.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=_nproc, default=1,
                   help="ranks per host (an int, or auto/cpu/gpu)")
    p.add_argument("--nnodes", type=str, default="1", help="number of hosts (with --hosts/--hostfile)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0,
                   help="accepted for torchrun compatibility: one launcher starts every host's ranks")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", help="exported as MASTER_ADDR")
    p.add_argument("--master-port", "--master_port", type=int, default=29500, help="exported as MASTER_PORT")
    p.add_argument("--standalone", action="store_true", help="single host (the default here)")
    p.add_argument("--hosts", default=None, help="comma-separated hosts for --nnodes > 1 (MPI's host list)")
    p.add_argument("--hostfile", default=None, help="file with one host per line, for --nnodes > 1")
    p.add_argument("--rdzv-backend", "--rdzv_backend", default=None, help="ignored: MPI makes the rendezvous")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", default=None, help="ignored: MPI makes the rendezvous")
    p.add_argument("--rdzv-id", "--rdzv_id", default=None, help="exported as TORCHELASTIC_RUN_ID")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0, help="only 0 is supported")
    p.add_argument("--mpiexec", default=None, help="the MPI launcher to use (default: the one beside this Python)")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the target as an executable")
    p.add_argument("target", help="the training script (or module with -m)")
    p.add_argument("target_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.max_restarts:
        p.error("--max-restarts is not supported: a failed rank ends the job")
    nnodes = args.nnodes.split(":")[-1]  # torchrun's MIN:MAX form: the job runs on MAX hosts
    args.nnodes = int(nnodes)
    args.host_list = _hosts(args, p)
    return args


def _hosts(args: argparse.Namespace, p: argparse.ArgumentParser) -> list[str] | None:
    hosts: list[str] | None = None
    if args.hosts:
        hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    elif args.hostfile:
        with open(args.hostfile) as f:
            hosts = [line.split()[0].split(":")[0] for line in f if line.strip() and not line.startswith("#")]
    if args.nnodes > 1:
        if hosts is None:
            p.error(f"--nnodes {args.nnodes} needs the hosts: --hosts h1,h2,... or --hostfile FILE (run torchplugrun "
                    "once, on one of them; MPI starts the ranks on every host)")
        if args.node_rank != 0:
            p.error("run torchplugrun only once, with --node-rank 0 (or none): MPI starts every host's ranks")
    if hosts is not None and len(hosts) != args.nnodes:
        p.error(f"--nnodes {args.nnodes} but {len(hosts)} hosts were given ({','.join(hosts)})")
    return hosts


def _find_mpiexec(explicit: str | None) -> str:
    candidates = [explicit, os.environ.get("TORCHPLUG_MPIEXEC"), os.path.join(os.path.dirname(sys.executable),
                                                                              "mpiexec"), shutil.which("mpiexec")]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    raise SystemExit("torchplugrun: no mpiexec found: install the MPI the distributed plugin depends on "
                     "(pip install mpich mpi4py) or set TORCHPLUG_MPIEXEC to your MPI's launcher")


def mpiexec_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line starting every rank through the per-rank entry point."""
    world = args.nnodes * args.nproc_per_node
    cmd = [mpiexec, "-n", str(world)]
    if args.host_list:
        cmd += ["-hosts", ",".join(f"{h}:{args.nproc_per_node}" for h in args.host_list)]
    if args.no_python:
        worker = [sys.executable, "-m", "torchplug_distributed.distributed._exec"]
    else:
        worker = [sys.executable, "-m", "torchplug_distributed.distributed._worker"]
        if args.module:
            worker.append("-m")
    return cmd + worker + [args.target, *args.target_args]


def main(argv: list[str] | None = None) -> None:
    """Run the job; exit with 0 if every rank succeeded, else the failed rank's status, naming it."""
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    mpiexec = _find_mpiexec(args.mpiexec)
    error_dir = tempfile.mkdtemp(prefix="torchplugrun-")
    env = dict(os.environ)
    env.update({"MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port),
                "WORLD_SIZE": str(args.nnodes * args.nproc_per_node), "LOCAL_WORLD_SIZE": str(args.nproc_per_node),
                "TORCHPLUG_NPROC_PER_NODE": str(args.nproc_per_node), "TORCHPLUG_ERROR_DIR": error_dir,
                "TORCHELASTIC_RUN_ID": args.rdzv_id or uuid.uuid4().hex[:12], "OMP_NUM_THREADS":
                    os.environ.get("OMP_NUM_THREADS", "1")})
    try:
        code, killed = _run_forwarding(mpiexec_command(args, mpiexec), env, error_dir)
        failures = []
        for path in sorted(glob.glob(os.path.join(error_dir, "error-rank*.json"))):
            with open(path) as f:
                failures.append(json.load(f))
        pids = {}
        for path in glob.glob(os.path.join(error_dir, "pid-*.json")):
            with open(path) as f:
                record = json.load(f)
            pids[(record["hostname"], record["pid"])] = record
    finally:
        shutil.rmtree(error_dir, ignore_errors=True)
    if failures:
        first = min(failures, key=lambda r: r["rank"])
        names = ", ".join(f"rank {r['rank']}" for r in failures)
        sys.stderr.write(f"torchplugrun: {names} failed. First: rank {first['rank']} (local_rank "
                         f"{first['local_rank']}, host {first['hostname']}, pid {first['pid']}) exited with code "
                         f"{first['exit_code']}: {first['error']}\n")
        raise SystemExit(first["exit_code"] or 1)
    for pid, host, status in killed:
        record = pids.get((host, pid)) or next((r for (h, p), r in pids.items() if p == pid), None)
        if record is not None:
            sys.stderr.write(f"torchplugrun: rank {record['rank']} (local_rank {record['local_rank']}, host "
                             f"{record['hostname']}, pid {pid}) died without a Python error: {_describe(status)}; "
                             "MPI's process manager stopped the other ranks\n")
            raise SystemExit(1)
    if code:
        sys.stderr.write(f"torchplugrun: the job failed (mpiexec exit status {code}); a rank was killed or exited "
                         "without a Python error (see the output above)\n")
        raise SystemExit(code if code > 0 else 1)


# MPICH's process manager reports a rank that died: "=   PID 123 RUNNING AT host" then "=   EXIT CODE: 9"
_PID_LINE = re.compile(r"^=\s+PID (\d+) RUNNING AT (\S+)")
_EXIT_LINE = re.compile(r"^=\s+EXIT CODE: (\d+)")


# How long the process manager gets to stop the other ranks after one reported its failure, before the
# launcher stops them itself (a job must end, never hang, when a rank fails).
STOP_GRACE_S = 10.0


def _run_forwarding(cmd: list[str], env: dict[str, str],
                    error_dir: str | None = None) -> tuple[int, list[tuple[int, str, int]]]:
    """Run mpiexec, copying its output through, and collect the (pid, host, exit code) of ranks it saw die."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True, errors="replace", bufsize=1)
    if error_dir is not None:
        threading.Thread(target=_stop_after_failure, args=(proc, error_dir), daemon=True).start()
    killed: list[tuple[int, str, int]] = []
    pending: tuple[int, str] | None = None
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            found = _PID_LINE.match(line)
            if found:
                pending = (int(found.group(1)), found.group(2))
                continue
            found = _EXIT_LINE.match(line)
            if found and pending is not None:
                killed.append((pending[0], pending[1], int(found.group(1))))
                pending = None
    except KeyboardInterrupt:  # Ctrl-C reached mpiexec too, which stops the ranks: wait for it, then exit
        proc.wait()
        raise SystemExit(130) from None
    finally:
        proc.stdout.close()
    return proc.wait(), killed


def _stop_after_failure(proc: subprocess.Popen, error_dir: str, grace: float | None = None) -> None:
    """Once a rank has reported its failure, give mpiexec ``grace`` seconds to end the job, then end it:
    kill this host's ranks (their pids are in the error directory) and mpiexec, whose proxies end the
    ranks on other hosts when it goes."""
    import signal

    grace = STOP_GRACE_S if grace is None else grace
    failed_at = None
    while proc.poll() is None:
        if failed_at is None:
            if glob.glob(os.path.join(error_dir, "error-rank*.json")):
                failed_at = time.monotonic()
        elif time.monotonic() - failed_at > grace:
            sys.stderr.write(f"torchplugrun: a rank failed {grace:g} s ago and MPI's process manager has not "
                             "stopped the others: stopping them\n")
            host = os.uname().nodename
            for path in glob.glob(os.path.join(error_dir, "pid-*.json")):
                try:
                    with open(path) as f:
                        record = json.load(f)
                    if record["hostname"] == host:
                        os.kill(record["pid"], signal.SIGKILL)
                except (OSError, ValueError, KeyError):  # already gone, or a record half-written
                    pass
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
            return
        time.sleep(0.2)


def _describe(status: int) -> str:
    """MPICH gives a rank killed by signal N exit code N."""
    import signal

    try:
        return f"killed by signal {status} ({signal.Signals(status).name})"
    except ValueError:
        return f"exit code {status}"


if __name__ == "__main__":
    main()
