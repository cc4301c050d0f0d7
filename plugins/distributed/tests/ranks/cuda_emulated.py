"""cuda tensors (torchplug-cuda's NumPy emulation) through the mpi backend, which stages them through the
host, and DDP on a cuda module with device_ids: the paths a GPU run takes without NCCL."""

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("gloo")
R, W = dist.get_rank(), dist.get_world_size()
x = torch.full((4,), float(R + 1), device="cuda")
dist.all_reduce(x)
assert x.device.type == "cuda" and x.cpu().tolist() == [float(W * (W + 1) // 2)] * 4, x
y = torch.full((2,), float(R), device="cuda")
dist.broadcast(y, src=W - 1)
assert y.cpu().tolist() == [float(W - 1)] * 2, y
torch.manual_seed(R)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 2).cuda(), device_ids=[0])
model(torch.ones(2, 3, device="cuda") * (R + 1)).sum().backward()
grads = [None] * W
dist.all_gather_object(grads, model.module.weight.grad.cpu().tolist())
assert all(g == grads[0] for g in grads), grads
assert model.module.weight.grad.device.type == "cuda"
dist.destroy_process_group()
print(f"rank {R}: emulated cuda ok", flush=True)
