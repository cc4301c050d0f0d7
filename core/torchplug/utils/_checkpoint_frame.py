"""Non-reentrant activation checkpointing, built on ``saved_tensors_hooks`` as PyTorch's is.

The forward runs with grad enabled and records the normal graph, but every tensor autograd saves
inside it is packed as a small ``_Holder`` placeholder: no activation is kept.  The first unpack
of one of them during a backward recomputes the function from its saved inputs (random state
restored, under ``context_fn``'s second context), capturing what the recomputation saves, in
order, and each holder then returns its recomputed tensor (once).  Recomputation stops as soon as
the last needed tensor is produced (early stop), and ``determinism_check="default"`` compares the
number, shapes, dtypes and devices of the recomputed tensors with the originals.

Nesting follows PyTorch's rules: saved tensors belong to the innermost checkpoint; an inner
checkpoint's inputs are saved by its parent, so unpacking them recomputes the parent first.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections import defaultdict
from typing import Any, Callable

import torchplug
from torchplug.utils import _checkpoint_devices as D
from torchplug.utils._checkpoint_error import CheckpointError

__all__ = ["CheckpointError", "GraphExecGroup", "checkpoint_without_reentrant", "noop_context_fn", "STATE"]


def noop_context_fn() -> tuple[Any, Any]:
    """The default ``context_fn``: no context around forward or recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""


class _State:
    """Process-wide switches (PyTorch's are module globals): ``early_stop`` and ``debug`` (None:
    each call's own argument decides)."""

    early_stop: bool | None = None
    debug: bool | None = None


STATE = _State()
_GROUP = threading.local()


class GraphExecGroup:
    """Any checkpointed regions encountered by backward under the same instance of this context manager
    recompute at most once, even across several backward calls (which must then use disjoint saved
    activations).  Only affects ``use_reentrant=False``."""

    def __enter__(self) -> GraphExecGroup:
        current = getattr(_GROUP, "group", None)
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {current}")
        _GROUP.group = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _GROUP.group = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return getattr(_GROUP, "group", None)


class _StopRecomputationError(Exception):
    """Raised by the recomputation's pack hook once every needed tensor is recomputed (early stop)."""


class _Handle:
    """The key of one recomputed tensor in a frame's weak dictionary."""


