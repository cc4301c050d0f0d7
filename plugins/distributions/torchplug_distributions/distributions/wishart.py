"""The Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
import warnings
from numbers import Number
from typing import Any

import torchplug as torch

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .lkj_cholesky import _mvlgamma
from .utils import lazy_property

__all__ = ["Wishart"]


def _mvdigamma(a: Any, p: int) -> Any:
    """The multivariate digamma function of dimension ``p``: the derivative of :func:`_mvlgamma`."""
    return sum(torch.digamma(a - j / 2) for j in range(p))


class Wishart(ExponentialFamily):
    """Wishart distribution of ``df`` degrees of freedom and scale matrix given by one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``; sampled by Bartlett's decomposition."""

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _expand_names = ("df", "covariance_matrix", "precision_matrix", "scale_tril")

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None, scale_tril: Any = None,
                 validate_args: bool | None = None) -> None:
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = next((n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                                ("precision_matrix", precision_matrix)) if m is not None)
        if param.dim() < 2:
            raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        if param.shape[-1] != param.shape[-2]:
            raise ValueError(f"{name} must be a batch of square matrices")
        if isinstance(df, Number):
            batch_shape = param.shape[:-2]
            df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + event_shape))
        self.df = df.expand(batch_shape)
        self.arg_constraints = {**type(self).arg_constraints, "df": constraints.greater_than(p - 1)}
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(torch.linalg.inv(precision_matrix))

    @property
    def _dist_chi2(self) -> Chi2:
        # Bartlett: the i-th diagonal entry of the factor is the square root of a chi2(df - i) draw
        p = self._event_shape[-1]
        offsets = torch.arange(p, dtype=self.df.dtype, device=self.df.device).expand(self._batch_shape + (-1,))
        return Chi2(self.df.unsqueeze(-1) - offsets)

    @lazy_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Any:
        return torch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self) -> Any:
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> Any:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, float("nan"), factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Any:
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any = torch.Size()) -> Any:
        p = self._event_shape[-1]
        noise = self._dist_chi2.rsample(sample_shape).sqrt().diag_embed(dim1=-2, dim2=-1)
        i, j = torch.tril_indices(p, p, offset=-1)
        below = torch.randn(torch.Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                            dtype=noise.dtype, device=noise.device)
        noise = _fill_below(noise, i, j, below)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.mT

    def rsample(self, sample_shape: Any = torch.Size(), max_try_correction: int | None = None) -> Any:
        """A reparameterised draw; draws that came out singular (rounding) are redrawn up to
        ``max_try_correction`` times (3 by default), with a warning."""
        max_try_correction = 3 if max_try_correction is None else max_try_correction
        sample_shape = torch.Size(sample_shape)
        # PyTorch 2.13's rsample flags its first draw as singular whatever it is (with a "Singular sample
        # detected." warning) and redraws it once; drawing twice and keeping the second keeps torch's stream
        self._bartlett_sampling(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = ~self.support.check(sample)
        if bool(is_singular.any()):
            warnings.warn("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(sample_shape)
                sample = torch.where(is_singular[..., None, None], sample_new, sample)
                is_singular = ~self.support.check(sample)
                if not bool(is_singular.any()):
                    break
            if bool(is_singular.any()):
                warnings.warn(f"Singular samples remain after {max_try_correction} redraws.")
        return sample

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = torch.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det) - _mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value)[1] - trace / 2)

    def entropy(self) -> Any:
        nu = self.df
        p = self._event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det) + _mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        p = self._event_shape[-1]
        return -(y + (p + 1) / 2) * torch.linalg.slogdet(-x)[1] + _mvlgamma(y + (p + 1) / 2, p)


def _fill_below(noise: Any, i: Any, j: Any, values: Any) -> Any:
    """``noise`` with ``values`` written at the strictly-lower positions ``(i, j)``."""
    noise = noise.clone()
    noise[..., i, j] = values
    return noise
