"""Rows for the samplers torch.distributions builds on: gamma, Dirichlet and binomial draws and the
reparameterisation gradients of the first two (``torch._standard_gamma`` & co.).

The samplers are backend primitives (the cpu backend draws from PyTorch's mt19937 stream); the two
gradients are pointwise backend primitives too, as in ATen.
"""

from __future__ import annotations

__all__ = ["ROWS"]

ROWS = (
    "_standard_gamma(Tensor self, Generator? generator=None) -> Tensor | random",
    "_sample_dirichlet(Tensor self, Generator? generator=None) -> Tensor | random",
    "binomial(Tensor count, Tensor prob, Generator? generator=None) -> Tensor | random",
    "_standard_gamma_grad(Tensor self, Tensor output) -> Tensor",
    "_dirichlet_grad(Tensor x, Tensor alpha, Tensor total) -> Tensor",
)
