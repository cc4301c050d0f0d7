"""One process, no launcher (MPI's singleton start): the world-of-one semantics and the init errors."""

import importlib.util
from datetime import timedelta

import torchplug as torch
import torchplug.distributed as dist
from torchplug_distributed.backends.base import Backend as BackendBase
from torchplug_distributed.distributed.work import CompletedWork


def raises(exc_type, text, fn):
    try:
        fn()
    except exc_type as exc:
        assert text in str(exc), f"{text!r} not in {exc!r}"
    else:
        raise AssertionError(f"expected {exc_type.__name__}({text!r})")


raises(ValueError, "Default process group has not been initialized", dist.get_rank)
raises(RuntimeError, "world_size=2 but this process was not started by an MPI launcher",
       lambda: dist.init_process_group("gloo", rank=0, world_size=2))
raises(ValueError, "Unknown backend type nope", lambda: dist.init_process_group("nope", rank=0, world_size=1))
raises(TypeError, "Expected timeout argument to be of type datetime.timedelta",
       lambda: dist.init_process_group("gloo", rank=0, world_size=1, timeout=5))
dist.init_process_group("gloo", rank=0, world_size=1, timeout=timedelta(seconds=30))
raises(ValueError, "trying to initialize the default process group twice!", lambda: dist.init_process_group("gloo"))
assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
assert dist.get_backend() == "gloo" and dist.get_backend() == dist.Backend.GLOO
x = torch.tensor([1.5, 2.5])
dist.all_reduce(x, op=dist.ReduceOp.AVG)
assert x.tolist() == [1.5, 2.5]
raises(ValueError, "Invalid destination rank", lambda: dist.send(torch.ones(1), 0))
raises(RuntimeError, "invalid root rank: 3", lambda: dist.broadcast(torch.ones(1), src=3))
raises(RuntimeError, "invalid tensor size at index 0", lambda: dist.all_gather([torch.ones(2)], torch.ones(3)))
raises(TypeError, "Expected parameter `tensor` of type torch.Tensor", lambda: dist.all_reduce([1.0]))
raises(ValueError, "must be specified on destination rank", lambda: dist.gather(torch.ones(1), None, dst=0))
if importlib.util.find_spec("torchplug_meta") is not None:  # the meta backend is installed
    raises(RuntimeError, "No backend type associated with device type meta",
           lambda: dist.all_reduce(torch.ones(2, device="meta")))
w = dist.all_reduce(torch.ones(3), async_op=True)
assert w.wait() and w.is_completed() and w.exception() is None and w.result()[0].tolist() == [1.0, 1.0, 1.0]
assert w.get_future().wait()[0].tolist() == [1.0, 1.0, 1.0]
assert w.get_future().then(lambda f: f.value()[0].sum().item()).wait() == 3.0
sub = dist.new_group([0])
assert dist.get_process_group_ranks(sub) == [0] and dist.get_pg_count() == 2
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 1))
model(torch.ones(2, 3)).sum().backward()
assert model.module.weight.grad.tolist() == [[2.0, 2.0, 2.0]]
raises(RuntimeError, "DistributedDataParallel is not needed", lambda: torch.nn.parallel.DistributedDataParallel(
    torch.nn.ReLU()))
bn = torch.nn.SyncBatchNorm(3)  # PyTorch's SyncBatchNorm refuses CPU inputs in training with a process group
raises(ValueError, "SyncBatchNorm expected input tensor to be on GPU", lambda: bn(torch.ones(4, 3)))
bn.eval()
assert bn(torch.ones(4, 3)).shape == (4, 3)
dist.destroy_process_group()
assert not dist.is_initialized() and dist.get_pg_count() == 0


class Loopback(BackendBase):
    """A third-party backend: a world of one, where every collective leaves the tensors as they are."""

    devices = ("cpu",)
    made = []

    @classmethod
    def is_available(cls):
        return True

    def __init__(self, rank, world_size, timeout, *, bootstrap=None):
        super().__init__(rank, world_size, timeout)
        Loopback.made.append(self)

    def allreduce(self, tensor, op):
        tensor.mul_(10)  # visibly this backend's work
        return CompletedWork([tensor])


dist.Backend.register_backend("loopback", Loopback)
assert dist.is_backend_available("loopback")
dist.init_process_group("loopback", rank=0, world_size=1)
y = torch.ones(2)
dist.all_reduce(y)
assert y.tolist() == [10.0, 10.0] and len(Loopback.made) == 1 and dist.get_backend() == "loopback"
raises(NotImplementedError, "does not implement broadcast", lambda: dist.broadcast(y, 0))
dist.destroy_process_group()
print("single ok", flush=True)
