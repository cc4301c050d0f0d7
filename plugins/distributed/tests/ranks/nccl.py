"""cuda tensors over the nccl backend (needs CuPy with NCCL and one GPU per rank): collectives and DDP."""

import torchplug as torch
import torchplug.distributed as dist

dist.init_process_group("cpu:mpi,cuda:nccl")
R, W = dist.get_rank(), dist.get_world_size()
dev = torch.device("cuda", R % torch.cuda.device_count())
x = torch.full((1000,), float(R + 1), device=dev)
dist.all_reduce(x)
assert x.cpu().tolist() == [float(W * (W + 1) // 2)] * 1000
x = torch.full((4,), float(R + 1), device=dev)
dist.all_reduce(x, op=dist.ReduceOp.AVG)
assert torch.allclose(x.cpu(), torch.full((4,), (W + 1) / 2))
y = torch.full((3,), float(R), device=dev, dtype=torch.float64)
dist.broadcast(y, src=W - 1)
assert y.cpu().tolist() == [float(W - 1)] * 3
out = torch.zeros(W * 2, device=dev)
dist.all_gather_into_tensor(out, torch.full((2,), float(R), device=dev))
assert out.cpu().tolist() == [float(r) for r in range(W) for _ in range(2)]
cpu = torch.ones(2)
dist.all_reduce(cpu)  # cpu tensors go through mpi on the same group
assert cpu.tolist() == [float(W)] * 2
torch.manual_seed(R)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2).to(dev), device_ids=[dev.index])
model(torch.ones(4, 8, device=dev) * (R + 1)).sum().backward()
w = [None] * W
dist.all_gather_object(w, model.module.weight.grad.cpu().tolist())
assert all(v == w[0] for v in w)
dist.destroy_process_group()
print(f"rank {R}: nccl ok", flush=True)
