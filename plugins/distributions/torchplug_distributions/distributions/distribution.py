"""The ``Distribution`` base class: shapes, argument validation, sampling entry points, default statistics."""

from __future__ import annotations

import warnings
from typing import Any

import torchplug as torch

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


def _show(value: Any) -> str:
    """How error messages and reprs print a parameter: a 0-d tensor as its number."""
    return str(value.item()) if value.dim() == 0 else str(value)


class Distribution:
    """Abstract base class for probability distributions.

    ``batch_shape`` indexes independent distributions, ``event_shape`` is the shape of one draw.
    Subclasses set ``arg_constraints`` and ``support`` and implement what they can of
    ``rsample``/``sample``, ``log_prob``, ``cdf``, ``icdf``, ``entropy``, ``enumerate_support`` and the moments.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on (the default) or off for distributions created afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = torch.Size(), event_shape: Any = torch.Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # skip constraints that cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # skip the parameterisation not given (probs vs logits)
            value = getattr(self, param)
            valid = constraint.check(value)
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter {param} (Tensor of shape {tuple(value.shape)}) of distribution {self!r} "
                    f"to satisfy the constraint {constraint!r}, but found invalid values:\n{_show(value)}")

    #: the tensor attributes whose leading dims are the batch shape; ``expand`` expands them (a subclass
    #: listing them gets ``expand`` for free)
    _expand_names: tuple = ()

    def expand(self, batch_shape: Any, _instance: Any = None) -> "Distribution":
        """A new distribution of this kind with its batch dimensions expanded to ``batch_shape`` (no copy)."""
        owner = next((c for c in type(self).__mro__ if "_expand_names" in c.__dict__), None)
        if owner is None or owner is Distribution:
            raise NotImplementedError(f"{type(self).__name__} does not implement expand")
        new = self._get_checked_instance(owner, _instance)
        batch_shape = torch.Size(batch_shape)
        new.__dict__.update(self.__dict__)
        n = len(self._batch_shape)
        for name in self._expand_names:
            value = self.__dict__.get(name)
            if isinstance(value, torch.Tensor):
                new.__dict__[name] = value.expand(batch_shape + value.shape[n:])
        new._batch_shape = batch_shape
        return new

    def _get_checked_instance(self, cls: type, _instance: Any) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    @property
    def batch_shape(self) -> Any:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def mean(self) -> Any:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self) -> Any:
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Any:
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self) -> Any:
        """The standard deviation of the distribution."""
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = torch.Size()) -> Any:
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = torch.Size()) -> Any:
        """A reparameterised sample (gradients flow to the parameters)."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Any:
        """Deprecated: ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value: Any) -> Any:
        """The log of the probability density/mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Any) -> Any:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Any:
        """All values of a discrete support, along a new leading dimension."""
        raise NotImplementedError

    def entropy(self) -> Any:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Any:
        """``exp(entropy)``."""
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = torch.Size()) -> Any:
        """``sample_shape + batch_shape + event_shape``."""
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Any) -> None:
        """Raise ValueError if ``value`` is not a tensor of a compatible shape inside the support."""
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape, expected_shape = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{_show(value)}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self._repr_param(self.__dict__[p])}" for p in names)
        return f"{self.__class__.__name__}({args})"

    @staticmethod
    def _repr_param(value: Any) -> str:
        if value.dim() == 0:
            return str(value.item())
        return str(value) if value.numel() == 1 else str(value.size())
