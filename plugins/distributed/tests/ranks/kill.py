"""Rank 1 is killed by SIGKILL (no Python error) while rank 0 waits in a collective."""

import os
import signal

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(torch.ones(3))
print("unreachable: all_reduce completed without rank 1", flush=True)
