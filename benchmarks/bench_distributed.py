"""torch.distributed on 2 ranks: torchplug's mpi backend vs PyTorch's gloo, measured in the same run.

Usage: ``python benchmarks/bench_distributed.py [--ranks 2] [--rounds 3] [--json PATH]``

All-reduce (SUM, float32) of 1 KB, 1 MB and 100 MB tensors: each job (torchplug through ``torchplugrun``,
then PyTorch's gloo through torchrun's environment) times ``iters`` all-reduces after a warm-up, between
barriers, and reports the slowest rank's mean; bandwidth is the algorithm bandwidth, bytes / time.  The two
libraries alternate job by job, ``--rounds`` times, and the median is reported.  Then a DDP training step of
an MLP (784-1024-1024-10, batch 64 per rank, SGD) on 1 rank and on N ranks, for both libraries.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

SIZES = {"1 KB": 1 << 10, "1 MB": 1 << 20, "100 MB": 100 << 20}
ITERS = {"1 KB": 500, "1 MB": 100, "100 MB": 5}
DDP_STEPS = 30


def _worker(lib: str, task: str) -> None:
    """One rank: time the task and print ``RESULT name seconds`` from rank 0 (slowest rank's mean)."""
    if lib == "torch":
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        dist.init_process_group("gloo")
    else:
        import torchplug as torch
        import torchplug.distributed as dist

        dist.init_process_group("mpi")
    rank = dist.get_rank()
    results = {}
    if task == "allreduce":
        for name, nbytes in SIZES.items():
            x = torch.ones(nbytes // 4)
            for _ in range(3 if nbytes < (10 << 20) else 1):
                dist.all_reduce(x)
            dist.barrier()
            start = time.perf_counter()
            for _ in range(ITERS[name]):
                dist.all_reduce(x)
            elapsed = torch.tensor([(time.perf_counter() - start) / ITERS[name]], dtype=torch.float64)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            results[name] = elapsed.item()
    else:
        nn = torch.nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
        if dist.get_world_size() > 1:
            model = nn.parallel.DistributedDataParallel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))

        def step() -> None:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

        for _ in range(3):
            step()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(DDP_STEPS):
            step()
        elapsed = torch.tensor([(time.perf_counter() - start) / DDP_STEPS], dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        results["ddp step"] = elapsed.item()
    if rank == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(lib: str, task: str, ranks: int) -> dict[str, float]:
    """Run one job of ``ranks`` processes and return rank 0's results."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    me = os.path.abspath(__file__)
    if lib == "torchplug":
        procs = [subprocess.Popen([sys.executable, "-m", "torchplug.distributed.run", "--nproc-per-node", str(ranks),
                                   me, "--worker", lib, task], env=env, stdout=subprocess.PIPE, text=True)]
    else:
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE=str(ranks))
        procs = [subprocess.Popen([sys.executable, me, "--worker", lib, task], stdout=subprocess.PIPE, text=True,
                                  env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(ranks)]
    out = ""
    for p in procs:
        stdout, _ = p.communicate(timeout=600)
        if p.returncode:
            raise SystemExit(f"{lib} {task} job failed with exit status {p.returncode}")
        out += stdout
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main() -> None:
    """Run every job ``--rounds`` times, alternating the libraries, and print the medians."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", default=None)
    p.add_argument("--worker", nargs=2, metavar=("LIB", "TASK"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker(*args.worker)
        return
    runs: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for lib in ("torchplug", "torch"):
            for name, t in _job(lib, "allreduce", args.ranks).items():
                runs.setdefault((lib, f"all_reduce {name}"), []).append(t)
            for ranks in (1, args.ranks):
                t = _job(lib, "ddp", ranks)["ddp step"]
                runs.setdefault((lib, f"DDP MLP step, {ranks} rank{'s' if ranks > 1 else ''}"), []).append(t)
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"{args.ranks} ranks, {os.cpu_count()} CPUs; medians of {args.rounds} rounds (torchplug mpi vs torch gloo)")
    print(f"{'row':<28}{'torchplug':>14}{'torch gloo':>14}{'ratio':>9}")
    report = []
    for name in [f"all_reduce {n}" for n in SIZES]:
        ours, theirs = med[("torchplug", name)], med[("torch", name)]
        nbytes = SIZES[name.split(" ", 1)[1]]
        bw = lambda t: f"{nbytes / t / 1e9:.3f} GB/s" if nbytes >= (1 << 20) else f"{t * 1e6:.1f} us"  # noqa: E731
        print(f"{name:<28}{bw(ours):>14}{bw(theirs):>14}{theirs / ours:>8.2f}x")
        report.append({"row": name, "torchplug_s": ours, "torch_gloo_s": theirs, "speedup": theirs / ours,
                       "torchplug_GBps": nbytes / ours / 1e9, "torch_gloo_GBps": nbytes / theirs / 1e9})
    for name in sorted({k[1] for k in med if k[1].startswith("DDP")}):
        ours, theirs = med[("torchplug", name)], med[("torch", name)]
        print(f"{name:<28}{ours * 1e3:>11.2f} ms{theirs * 1e3:>11.2f} ms{theirs / ours:>8.2f}x")
        report.append({"row": name, "torchplug_s": ours, "torch_gloo_s": theirs, "speedup": theirs / ours})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
