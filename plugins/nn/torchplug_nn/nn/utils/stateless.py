"""``nn.utils.stateless.functional_call``: call a module with some parameters and buffers replaced."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from torchplug._tensor.tensor import Tensor

from ..modules.module import Module

__all__ = ["functional_call"]

_MISSING = object()


def _owner(module: Module, name: str) -> tuple[Module, str]:
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module: Module, name: str, value: Any) -> Any:
    """Put ``value`` in place of ``module.<name>`` (registered as the same kind of member); return the old one."""
    owner, attr = _owner(module, name)
    if attr in owner._parameters:
        old = owner._parameters[attr]
        if value is _MISSING:
            del owner._parameters[attr]
        else:
            owner._parameters[attr] = value  # any tensor, as PyTorch's accessor (no Parameter type check)
    elif attr in owner._buffers:
        old = owner._buffers[attr]
        if value is _MISSING:
            del owner._buffers[attr]
        else:
            owner._buffers[attr] = value
    else:
        old = owner.__dict__.get(attr, _MISSING)
        if value is _MISSING:
            owner.__dict__.pop(attr, None)
        else:
            object.__setattr__(owner, attr, value)
    return old


def _untie(module: Module, given: dict[str, Tensor]) -> dict[str, Tensor]:
    # A value given for one name of a tied tensor (shared by several names) replaces it under every name.
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    groups: dict[int, set[str]] = {}
    for name, tensor in named.items():
        groups.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in groups.values() if len(names) > 1 for name in names}
    result = dict(given)
    for name in given:
        if name not in tied:
            continue
        names = tied[name]
        values = {id(given[n]) for n in names if n in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
        for other in names:
            result[other] = given[name]
    return result


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor], tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    values = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        existing = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        existing |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(existing - set(values))
        unexpected = sorted(set(values) - existing)
        error_msgs = []
        if unexpected:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(error_msgs)))
    originals: dict[str, Any] = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(originals.items())):
            _swap(module, name, old)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the named parameters/buffers replaced by the given tensors for the call.

    Deprecated in PyTorch (a FutureWarning) in favour of ``torch.func.functional_call``.
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    from ..modules.data_parallel import DataParallel

    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
