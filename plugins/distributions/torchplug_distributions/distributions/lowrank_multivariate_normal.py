"""The multivariate normal with a low-rank-plus-diagonal covariance."""

from __future__ import annotations

import math
from typing import Any

import torchplug as torch

from . import constraints
from ._linalg import batch_mv, solve_lower
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal of covariance ``cov_factor @ cov_factor.T + diag(cov_diag)``; densities use the
    Woodbury identity and the capacitance matrix ``I + W^T D^-1 W`` (rank x rank) instead of the full matrix."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _expand_names = ("loc", "cov_factor", "cov_diag", "scale_tril", "covariance_matrix", "precision_matrix")

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        loc_, self.cov_factor, cov_diag_ = torch.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                   cov_diag.unsqueeze(-1))
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)

    @staticmethod
    def _capacitance(W: Any, D: Any) -> Any:
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        K = torch.matmul(Wt_Dinv, W)
        K = K + torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        return torch.linalg.cholesky(K)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Any:
        W = self._unbroadcasted_cov_factor
        cov = W @ W.mT + torch.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        W = self._unbroadcasted_cov_factor
        cov = W @ W.mT + torch.diag_embed(self._unbroadcasted_cov_diag)
        return torch.linalg.cholesky(cov).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Any:
        # Woodbury: D^-1 - D^-1 W K^-1 W^T D^-1, with K = C C^T
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        A = solve_lower(self._capacitance_tril, Wt_Dinv)
        precision = torch.diag_embed(D.reciprocal()) - A.mT @ A
        return precision.expand(self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape: Any = torch.Size()) -> Any:
        shape = self._extended_shape(sample_shape)
        W_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_W = _standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self) -> Any:
        return (2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                + self._unbroadcasted_cov_diag.log().sum(-1))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D, C = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, self._capacitance_tril
        # Woodbury: x^T D^-1 x - |C^-1 W^T D^-1 x|^2
        Wt_Dinv_x = batch_mv(W.mT, diff / D)
        batch = torch.broadcast_shapes(C.shape[:-2], Wt_Dinv_x.shape[:-1])
        r = C.shape[-1]
        v = solve_lower(C.expand(batch + (r, r)), Wt_Dinv_x.expand(batch + (r,)).unsqueeze(-1)).squeeze(-1)
        M = (diff.pow(2) / D).sum(-1) - v.pow(2).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self) -> Any:
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
