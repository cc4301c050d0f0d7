"""DistributedDataParallel on N ranks against one process training on the concatenated batch.

Each rank builds its model from a different seed (DDP must broadcast rank 0's), trains 20 SGD steps on its
shard of every batch; a plain copy of the initial model trains on the whole batch.  Checked: parameters
bit-identical on all ranks and equal (1e-5) to the single-process run, for several bucket layouts and
gradient_as_bucket_view; no_sync accumulation; find_unused_parameters; the unused-parameter error.
"""

import copy

import torchplug as torch
import torchplug.distributed as dist
import torchplug.nn as nn
from torchplug.distributed.algorithms.ddp_comm_hooks import default_hooks
from torchplug.nn.parallel import DistributedDataParallel as DDP
from torchplug.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
R, W = dist.get_rank(), dist.get_world_size()
B, STEPS = 6, 20


def mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 4)).double()


def batches():
    g = torch.Generator().manual_seed(1234)
    for _ in range(STEPS):
        yield torch.randn(W * B, 8, generator=g, dtype=torch.float64), torch.randn(W * B, 4, generator=g,
                                                                                   dtype=torch.float64)


def flat(module):
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def train(hook=None, tol=1e-5, **ddp_kwargs):
    model = DDP(mlp(seed=100 + R), **ddp_kwargs)
    if hook is not None:
        model.register_comm_hook(None, hook)
    reference = copy.deepcopy(model.module)  # rank 0's initial parameters, after DDP's broadcast
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    for x, y in batches():
        opt.zero_grad()
        nn.functional.mse_loss(model(x[R * B:(R + 1) * B]), y[R * B:(R + 1) * B]).backward()
        opt.step()
        ref_opt.zero_grad()
        nn.functional.mse_loss(reference(x), y).backward()
        ref_opt.step()
    mine = flat(model.module)
    everyone = [None] * W
    dist.all_gather_object(everyone, mine.tolist())
    assert all(e == everyone[0] for e in everyone), f"{ddp_kwargs}: parameters differ between ranks"
    diff = (mine - flat(reference)).abs().max().item()
    assert diff < tol, f"{ddp_kwargs} {hook}: DDP differs from one process on the whole batch by {diff}"
    return model


model = train()
assert len(model._reducer.buckets) == 1
model = train(bucket_cap_mb=0.0005, gradient_as_bucket_view=True)  # ~500 bytes: several buckets
assert len(model._reducer.buckets) > 2, len(model._reducer.buckets)
train(bucket_cap_mb=0.001, static_graph=True)

# communication hooks: PyTorch's default ones, and a custom one that sees every bucket once per step
train(hook=default_hooks.allreduce_hook, bucket_cap_mb=0.001)
train(hook=default_hooks.fp16_compress_hook, tol=1e-2)  # gradients rounded to float16 on the wire
seen = []


def counting_hook(state, bucket):
    seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()), len(bucket.gradients())))
    return default_hooks.allreduce_hook(state, bucket)


model = train(hook=counting_hook, bucket_cap_mb=0.001)
n = len(model._reducer.buckets)
assert len(seen) == n * STEPS and [s[0] for s in seen[:n]] == list(range(n)), seen[:n]
assert [s[1] for s in seen[:n]] == [False] * (n - 1) + [True]
try:
    model.register_comm_hook(None, counting_hook)
except RuntimeError as exc:
    assert "can only be called once" in str(exc)
else:
    raise AssertionError("a second register_comm_hook must raise")

# buckets start during backward, as soon as they are full (not after it): the first bucket's all-reduce
# begins before the last gradient is ready
model = DDP(mlp(seed=1), bucket_cap_mb=0.0005)
reducer, events = model._reducer, []
launch, mark_ready = reducer._launch, reducer.mark_ready
reducer._launch = lambda b: (events.append(("launch", b.index)), launch(b))[1]
reducer.mark_ready = lambda p: (events.append(("ready", id(p))), mark_ready(p))[1]
model(torch.ones(2, 8, dtype=torch.float64)).sum().backward()
last_ready = max(i for i, e in enumerate(events) if e[0] == "ready")
assert events.index(("launch", 0)) < last_ready, events
assert [e[1] for e in events if e[0] == "launch"] == list(range(len(reducer.buckets)))

# no_sync: two local backward passes, then a synced one reduces the accumulated sum
model = DDP(mlp(seed=7))
plain = copy.deepcopy(model.module)
xs = [torch.full((B, 8), 0.1 * (R + k + 1), dtype=torch.float64) for k in range(3)]
with model.no_sync():
    model(xs[0]).sum().backward()
    model(xs[1]).sum().backward()
local = [p.grad.clone() for p in model.module.parameters()]
for x in xs[:2]:
    plain(x).sum().backward()
assert all(torch.allclose(a, p.grad) for a, p in zip(local, plain.parameters())), "no_sync reduced gradients"
model(xs[2]).sum().backward()
plain(xs[2]).sum().backward()
for p_ddp, p_plain in zip(model.module.parameters(), plain.parameters()):
    avg = p_plain.grad.clone()
    dist.all_reduce(avg)
    avg /= W
    assert torch.allclose(p_ddp.grad, avg, atol=1e-12), "after no_sync the synced backward must average the sum"


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.used = nn.Linear(4, 2)
        self.unused = nn.Linear(4, 2)

    def forward(self, x):
        return self.used(self.body(x))


torch.manual_seed(0)
model = DDP(TwoHeads(), find_unused_parameters=True)
for _ in range(2):
    model(torch.ones(3, 4) * (R + 1)).sum().backward()
assert model.module.unused.weight.grad is None and model.module.used.weight.grad is not None

model = DDP(TwoHeads())
model(torch.ones(3, 4))  # a forward without backward (e.g. a loss only looked at) leaves nothing pending
model(torch.ones(3, 4)).sum().backward()
try:
    model(torch.ones(3, 4))
except RuntimeError as exc:
    assert "Expected to have finished reduction in the prior iteration" in str(exc), exc
    assert "no gradient on this rank: unused.weight, unused.bias" in str(exc) or "unused.bias, unused.weight" in str(
        exc), exc
else:
    raise AssertionError("an unused parameter without find_unused_parameters must raise at the next forward")

# DistributedSampler reads the rank and world size from the default group
sampler = DistributedSampler(list(range(12)), shuffle=False)  # 12: no padding for 2, 3 or 4 ranks
assert (sampler.num_replicas, sampler.rank) == (W, R) and list(sampler) == list(range(12))[R::W]

try:
    DDP(nn.Linear(2, 2), device_ids=[0])
except ValueError as exc:
    assert "device_ids and output_device arguments only work" in str(exc), exc
else:
    raise AssertionError("device_ids on a CPU module must raise")
dist.destroy_process_group()
print(f"rank {R}: ddp ok", flush=True)
