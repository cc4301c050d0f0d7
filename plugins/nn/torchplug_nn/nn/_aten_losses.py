"""The losses torch also has at the top level (``torch.cosine_embedding_loss``, ``torch.ctc_loss``...): ATen's
operators, whose ``reduction`` is an int (0 none, 1 mean, 2 sum) rather than ``nn.functional``'s string.

They reuse ``nn.functional``'s implementations.  torch 2.13's Python bindings of these operators do not apply
the schema's ``reduction=Mean`` default: called without ``reduction`` they return the unreduced losses, and any
value other than 1 or 2 means none (ATen's ``apply_loss_reduction``); both are kept here.  The nn plugin exposes
them as ``torchplug.<name>``.
"""

from __future__ import annotations

from typing import Any

from torchplug._tensor.tensor import Tensor

from . import _ctc, _functional_losses as L

__all__ = ["cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss",
           "poisson_nll_loss", "ctc_loss"]

_NAMES = {1: "mean", 2: "sum"}


def _reduction(op: str, reduction: Any) -> str:
    """The ``nn.functional`` name of an ATen reduction enum, with the binding's type check."""
    if reduction.__class__ is not int:
        raise TypeError(f"{op}(): argument 'reduction' must be int, not {type(reduction).__name__}")
    return _NAMES.get(reduction, "none")


def _reduce(loss: Tensor, name: str) -> Tensor:
    return loss.mean() if name == "mean" else loss.sum() if name == "sum" else loss


def _float(op: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}(): argument '{name}' must be float, not {type(value).__name__}")
    return float(value)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where ``target == -1``."""
    name = _reduction("cosine_embedding_loss", reduction)
    return L.cosine_embedding_loss(input1, input2, target, _float("cosine_embedding_loss", "margin", margin),
                                   reduction=name)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``.  Unlike ``nn.functional``'s, ATen's operator does not
    require the three to have the same number of dims: they broadcast."""
    name = _reduction("margin_ranking_loss", reduction)
    loss = (-target * (input1 - input2) + _float("margin_ranking_loss", "margin", margin)).clamp_min(0)
    return _reduce(loss, name)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    name = _reduction("hinge_embedding_loss", reduction)
    return L.hinge_embedding_loss(input, target, _float("hinge_embedding_loss", "margin", margin), reduction=name)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the p-norm pairwise distance.  Unlike
    ``nn.functional``'s, ATen's operator accepts any margin."""
    name = _reduction("triplet_margin_loss", reduction)
    margin = _float("triplet_margin_loss", "margin", margin)
    if margin > 0:
        return L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=name)
    # the functional form refuses margin <= 0 (a Python-level check ATen does not have): the same formula here
    L._triplet_dims(anchor, positive, negative)
    from torchplug._ops.nn_functional import pairwise_distance

    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), name)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """Poisson negative log likelihood (``exp(input) - target * input`` for ``log_input``); every argument is
    required, as in ATen's schema."""
    name = _reduction("poisson_nll_loss", reduction)
    return L.poisson_nll_loss(input, target, log_input, full, eps=_float("poisson_nll_loss", "eps", eps),
                              reduction=name)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification loss (lengths as int lists or tensors); mean divides each
    sequence's loss by its target length, as ``nn.functional.ctc_loss``."""
    name = _reduction("ctc_loss", reduction)
    return _ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, name, zero_infinity)
