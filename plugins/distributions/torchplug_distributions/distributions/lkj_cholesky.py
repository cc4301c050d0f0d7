"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import Any

import torchplug as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


def _mvlgamma(a: Any, p: int) -> Any:
    """The multivariate log-gamma function of dimension ``p``."""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(torch.lgamma(a - j / 2) for j in range(p))


class LKJCholesky(Distribution):
    """Lower Cholesky factors ``L`` of ``dim`` x ``dim`` correlation matrices with density proportional to
    ``det(L L^T) ** (concentration - 1)``; sampled by the onion method (Lewandowski, Kurowicka and Joe, 2009):
    row ``i`` is a uniform direction scaled by the square root of a Beta draw."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        # row i's squared off-diagonal norm is Beta(i / 2, concentration + (dim - 2 - i) / 2) (row 0: unused)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> "LKJCholesky":
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = torch.Size()) -> Any:
        y = self._beta.sample(sample_shape).unsqueeze(-1)  # the Beta draws come first
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere = torch.cat([torch.zeros_like(u_hypersphere[..., :1, :]), u_hypersphere[..., 1:, :]], -2)
        w = torch.sqrt(y) * u_hypersphere
        tiny = torch.finfo(w.dtype).tiny
        diag_elems = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=tiny).sqrt()
        return w + torch.diag_embed(diag_elems)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = torch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = torch.lgamma(alpha) * dm1
        numerator = _mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
