"""``torchplug.utils.checkpoint``: activation checkpointing (trade compute for memory).

The checkpointed function runs without recording a graph; the backward pass runs it again with
grad enabled, from the saved inputs and (by default) the saved CPU random state, so dropout masks
repeat, and backpropagates through that recomputation.  Both ``use_reentrant`` variants take this
route: the difference PyTorch documents that matters to results, gradients for parameters reached
through inputs that do not require grad, is kept by an always-requiring-grad anchor input in the
non-reentrant mode.  The autograd plugin provides ``Function``; without it this raises its error.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

import torchplug

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]


def noop_context_fn() -> tuple[Any, Any]:
    """The default ``context_fn``: no context around forward or recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _checkpoint_function() -> type:
    Function = torchplug.autograd.Function

    class CheckpointFunction(Function):
        @staticmethod
        def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool, anchor: Any,
                    *args: Any) -> Any:
            ctx.run_function = run_function
            ctx.rng_state = torchplug.get_rng_state() if preserve_rng_state else None
            ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, torchplug.Tensor)]
            ctx.inputs = [None if isinstance(a, torchplug.Tensor) else a for a in args]
            ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
            with torchplug.no_grad():
                return run_function(*args)

        @staticmethod
        def backward(ctx: Any, *grad_outputs: Any) -> Any:
            inputs = list(ctx.inputs)
            for i, saved in zip(ctx.tensor_indices, ctx.saved_tensors):
                inputs[i] = saved.detach().requires_grad_(saved.requires_grad)
            state = torchplug.get_rng_state()
            try:
                if ctx.rng_state is not None:
                    torchplug.set_rng_state(ctx.rng_state)
                with torchplug.enable_grad():
                    outputs = ctx.run_function(*inputs)
            finally:
                if ctx.rng_state is not None:
                    torchplug.set_rng_state(state)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                     if isinstance(o, torchplug.Tensor) and o.requires_grad and g is not None]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
            torchplug.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
            grads = tuple(a.grad if isinstance(a, torchplug.Tensor) else None for a in inputs)
            return (None, None, None) + grads

    return CheckpointFunction


_FUNCTION: list[type] = []


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[Any, Any]] = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations; recomputed during backward."""
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
    if use_reentrant and (context_fn is not noop_context_fn or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if context_fn is not noop_context_fn:
        raise NotImplementedError("checkpoint(context_fn=...) is not supported by torchplug yet: pass the default "
                                  "noop_context_fn")
    if not _FUNCTION:
        _FUNCTION.append(_checkpoint_function())
    run = function if not kwargs else (lambda *a: function(*a, **kwargs))
    # Non-reentrant: an input that always requires grad, so parameters used inside get gradients
    # even when no argument requires grad (as PyTorch's non-reentrant checkpoint does).
    anchor = torchplug.empty((0,), requires_grad=True) if not use_reentrant and torchplug.is_grad_enabled() else None
    if use_reentrant and torchplug.is_grad_enabled() and not any(
            isinstance(a, torchplug.Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
    return _FUNCTION[0].apply(run, preserve, anchor, *args)


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
