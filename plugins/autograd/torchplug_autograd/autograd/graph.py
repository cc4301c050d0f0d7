"""``torchplug.autograd.graph``: the Node type, gradient edges and saved-tensor hooks."""

from __future__ import annotations

from typing import Any, NamedTuple

from torchplug._tensor.tensor import Tensor

from torchplug_autograd import _graph as G
from torchplug_autograd import _views as V
from torchplug_autograd._state import GLOBAL, STATE

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "increment_version", "register_multi_grad_hook"]

Node = G.Node


class GradientEdge(NamedTuple):
    """Where a tensor's gradient flows: a node and which of its outputs."""

    node: Any
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = V.gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor: Any) -> None:
    """Bump the version counter (as an in-place op would)."""
    for t in ([tensor] if isinstance(tensor, Tensor) else tensor):
        t._storage.version += 1


class saved_tensors_hooks:
    """Transform every tensor autograd saves: ``pack_hook(tensor) -> obj`` when saved,
    ``unpack_hook(obj) -> tensor`` when backward needs it (thread-local, nestable)."""

    def __init__(self, pack_hook: Any, unpack_hook: Any) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if getattr(STATE, "saved_hooks_disabled", None):
            raise RuntimeError(STATE.saved_hooks_disabled)
        with GLOBAL.lock:
            GLOBAL.saved_hooks_live += 1
        STATE.saved_hooks = STATE.saved_hooks + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc: Any) -> None:
        STATE.saved_hooks = STATE.saved_hooks[:-1]
        with GLOBAL.lock:
            GLOBAL.saved_hooks_live -= 1


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in host memory until backward needs them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Tensor) -> Any:
            return (t.device, t.cpu() if not t.is_cpu else t)

        def unpack(packed: Any) -> Tensor:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Make ``saved_tensors_hooks`` raise ``error_message`` inside the block."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._prev = getattr(STATE, "saved_hooks_disabled", None)
        STATE.saved_hooks_disabled = self.error_message

    def __exit__(self, *exc: Any) -> None:
        STATE.saved_hooks_disabled = self._prev


def register_multi_grad_hook(tensors: Any, fn: Any, *, mode: str = "all") -> Any:
    """Call ``fn(grads)`` once the gradients of all ``tensors`` that take part in backward are computed."""
    tensors = list(tensors)
    grads: list[Any] = [None] * len(tensors)
    state = {"count": 0}
    handles = []

    def make(i: int) -> Any:
        def hook(g: Any) -> None:
            if mode == "any":
                fn(g)
                return
            grads[i] = g
            state["count"] += 1
            if state["count"] == sum(1 for t in tensors if t.requires_grad):
                fn(tuple(grads))
                state["count"] = 0
                grads[:] = [None] * len(tensors)

        return hook

    for i, t in enumerate(tensors):
        if t.requires_grad:
            handles.append(t.register_hook(make(i)))

    class _Handle:
        def remove(self) -> None:
            for h in handles:
                h.remove()

    return _Handle()
