"""``DistributedDataParallel`` (``torchplug.nn.parallel.DistributedDataParallel``): data-parallel training.

At construction the parameters and buffers are broadcast from rank 0.  Gradients are reduced in
buckets (``bucket_cap_mb``; by default 25 MB with a first one of 1 MB, as in PyTorch) of the parameters
in reverse registration order, roughly the order backward produces them: a hook after each gradient's
accumulation counts the bucket's ready parameters, and a full bucket is flattened and its all-reduce
started asynchronously at once, in bucket order on every rank, so the reduction of the last layers
overlaps the backward of the first ones.  When the last bucket has started, the reductions are awaited
and the averaged gradients written back (or, with ``gradient_as_bucket_view``, the gradients *are*
views of the buckets).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torchplug

from . import collectives, distributed_c10d
from .reduce_op import ReduceOp

__all__ = ["DistributedDataParallel", "GradBucket"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class _Bucket:
    __slots__ = ("index", "params", "offsets", "buffer", "ready", "future")

    def __init__(self, index: int, params: list[Any]) -> None:
        self.index = index
        self.params = params
        self.offsets: list[int] = []
        total = 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = torchplug.zeros(total, dtype=params[0].dtype, device=params[0].device)
        self.ready: set[int] = set()
        self.future: Any = None  # the bucket's reduction in flight

    def view(self, i: int) -> Any:
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i] + p.numel()].view(p.shape)


class GradBucket:
    """What a DDP communication hook receives: one bucket of flattened gradients (PyTorch's ``GradBucket``)."""

    def __init__(self, bucket: _Bucket, last: bool) -> None:
        self._bucket = bucket
        self._last = last

    def index(self) -> int:
        """The bucket's position (0 holds the last layers' parameters)."""
        return self._bucket.index

    def buffer(self) -> Any:
        """The flat tensor of the bucket's gradients (reduce it in place or return a new one)."""
        return self._bucket.buffer

    def set_buffer(self, buffer: Any) -> None:
        """Replace the bucket's contents with ``buffer``."""
        self._bucket.buffer.copy_(buffer)

    def gradients(self) -> list[Any]:
        """Each parameter's gradient, as a view of :meth:`buffer`."""
        return [self._bucket.view(i) for i in range(len(self._bucket.params))]

    def parameters(self) -> list[Any]:
        """The bucket's parameters."""
        return list(self._bucket.params)

    def is_last(self) -> bool:
        """Whether this is the last bucket of the iteration to be reduced."""
        return self._last


class _Reducer:
    """The per-iteration gradient reduction of a DDP module (its buckets and their pending works)."""

    def __init__(self, params: list[Any], bucket_bytes: int, first_bucket_bytes: int, group: Any, as_view: bool,
                 find_unused: bool, names: dict[int, str]) -> None:
        self.group = group
        self.names = names
        self.unused: list[Any] = []
        self.comm_hook: tuple[Any, Any] | None = None
        self.as_view = as_view
        self.find_unused = find_unused
        self.buckets: list[_Bucket] = []
        self.location: dict[int, tuple[_Bucket, int]] = {}
        current: list[Any] = []
        size, cap = 0, first_bucket_bytes
        for p in reversed(params):  # backward produces the last layers' gradients first
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > cap or p.dtype != current[0].dtype or p.device != current[0].device):
                self._add(current)
                current, size, cap = [], 0, bucket_bytes
            current.append(p)
            size += nbytes
        if current:
            self._add(current)
        self.next_bucket = 0
        self.pending = False  # an iteration's reduction started (forward ran) and has not finished
        self.world = distributed_c10d.get_world_size(group)

    def _add(self, params: list[Any]) -> None:
        bucket = _Bucket(len(self.buckets), params)
        for i, p in enumerate(params):
            self.location[id(p)] = (bucket, i)
        self.buckets.append(bucket)

    def prepare(self, unused: list[Any]) -> None:
        """A new iteration: no parameter ready; ``unused`` (find_unused_parameters) become ready with the first
        gradient, as in PyTorch (so a forward without backward leaves nothing pending)."""
        if self.pending:
            missing = [self.names.get(id(b.params[i]), str(tuple(b.params[i].shape))) for b in self.buckets
                       for i in range(len(b.params)) if i not in b.ready]
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                f"participate in calculating loss. Parameters that got no gradient on this rank: {', '.join(missing)}")
        for b in self.buckets:
            b.ready.clear()
            b.future = None
        self.next_bucket = 0
        self.unused = unused
        self.used = {id(p) for b in self.buckets for p in b.params} - {id(p) for p in unused}

    def mark_ready(self, param: Any) -> None:
        """``param``'s gradient is final for this iteration (its post-accumulate hook ran)."""
        if not self.pending:  # the iteration's first gradient: from now on the reduction must finish
            self.pending = True
            for p in self.unused:
                self._ready(p)
        self._ready(param)

    def _ready(self, param: Any) -> None:
        """Count ``param`` in its bucket; start every bucket that is now complete, in order."""
        bucket, i = self.location[id(param)]
        if i in bucket.ready:
            return
        bucket.ready.add(i)
        while self.next_bucket < len(self.buckets):
            b = self.buckets[self.next_bucket]
            if len(b.ready) < len(b.params):
                break
            self._launch(b)
            self.next_bucket += 1
        for b in self.buckets[:self.next_bucket]:  # let the library move the started reductions along
            if b.future is not None:
                b.future.done()
        if self.next_bucket == len(self.buckets):
            self._finalize()

    def _launch(self, b: _Bucket) -> None:
        with torchplug.no_grad():
            for i, p in enumerate(b.params):
                g = p.grad
                view = b.view(i)
                if g is None:
                    view.zero_()
                elif not (self.as_view and g.data_ptr() == view.data_ptr()):
                    view.copy_(g)
            if self.comm_hook is not None:  # the hook reduces (and averages) the bucket itself
                state, hook = self.comm_hook
                b.future = hook(state, GradBucket(b, b.index == len(self.buckets) - 1))
                return
            b.buffer.div_(self.world)  # averaged before the sum, as PyTorch's reducer does
        b.future = collectives.all_reduce(b.buffer, ReduceOp.SUM, group=self.group, async_op=True).get_future()

    def _finalize(self) -> None:
        used_anywhere = None
        if self.find_unused:  # which parameters got a gradient on some rank (the others keep grad None)
            flags = torchplug.tensor([1 if id(p) in self.used else 0 for b in self.buckets for p in b.params],
                                     dtype=torchplug.int32)
            collectives.all_reduce(flags, ReduceOp.MAX, group=self.group)
            used_anywhere = flags.tolist()
        k = 0
        with torchplug.no_grad():
            for b in self.buckets:
                reduced = b.future.wait()
                b.future = None
                if isinstance(reduced, list):  # a Work's future holds the list of its output tensors
                    reduced = reduced[0]
                if reduced is not b.buffer:
                    b.buffer.copy_(reduced)
                for i, p in enumerate(b.params):
                    flag = used_anywhere is None or used_anywhere[k]
                    k += 1
                    if not flag:
                        continue
                    view = b.view(i)
                    if self.as_view:
                        if p.grad is None or p.grad.data_ptr() != view.data_ptr():
                            p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad.copy_(view)
        self.pending = False


