"""``torch.cond`` and ``torch.while_loop`` in eager mode: the branch (or the loop) runs as ordinary Python on the
operands, as PyTorch's higher-order ops do outside tracing (torchplug does not trace), so autograd records the
ops the taken branch ran."""

from __future__ import annotations

from typing import Any

from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def _truth(pred: Any, what: str) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred}.")
        return bool(pred.item())
    if not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected {what} to be bool or single-element tensor, but got {pred}.")
    return bool(pred)


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = (), **kwargs: Any) -> Any:
    """``true_fn(*operands)`` if ``pred`` (a bool or one-element tensor) is true, else ``false_fn(*operands)``."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only consists of "
                           f"tensor leaves, but got {operands}.")
    return (true_fn if _truth(pred, "pred") else false_fn)(*operands)


def while_loop(cond_fn: Any, body_fn: Any, carried_inputs: Any) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` is true; returns the final ``carried``
    (a tuple of the same structure)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "cond_fn's output"):
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as carried_inputs: expected "
                               f"{len(carried)}, got {len(out)}")
        carried = out
    return carried


FUNCTIONS: dict[str, Any] = {"cond": cond, "while_loop": while_loop}
METHODS: dict[str, Any] = {}
