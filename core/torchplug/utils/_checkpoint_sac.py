"""Selective activation checkpointing: a policy decides, per op, whether its output is saved or recomputed.

``create_selective_checkpoint_contexts(policy)`` returns the two contexts ``checkpoint(context_fn=...)``
enters: during the forward a caching mode sees each op below autograd (``_dispatch_mode``), asks the
policy, and keeps a detached alias of the outputs of the ops to save; during the recomputation a
cached mode hands those outputs back instead of running the ops again, and runs the others.  Ops
are matched by overload and call index, so forward and recomputation must run the same ops.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from typing import Any, Callable

import torchplug
from torchplug.utils._dispatch_mode import DispatchMode

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "SAC_IGNORED_OPS"]


class SelectiveCheckpointContext:
    """What a policy function receives first: ``is_recompute`` (always False: the policy runs during the
    forward only) and ``op_output``."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Whether an op's output is saved (``*_SAVE``) or recomputed (``*_RECOMPUTE``) by selective checkpointing.

    ``MUST_*`` and ``PREFER_*`` act alike here (the difference matters to compilers); the CPU offload
    policies keep the output, as saving does.
    """

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


# The checkpoint machinery detaches a different number of times in forward and recomputation.
SAC_IGNORED_OPS = {torchplug.ops.aten.detach.default}

_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE, CheckpointPolicy.MUST_CPU_OFFLOAD,
         CheckpointPolicy.PREFER_CPU_OFFLOAD)
_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on global "
             "state that changed between forward and backward.")


class _VersionWrapper:
    """A cached output and its version: a later in-place change of it is an error."""

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version = val._version if isinstance(val, torchplug.Tensor) else None

    def get_val(self, allow_mutation: bool) -> Any:
        if self.version is not None and not allow_mutation and self.val._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _tree_map(fn: Callable[[Any], Any], x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_tree_map(fn, v) for v in x)
    return fn(x)


def _detach(x: Any) -> Any:
    return x.detach() if isinstance(x, torchplug.Tensor) else x


class _CachingMode(DispatchMode):
    """The forward's mode: runs each op, asks the policy, stores the outputs to save."""

    def __init__(self, policy_fn: Callable[..., Any], storage: dict[Any, dict[int, Any]]) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter: defaultdict[Any, int] = defaultdict(int)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func in SAC_IGNORED_OPS:
            return out
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), func, *args, **kwargs)
        if isinstance(policy, bool):  # the older boolean policies: True saves
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in _SAVE:
            self.storage[func][idx] = _tree_map(lambda x: _VersionWrapper(_detach(x)), out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedMode(DispatchMode):
    """The recomputation's mode: the stored outputs of saved ops, the others run again."""

    def __init__(self, storage: dict[Any, dict[int, Any]], allow_cache_entry_mutation: bool) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: defaultdict[Any, int] = defaultdict(int)

    def __enter__(self) -> _CachedMode:
        self.func_counter.clear()  # a second backward (retain_graph) then fails as "an extra time"
        return super().__enter__()  # type: ignore[return-value]

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_MISMATCH}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but not found in storage. "
                               f"{_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any region "
                               "computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        return _tree_map(lambda x: x.get_val(self.allow_cache_entry_mutation), entry)


def create_selective_checkpoint_contexts(policy_fn_or_list: Any,
                                         allow_cache_entry_mutation: bool = False) -> tuple[Any, Any]:
    """The ``(forward, recomputation)`` contexts of selective checkpointing, for ``checkpoint(context_fn=...)``.

    Args:
        policy_fn_or_list: ``policy_fn(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or a bool, True
            saving), called for every op of the forward with a :class:`SelectiveCheckpointContext`; or a
            list of ``OpOverload``s to save (every other op is recomputed).
        allow_cache_entry_mutation: do not raise when a cached output was modified in place.
    """
    if isinstance(policy_fn_or_list, list):
        from torchplug._ops.namespace import OpOverload, OpOverloadPacket

        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
