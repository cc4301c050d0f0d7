"""``nn.utils.prune``: pruning a module's tensor by reparametrizing it as ``name_orig * name_mask``.

A pruning method is a forward pre-hook on the module: pruning ``name`` moves the parameter to
``name + "_orig"``, registers the mask as the buffer ``name + "_mask"`` and recomputes the plain
attribute ``name`` from the two before every forward.  Pruning the same tensor again combines the
methods in a :class:`PruningContainer`, the new method acting only on what is still unpruned.
:func:`remove` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from typing import Any, Iterable

import torchplug

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A pruning recipe: :meth:`compute_mask` says which entries to zero on top of a previous mask."""

    _tensor_name: str | None = None
    PRUNING_TYPE: str = "unstructured"

    def __call__(self, module: Any, inputs: Any) -> None:
        # Forward pre-hook: the pruned tensor is recomputed from the (trained) original every call.
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        """The mask for ``t`` (importance scores), respecting ``default_mask`` from earlier pruning."""

    def apply_mask(self, module: Any) -> Any:
        """``module.<name>_mask * module.<name>_orig``."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Any, name: str, *args: Any, importance_scores: Any = None, **kwargs: Any) -> Any:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)`` and hook it on the module."""
        method = _combined_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {orig.shape}")
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = torchplug.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=torchplug.contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # roll back: the module keeps its parameter as it was
                module.register_parameter(name, module._parameters.pop(name + "_orig"))
            raise
        return method

    def prune(self, t: Any, default_mask: Any = None, importance_scores: Any = None) -> Any:
        """``t`` with this method's mask applied (nothing is hooked on a module)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(f"importance_scores should have the same shape as tensor t, "
                                 f"got {importance_scores.shape} vs {t.shape}")
        default_mask = default_mask if default_mask is not None else torchplug.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Any) -> None:
        """Make the pruning permanent: ``name`` becomes a parameter again holding the pruned values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _combined_method(cls: type, module: Any, name: str, *args: Any, **kwargs: Any) -> BasePruningMethod:
    """The new method, or a container of the tensor's existing method(s) and the new one (its hook removed)."""
    old_keys = [k for k, hook in module._forward_pre_hooks.items()
                if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(old_keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    old = module._forward_pre_hooks.pop(old_keys[0]) if old_keys else None
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old, PruningContainer):
        old.add_pruning_method(method)
        return old
    if old is not None:
        container = PruningContainer(old)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The sequence of methods applied to one tensor; the last acts on the entries the others kept."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1 and isinstance(args[0], Iterable):
            for method in args[0]:
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must prune the same tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone(memory_format=torchplug.contiguous_format)
        if method.PRUNING_TYPE == "unstructured":
            slc = default_mask == 1  # only what is still unpruned is up for pruning
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim if method.dim >= 0 else t.dim() + method.dim
            keep = default_mask.sum(dim=[d for d in range(t.dim()) if d != dim]) != 0
            slc = [slice(None)] * t.dim()
            slc[dim] = keep
            slc = tuple(slc)
        elif method.PRUNING_TYPE == "global":
            slc = [slice(None)] * t.dim()
            slc = tuple(slc)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask is all ones): a reparametrization to build on."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        return default_mask

    @classmethod
    def apply(cls, module: Any, name: str) -> Any:  # type: ignore[override]
        return super().apply(module, name)


class _UnstructuredByScore(BasePruningMethod):
    """Prunes the ``amount`` entries (a count, or a fraction) that rank first by ``_scores``."""

    PRUNING_TYPE = "unstructured"
    _largest = True  # prune the entries of largest score (False: smallest)

    def __init__(self, amount: int | float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def _scores(self, t: Any) -> Any:
        raise NotImplementedError

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        n_prune = _amount_to_count(self.amount, t.nelement())
        _validate_amount(self.amount, t.nelement())
        mask = default_mask.clone(memory_format=torchplug.contiguous_format)
        if n_prune != 0:
            chosen = torchplug.topk(self._scores(t).view(-1), k=n_prune, largest=self._largest)
            mask.view(-1)[chosen.indices] = 0
        return mask


class RandomUnstructured(_UnstructuredByScore):
    """Prunes ``amount`` entries (a count, or a fraction) chosen at random."""

    def _scores(self, t: Any) -> Any:
        return torchplug.rand_like(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float) -> Any:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredByScore):
    """Prunes the ``amount`` entries of smallest absolute value."""

    _largest = False

    def _scores(self, t: Any) -> Any:
        return torchplug.abs(t)

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Any = None) -> Any:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        _validate_structured(t)
        _validate_dim(t, self.dim)
        channels = t.shape[self.dim]
        n_prune = _amount_to_count(self.amount, channels)
        _validate_amount(self.amount, channels)
        if n_prune == 0:
            return default_mask
        prob = torchplug.rand(channels)
        threshold = torchplug.kthvalue(prob, k=n_prune).values
        mask = _channel_mask(t, self.dim, prob > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, dim: int = -1) -> Any:  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        _validate_structured(t)
        _validate_dim(t, self.dim)
        channels = t.shape[self.dim]
        n_prune = _amount_to_count(self.amount, channels)
        _validate_amount(self.amount, channels)
        if n_prune == 0:
            return default_mask
        dim = self.dim if self.dim >= 0 else t.dim() + self.dim
        norm = torchplug.norm(t, p=self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = torchplug.topk(norm, k=channels - n_prune, largest=True).indices
        mask = _channel_mask(t, dim, keep)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Any, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Any = None) -> Any:
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given ``mask`` is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Any) -> None:
        self.mask = mask

    def compute_mask(self, t: Any, default_mask: Any) -> Any:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} does not match mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Any, name: str, mask: Any) -> Any:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def _channel_mask(t: Any, dim: int, channels: Any) -> Any:
    """Ones on the selected channels (a bool mask or indices along ``dim``), zeros elsewhere."""
    mask = torchplug.zeros_like(t)
    index = [slice(None)] * t.dim()
    index[dim] = channels
    mask[tuple(index)] = 1
    return mask


def _validate_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_amount(amount: Any, size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")


def _amount_to_count(amount: Any, size: int) -> int:
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * size)


def _validate_structured(t: Any) -> None:
    if len(t.shape) <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {len(t.shape)} dims")


def _validate_dim(t: Any, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def identity(module: Any, name: str) -> Any:
    """Reparametrize ``module.<name>`` with an all-ones mask; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Any, name: str, amount: int | float) -> Any:
    """Prune ``amount`` random entries of ``module.<name>``; returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Any, name: str, amount: int | float, importance_scores: Any = None) -> Any:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude; returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Any, name: str, amount: int | float, dim: int) -> Any:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``; returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Any, name: str, amount: int | float, n: Any, dim: int, importance_scores: Any = None) -> Any:
    """Prune the ``amount`` channels along ``dim`` of smallest L``n`` norm; returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Any, str]], pruning_method: Any,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the ``(module, name)`` tensors together, as one vector, with an unstructured method."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = torchplug.cat([importance_scores.get((module, name), getattr(module, name)).reshape(-1)
                            for module, name in parameters])
    default_mask = torchplug.cat([getattr(module, name + "_mask", torchplug.ones_like(getattr(module, name))).reshape(-1)
                                  for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[start:start + count].view_as(param))
        start += count


def custom_from_mask(module: Any, name: str, mask: Any) -> Any:
    """Prune ``module.<name>`` where ``mask`` is zero; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Any, name: str) -> Any:
    """Make the pruning of ``module.<name>`` permanent and drop its reparametrization; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Any) -> bool:
    """Whether ``module`` or any submodule carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())