class _Holder:
    """What autograd keeps instead of a saved tensor: one handle per backward that recomputed it."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self) -> None:
        self.handles: dict[Any, _Handle | None] = {}


def _metadata(x: Any) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


METADATA_FNS: dict[str, Callable[[Any], Any]] = {"default": _metadata, "none": lambda _: None}


def _internal_assert(cond: bool) -> None:
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report this bug "
                             "by filing an issue to PyTorch.")


def _version_error(t: Any, expected: int) -> RuntimeError:
    from torchplug._ops.composites import scalar_type_name

    shape = ", ".join(str(s) for s in t.shape)
    dev = "" if t.device.type == "cpu" else f"{t.device.type}."
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{dev}{scalar_type_name(t.dtype)}Tensor [{shape}]] is at version {t._version}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True).")


class _Frame:
    """The state of one non-reentrant checkpoint call, shared by its pack and unpack hooks."""

    def __init__(self, recompute_fn: Callable[..., None], early_stop: bool, unpack_error_cb: Any,
                 metadata_fn: Callable[[Any], Any]) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list[Any] = []
        self.saved_versions: list[int | None] = []
        self.weak_holders: list[weakref.ref] = []
        # per backward: handle -> recomputed tensor; the entries die with their handles
        self.recomputed: defaultdict[Any, weakref.WeakKeyDictionary] = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict[Any, int] = defaultdict(int)
        self.is_recomputed: defaultdict[Any, bool] = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas: list[Any] = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args: Any) -> None:
        # The inputs are kept as they are (history included, as PyTorch's SavedTensor unpacks them),
        # with their versions: the recomputation must see the values the forward saw.
        self.saved_args = list(args)
        self.saved_versions = [a._version if isinstance(a, torchplug.Tensor) else None for a in args]

    def get_inputs(self) -> list[Any]:
        for a, v in zip(self.saved_args, self.saved_versions):
            if v is not None and a._version != v:
                raise _version_error(a, v)
        return self.saved_args

    def check_recomputed_tensors_match(self, gid: Any) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                "recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{DEBUG_TIP}")
        different = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:  # freed by an earlier backward: nothing to compare
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed = self.recomputed[gid][holder.handles[gid]]
            meta = self.metadata_fn(recomputed)
            if self.x_metadatas[idx] != meta:
                different.append((idx, self.x_metadatas[idx], meta))
        if different:
            detail = "".join(f"tensor at position {idx}:\nsaved metadata: {saved}\nrecomputed metadata: {new}\n"
                             for idx, saved, new in different)
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the forward pass.\n{detail}.\n{DEBUG_TIP}")


def _recomputation_hook(frame_ref: weakref.ref, gid: Any) -> Any:
    """Saved-tensor hooks of a recomputation: each saved tensor goes to the holder at its position."""

    def pack_hook(x: Any) -> Any:
        x = x.detach() if x.requires_grad else x
        frame = frame_ref()
        _internal_assert(frame is not None)
        idx = frame.recomp_counter[gid]
        frame.recomp_counter[gid] += 1
        if idx >= len(frame.weak_holders):
            _internal_assert(not frame.early_stop)
            if not frame.forward_completed:  # a backward inside the forward, without early stop
                frame.ignore_saved_mismatch = True
                return x
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation than "
                                  f"during the original forward pass.\n{DEBUG_TIP}")
        holder = frame.weak_holders[idx]()
        if holder is not None:  # None: an earlier backward already freed it, nothing to keep
            _internal_assert(holder.handles.get(gid) is None)
            handle = holder.handles[gid] = _Handle()
            frame.recomputed[gid][handle] = x
        if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
            raise _StopRecomputationError
        return x

    return torchplug.autograd.graph.saved_tensors_hooks(pack_hook, lambda x: x)


def _current_gid() -> Any:
    gid = GraphExecGroup._get_current_group()
    if gid is None:
        gid = torchplug.autograd._current_graph_task_id()
        if gid == -1:  # unpacked outside a backward (a saved tensor read directly): a key of its own
            gid = object()
    return gid


def _checkpoint_hook(frame: _Frame) -> Any:
    """Saved-tensor hooks of a checkpointed forward: holders instead of tensors; their first unpack
    in a backward recomputes the function."""

    def pack_hook(x: Any) -> _Holder:
        holder = _Holder()
        frame.weak_holders.append(weakref.ref(holder))
        if frame.metadata_fn is not None:
            frame.x_metadatas.append(frame.metadata_fn(x))
        return holder

    def unpack_hook(holder: _Holder) -> Any:
        gid = _current_gid()
        if not frame.is_recomputed[gid]:
            args = frame.get_inputs()
            try:
                with _recomputation_hook(weakref.ref(frame), gid), torchplug.enable_grad():
                    frame.recompute_fn(*args)
            except _StopRecomputationError:
                pass
            frame.is_recomputed[gid] = True
            frame.check_recomputed_tensors_match(gid)
        _internal_assert(gid in holder.handles)
        if holder.handles[gid] is None:
            extra = ""
            if GraphExecGroup._get_current_group() is not None:
                extra = ("Performing two backward calls that overlap (i.e. require the same saved activation in "
                         "order to compute gradients) is not allowed while under the "
                         "torch.utils.checkpoint.GraphExecGroup context. ")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                f"{extra}If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise "
                "please open an issue with details on your use case.")
        ret = frame.recomputed[gid][holder.handles[gid]]
        holder.handles[gid] = None
        return ret

    if frame.unpack_error_cb is not None:
        def unpack_hook_with_error_cb(holder: _Holder) -> Any:
            try:
                return unpack_hook(holder)
            except CheckpointError as e:
                frame.unpack_error_cb(e)
                raise
        return torchplug.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook_with_error_cb)
    return torchplug.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook)


_CONTEXT_SUPPRESSED = ("torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception "
                       "raised during the checkpointed forward. This is not supported because checkpoint cannot "
                       "return a value for a failed forward.")


def checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                 context_fn: Callable[[], tuple[Any, Any]], determinism_check: str, debug: bool,
                                 early_stop: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``function(*args, **kwargs)`` with its saved activations replaced by placeholders (see the module)."""
    unpack_error_cb = None
    if STATE.debug if STATE.debug is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        from torchplug.utils._checkpoint_debug import debug_context_and_cb

        context_fn, unpack_error_cb = debug_context_and_cb()
    metadata_fn = METADATA_FNS.get(determinism_check)
    if metadata_fn is None:
        raise ValueError(f"determinism_check should be one of {list(METADATA_FNS)}, but got {determinism_check}")
    device_type = D.infer_device_type(*args)
    module = D.device_module(device_type)
    forward_context, recompute_context = context_fn()
    device_autocast, cpu_autocast = D.autocast_kwargs(device_type)
    cpu_state, devices, device_states = None, [], []
    had_device_in_fwd = False
    if preserve_rng_state:
        cpu_state = torchplug.get_rng_state()
        # a device runtime not started yet is not started here (as PyTorch avoids creating a CUDA context)
        if D.device_initialized(module):
            had_device_in_fwd = True
            devices, device_states = D.get_device_states(*args)

    def recompute_fn(*inputs: Any) -> None:
        with D.recompute_context(cpu_state, devices, device_states, device_type, device_autocast, cpu_autocast), \
                recompute_context:
            function(*inputs, **kwargs)

    frame = _Frame(recompute_fn, STATE.early_stop if STATE.early_stop is not None else early_stop,
                   unpack_error_cb, metadata_fn)
    if not torchplug.is_grad_enabled():  # nothing is saved: a plain call
        return function(*args, **kwargs)
    frame.save_inputs(*args)
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        ret = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(_CONTEXT_SUPPRESSED)
    frame.forward_completed = True
    if preserve_rng_state and not had_device_in_fwd and D.device_initialized(module):
        raise RuntimeError("PyTorch's device state was initialized in the forward pass of a Checkpoint, which is not "
                           "allowed. Please open an issue if you need this feature.")
    return ret
