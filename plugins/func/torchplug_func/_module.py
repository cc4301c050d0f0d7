"""``functional_call`` and ``stack_module_state``: modules as functions of their parameters and buffers."""

from __future__ import annotations

from typing import Any

import torchplug

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: dict[str, Any] | None = None,
                    *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with its parameters and buffers replaced by the given tensors for the call,
    as ``torch.func.functional_call`` (``parameter_and_buffer_dicts``: a dict, or a sequence of dicts merged)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    # the nn plugin's reparametrization (torch.func uses torch.nn.utils.stateless's the same way)
    reparametrize = torchplug.nn.utils.stateless._reparametrize_module
    with reparametrize(module, merged, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _stack_leaf(tensors: tuple[Any, ...], name: str) -> Any:
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = torchplug.stack(tensors)
    if flags == {True}:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters and buffers of same-class ``models`` stacked along a new leading dim, as
    ``torch.func.stack_module_state`` (for ensembling with ``vmap`` and ``functional_call``)."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stack_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stack_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
