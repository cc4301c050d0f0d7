"""``torchplug.utils.checkpoint``: activation checkpointing (trade compute for memory).

Two variants, as in PyTorch.  ``use_reentrant=False`` (recommended) records the normal graph but
keeps no activation: every tensor autograd saves inside the function is replaced by a placeholder,
and the first backward that needs one recomputes the function (``_checkpoint_frame``); it supports
``autograd.grad``, ``inputs=``, nesting, double backward, ``context_fn`` (selective checkpointing
included) and the determinism check.  ``use_reentrant=True`` runs the function without a graph and,
in its backward, runs it again and backpropagates through it with a nested ``backward`` call; it
works only with ``.backward()`` without ``inputs``.  Both restore the forward's random state (so
dropout masks repeat) unless ``preserve_rng_state=False``.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any, Callable

import torchplug
from torchplug.utils import _checkpoint_devices as D
from torchplug.utils._checkpoint_devices import DefaultDeviceType, get_device_states, set_device_states
from torchplug.utils._checkpoint_frame import STATE as _STATE
from torchplug.utils._checkpoint_frame import (
    CheckpointError, GraphExecGroup, checkpoint_without_reentrant, noop_context_fn,
)
from torchplug.utils._checkpoint_sac import (
    SAC_IGNORED_OPS, CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts,
)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "get_device_states", "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS", "GraphExecGroup"]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Inside the block, ``debug`` of every non-reentrant checkpoint is ``enabled`` (None: each call's own
    ``debug`` argument decides)."""
    prev = _STATE.debug
    _STATE.debug = enabled
    try:
        yield
    finally:
        _STATE.debug = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints made inside the block stop their recomputation as soon as every
    needed tensor is recomputed (the default).  Only the forward needs to run inside the block."""
    prev = _STATE.early_stop
    _STATE.early_stop = enable
    try:
        yield
    finally:
        _STATE.early_stop = prev


def detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with every tensor detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, torchplug.Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs: Any) -> None:
    """Warn when no tensor among ``inputs`` requires grad (a reentrant checkpoint then gives no gradients)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, torchplug.Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def _checkpoint_function() -> type:
    class CheckpointFunction(torchplug.autograd.Function):
        """The reentrant checkpoint: forward without a graph, backward by recomputation and a nested backward."""

        @staticmethod
        def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, *args: Any) -> Any:
            check_backward_validity(args)
            ctx.run_function = run_function
            ctx.device_type = D.infer_device_type(*args)
            ctx.autocast = D.autocast_kwargs(ctx.device_type)
            ctx.rng = (None, [], [])
            if preserve_rng_state:
                module = D.device_module(ctx.device_type)
                devices, states = ([], [])
                if D.device_initialized(module):
                    devices, states = get_device_states(*args)
                ctx.rng = (torchplug.get_rng_state(), devices, states)
            ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, torchplug.Tensor)]
            ctx.inputs = [None if isinstance(a, torchplug.Tensor) else a for a in args]
            ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
            with torchplug.no_grad():
                return run_function(*args)

        @staticmethod
        def backward(ctx: Any, *grad_outputs: Any) -> Any:
            if not torchplug.autograd._is_checkpoint_valid():
                raise RuntimeError(
                    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                    "`inputs` parameter to .backward(). To resolve this error, you can either set "
                    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
            inputs = list(ctx.inputs)
            for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
                inputs[i] = saved
            with D.recompute_context(*ctx.rng, ctx.device_type, *ctx.autocast):
                detached = detach_variable(tuple(inputs))
                with torchplug.enable_grad():
                    outputs = ctx.run_function(*detached)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                     if isinstance(o, torchplug.Tensor) and o.requires_grad]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
            torchplug.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
            return (None, None) + tuple(a.grad if isinstance(a, torchplug.Tensor) else None for a in detached)

    CheckpointFunction.__module__ = __name__
    return CheckpointFunction


_FUNCTION: list[type] = []


def __getattr__(name: str) -> Any:
    # CheckpointFunction subclasses the autograd plugin's Function: built on first use.
    if name == "CheckpointFunction":
        if not _FUNCTION:
            _FUNCTION.append(_checkpoint_function())
        return _FUNCTION[0]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations; they are recomputed during backward.

    Args:
        function: what to run; its tensor arguments are kept, the tensors it saves for backward are not.
        use_reentrant: which variant (see the module docstring); pass it explicitly (False is recommended).
        context_fn: returns two context managers, entered around the forward and the recomputation
            (``use_reentrant=False`` only), e.g. ``create_selective_checkpoint_contexts``.
        determinism_check: ``"default"`` compares the shapes, dtypes and devices of the recomputed saved
            tensors with the forward's and raises :class:`CheckpointError` when they differ; ``"none"``.
        debug: on a :class:`CheckpointError`, include the ops run by the forward and by the recomputation.
        early_stop: stop the recomputation once every needed tensor is recomputed
            (overridden by :func:`set_checkpoint_early_stop`).
        preserve_rng_state: (keyword) restore the forward's random state for the recomputation (default True).
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return __getattr__("CheckpointFunction").apply(function, preserve, *args)
    return checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug, early_stop,
                                        args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run ``functions`` (a Sequential or list) in ``segments`` chunks, all but the last checkpointed."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, you "
            "can pass use_reentrant=True. Refer to docs for more details on the differences between the two "
            "variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: list[Any]) -> Callable[[Any], Any]:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, torchplug.nn.Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
