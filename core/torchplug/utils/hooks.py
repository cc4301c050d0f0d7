"""``torchplug.utils.hooks``: the handle every ``register_*_hook`` returns, and the hook-serialization helpers
(PyTorch's ``torch.utils.hooks``). ``torchplug.nn``'s module and optimizer hooks use this ``RemovableHandle``."""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from typing import Any

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """Removes a hook: ``handle.remove()`` (or leaving ``with handle:``) deletes key ``handle.id`` from
    ``hooks_dict`` and from each ``extra_dict`` (a dict or a list of dicts). The dicts are held weakly;
    pickling keeps them (and the id)."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict: Any, *, extra_dict: Any = None) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref: tuple = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        """Delete the hook (a no-op when it is gone already)."""
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None and self.id in hooks_dict:
            del hooks_dict[self.id]
        for ref in self.extra_dict_ref:
            extra_dict = ref()
            if extra_dict is not None and self.id in extra_dict:
                del extra_dict[self.id]

    def __getstate__(self) -> tuple:
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state: tuple) -> None:
        # a dict that did not survive pickling becomes a dead reference, as in PyTorch
        self.hooks_dict_ref = weakref.ref(OrderedDict()) if state[0] is None else weakref.ref(state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        if len(state) < 3 or state[2] is None:
            self.extra_dict_ref = ()
        else:
            self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2])

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        self.remove()


def unserializable_hook(f: Any) -> Any:
    """Mark ``f`` as a hook that is not meant to be serialized: :func:`warn_if_has_hooks` stays silent about it."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor: Any) -> dict:
    # PyTorch keeps them in ``_backward_hooks``; the autograd plugin keeps a leaf's in its ``_hooks`` table
    hooks = getattr(tensor, "_backward_hooks", None)
    if hooks is None:
        hooks = getattr(tensor, "__dict__", {}).get("_hooks")
    return hooks or {}


def warn_if_has_hooks(tensor: Any) -> None:
    """Warn about each backward hook on ``tensor`` that serialization will drop (unless marked with
    :func:`unserializable_hook`)."""
    hooks = _tensor_hooks(tensor)
    for k in hooks:
        hook = hooks[k]
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {repr(hook)} on tensor will not be serialized.  If this is expected, "
                          "you can decorate the function with @torch.utils.hooks.unserializable_hook to suppress "
                          "this warning", stacklevel=2)
