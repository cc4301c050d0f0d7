"""The Dirichlet distribution."""

from __future__ import annotations

from typing import Any

import torchplug as torch

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _dirichlet_sample(concentration: Any) -> Any:
    """A Dirichlet draw whose gradient is the implicit reparameterisation one (``_dirichlet_grad``)."""
    return _DirichletSample.apply(concentration)


class _DirichletSample(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, concentration: Any) -> Any:
        x = torch._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        x, concentration = ctx.saved_tensors
        total = concentration.sum(-1, True).expand_as(concentration)
        grad = torch._dirichlet_grad(x, concentration, total)
        # the draw lives on the simplex: remove the component of the upstream gradient along it
        return grad * (grad_output - (x * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution on the simplex, of ``concentration`` (last dimension: the categories)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_names = ("concentration",)

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        return _dirichlet_sample(self.concentration.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration - 1.0, value).sum(-1) + torch.lgamma(self.concentration.sum(-1))
                - torch.lgamma(self.concentration).sum(-1))

    @property
    def mean(self) -> Any:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Any:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # where some concentration is below 1 the mode is that vertex of the simplex
        mask = (self.concentration < 1).all(dim=-1)
        vertex = torch.nn.functional.one_hot(self.concentration.argmax(dim=-1),
                                             concentrationm1.shape[-1]).to(mode)
        return torch.where(mask.unsqueeze(-1), vertex, mode)

    @property
    def variance(self) -> Any:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Any:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(a0) - (k - a0) * torch.digamma(a0)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Any:
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))
