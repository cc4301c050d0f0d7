"""Started by plain ``mpiexec -n N`` (no torchplugrun, no RANK/WORLD_SIZE): init_process_group finds the MPI
launch by itself."""

import os

import torchplug as torch
import torchplug.distributed as dist

assert "RANK" not in os.environ and "WORLD_SIZE" not in os.environ
dist.init_process_group()  # backend None: mpi for cpu tensors
r, w = dist.get_rank(), dist.get_world_size()
x = torch.tensor([float(r)])
dist.all_reduce(x)
assert x.item() == sum(range(w)), x
assert dist.get_backend() == "cpu:mpi" or dist.get_backend().startswith("cpu:mpi"), dist.get_backend()
print(f"direct rank {r} of {w} ok", flush=True)
dist.destroy_process_group()