def _reachable_params(outputs: Any, params: list[Any]) -> set[int]:
    """ids of the parameters the autograd graph of ``outputs`` reaches (find_unused_parameters)."""
    roots = []

    def collect(o: Any) -> None:
        if isinstance(o, torchplug.Tensor):
            if o.grad_fn is not None:
                roots.append(o.grad_fn)
            elif o.requires_grad:
                found.add(id(o))
        elif isinstance(o, (list, tuple)):
            for x in o:
                collect(x)
        elif isinstance(o, dict):
            for x in o.values():
                collect(x)

    found: set[int] = set()
    collect(outputs)
    seen: set[int] = set()
    stack = roots
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        stack.extend(n for n, _ in getattr(node, "next_functions", ()))
    return found


class DistributedDataParallel(torchplug.nn.Module):
    """Replicate ``module`` on every rank and average its gradients during backward (see the module doc)."""

    def __init__(self, module: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params: Any = None, param_to_hook_all_reduce: Any = None,
                 mixed_precision: Any = None, device_mesh: Any = None,
                 skip_all_reduce_unused_params: bool = False) -> None:
        super().__init__()
        group = distributed_c10d.resolve_group(process_group, "DistributedDataParallel")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device for p in module.parameters()}
        if device_ids is not None and (len(devices) > 1 or next(iter(devices)).type == "cpu"):
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with single-device/"
                f"multiple-device GPU modules or CPU modules, but got device_ids {device_ids}, output_device "
                f"{output_device}, and module parameters {devices}.")
        if device_ids is not None and len(device_ids) != 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("DDP expects the same parameter to be registered once (shared parameters are "
                             "reduced once: register them in one module)")
        self.module = module
        self.process_group = group if process_group is None else process_group
        self.device_ids = None if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = _DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        if init_sync:
            self._sync_module_states()
        object.__setattr__(self, "_params", params)
        first = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap  # as PyTorch
        object.__setattr__(self, "_reducer", _Reducer(params, self.bucket_bytes_cap, first, process_group,
                                                      gradient_as_bucket_view,
                                                      find_unused_parameters or static_graph,
                                                      {id(p): n for n, p in module.named_parameters()}))
        object.__setattr__(self, "_syncing", False)
        object.__setattr__(self, "_hooks", [p.register_post_accumulate_grad_hook(self._grad_ready)
                                            for p in params])

    def _sync_module_states(self) -> None:
        """Every rank starts from rank 0's parameters and buffers."""
        tensors = [p for p in self.module.parameters()] + [b for b in self.module.buffers()]
        works = [collectives.broadcast(t, src=distributed_c10d.get_global_rank(self.process_group, 0)
                                       if self.process_group is not None else 0,
                                       group=self.process_group, async_op=True) for t in tensors]
        for w in works:
            if w is not None:
                w.wait()

    def _grad_ready(self, param: Any) -> None:
        if self._syncing:
            self._reducer.mark_ready(param)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Run the module; with gradients enabled (and not in ``no_sync``), arm this iteration's reduction."""
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                works = [collectives.broadcast(b, src=0 if self.process_group is None else
                                               distributed_c10d.get_global_rank(self.process_group, 0),
                                               group=self.process_group, async_op=True) for b in buffers]
                for w in works:
                    if w is not None:
                        w.wait()
        output = self.module(*inputs, **kwargs)
        sync = torchplug.is_grad_enabled() and self.require_backward_grad_sync
        object.__setattr__(self, "_syncing", sync)
        if sync:
            unused: list[Any] = []
            if self.find_unused_parameters or self.static_graph:
                reached = _reachable_params(output, self._params)
                unused = [p for p in self._params if id(p) not in reached]
            self._reducer.prepare(unused)
        return output

    def register_comm_hook(self, state: Any, hook: Any) -> None:
        """Reduce each bucket with ``hook(state, bucket) -> Future`` (of the reduced flat tensor) instead of
        DDP's all-reduce; e.g. ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook``.
        The hook averages: DDP divides by the world size only without one."""
        if not callable(hook):
            raise TypeError(f"Communication hook must be callable, got {hook!r}")
        if self._reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._reducer.comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, forward/backward accumulate gradients locally; the next synced backward reduces the sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def __getstate__(self) -> Any:
        raise TypeError("DistributedDataParallel cannot be pickled: save model.module.state_dict() instead")


DistributedDataParallel.__module__ = "torchplug.nn.parallel.distributed"
