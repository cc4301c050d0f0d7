"""Rank 1 never joins rank 0's all_reduce: rank 0 must raise after the group's 2 s timeout, naming itself."""

import time
from datetime import timedelta

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds=2))
if dist.get_rank() == 1:
    time.sleep(60)  # ended by the launcher when rank 0 fails
start = time.monotonic()
try:
    dist.all_reduce(torch.ones(3))
except dist.DistBackendError as exc:
    print(f"caught after {time.monotonic() - start:.1f} s: {exc}", flush=True)
    raise
