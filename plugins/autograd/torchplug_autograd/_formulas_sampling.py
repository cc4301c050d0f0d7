"""Derivative formulas of ``_schemas/sampling.py``'s samplers, as PyTorch's derivatives.yaml writes them:
``_standard_gamma`` is reparameterised through ``_standard_gamma_grad``; the others have no derivative
(torch.distributions differentiates Dirichlet samples with its own autograd Function)."""

from __future__ import annotations

import torchplug as T

from ._rules import rule

__all__: list[str] = []


@rule("_standard_gamma", saves="self, result")
def _standard_gamma(n, g, self, result):
    return (g * T._standard_gamma_grad(self, result),)


def _not_implemented(op: str):
    def formula(n, g, *saved):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    return formula


rule("_sample_dirichlet", inputs="self", name="NotImplemented")(_not_implemented("_sample_dirichlet"))
rule("_dirichlet_grad", inputs="x, alpha, total", name="NotImplemented")(_not_implemented("_dirichlet_grad"))
rule("binomial", inputs="count, prob", name="NotImplemented")(_not_implemented("binomial"))


@rule("_standard_gamma_grad", saves="", inputs="self")  # output: not differentiable (no edge), as in torch
def _standard_gamma_grad(n, g):
    raise NotImplementedError("the derivative for '_standard_gamma_grad' is not implemented.")
