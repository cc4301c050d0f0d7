"""Rank 1 fails while rank 0 waits in a collective: the job must end (not hang) and name rank 1."""

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 1:
    raise ValueError("rank one gave up on purpose")
dist.all_reduce(torch.ones(3))  # never completes: rank 1 is gone
print("unreachable: all_reduce completed without rank 1", flush=True)
