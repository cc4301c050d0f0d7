"""The smaller torch.func names: ``functionalize``, ``replace_all_batch_norm_modules_``, ``debug_unwrap``."""

from __future__ import annotations

import functools
from typing import Any, Callable

import torchplug

from ._batched import BatchedTensor

__all__ = ["functionalize", "replace_all_batch_norm_modules_", "debug_unwrap"]


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` with its mutations removed, as ``torch.func.functionalize``.  torchplug runs eagerly and has
    no graph to rewrite, so the function runs as it is: its outputs, and the mutations of its inputs (which
    functionalize copies back), are the same."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapped


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Make every batch-norm module under ``root`` stop tracking running statistics (in place), so it can run
    under vmap, as ``torch.func.replace_all_batch_norm_modules_``."""
    base = next(c for c in torchplug.nn.BatchNorm1d.__mro__ if c.__name__ == "_BatchNorm")
    for module in root.modules():
        if isinstance(module, base):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def debug_unwrap(tensor: Any, *, recurse: bool = True) -> Any:
    """The physical tensor under a batched tensor (every level with ``recurse``), for debugging."""
    while tensor.__class__ is BatchedTensor:
        tensor = tensor._bt_value
        if not recurse:
            break
    return tensor
