"""The documented divergences from torch the fuzz suite tolerates: each with a reason and a torch reference.

torch answers that vary with its CPU dispatch level (gelu(+inf)) are corrected before comparing, in
:mod:`torchplug.testing.reference_quirks` (shared with the conformance suite), not listed here.

Two kinds of entry:

- ``known_defect=True``: an open torchplug defect that is being fixed; the entry goes when the fix
  lands (the fuzz report lists entries that no longer match anything).
- ``known_defect=False``: a deliberate, documented divergence or a torch value that is not a
  reliable reference (it varies with torch's CPU dispatch level).

An entry matches an outcome by op name, category, the beginning of torch's and/or torchplug's
error (``"RuntimeError: unsupported operation"``) and an optional predicate over the case.
Keep the list small and each entry precise: a broad entry hides new defects.
"""

from __future__ import annotations

import cmath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torchplug.testing.fuzz._spec import Call

__all__ = ["Allowance", "ALLOWED"]


@dataclass(frozen=True)
class Allowance:
    """One tolerated divergence.

    Args:
        id: short unique name (shown in reports).
        ops: the fuzz op names it applies to.
        categories: among ``silent_accept``, ``type_mismatch``, ``torchplug_only_raise``, ``value_mismatch``.
        reason: what differs and why it is tolerated.
        reference: where torch documents or implements its behaviour.
        known_defect: an open torchplug defect (remove the entry once fixed).
        torch_error: torch's error must start with this (``"IndexError: index"``).
        ours_error: torchplug's error must start with this.
        detail: the outcome's detail must contain this.
        ours_error/torch_error/detail may be tuples: any of them.
        when: a predicate over the case.
        devices: devices it applies to (None: all).
    """

    id: str
    ops: tuple[str, ...]
    categories: tuple[str, ...]
    reason: str
    reference: str
    known_defect: bool = False
    torch_error: str | tuple[str, ...] | None = None
    ours_error: str | tuple[str, ...] | None = None
    detail: str | tuple[str, ...] | None = None
    when: Callable[[Call], bool] | None = None
    devices: tuple[str, ...] | None = None

    def matches(self, op: str, outcome: Any, call: Call, device: str) -> bool:
        """True if this entry covers ``outcome`` (of ``call`` to ``op`` on ``device``)."""
        return (op in self.ops and outcome.category in self.categories
                and (self.devices is None or device in self.devices)
                and (self.torch_error is None or outcome.torch_error.startswith(self.torch_error))
                and (self.ours_error is None or outcome.ours_error.startswith(self.ours_error))
                and (self.detail is None or any(d in outcome.detail for d in _tuple(self.detail)))
                and (self.when is None or bool(self.when(call))))


def _tuple(x: str | tuple[str, ...]) -> tuple[str, ...]:
    return x if isinstance(x, tuple) else (x,)


def _nonfinite(call: Call) -> bool:
    """The case's tensors hold nan/inf."""
    return any(t.special for t in call.tensors())


def _complex_nonfinite(call: Call) -> bool:
    """Complex tensors meet a nan/inf (a Python scalar or a tensor's value)."""
    numbers = [v for v in (*call.args, *call.kwargs.values()) if isinstance(v, (float, complex))]
    return any(t.dtype.startswith("complex") for t in call.tensors()) and (
        _nonfinite(call) or any(not cmath.isfinite(v) for v in numbers))


_BINARY_AND_POW = ("add", "sub", "mul", "div", "pow", "where", "Tensor.add_", "Tensor.mul_", "Tensor.div_", "eq")
NUMERICAL_ACCURACY = "https://pytorch.org/docs/stable/notes/numerical_accuracy.html"

ALLOWED: list[Allowance] = [
    # ---- permanent: deliberate divergences, and torch answers that are no reliable reference -----------------
    Allowance(
        "gemm-nonfinite", ("conv1d", "conv2d", "linear", "matmul", "mm", "bmm"), ("value_mismatch",),
        "nan/inf through a matrix product: torch's BLAS/oneDNN kernels give no nan/inf propagation contract "
        "(which products a kernel skips or reorders decides between inf and nan)",
        f"{NUMERICAL_ACCURACY} (Extremal values; Non-finite values)", when=_nonfinite),
    Allowance(
        "complex-nonfinite", ("add", "sub", "mul", "div", "Tensor.add_", "Tensor.mul_", "Tensor.div_", "pow", "sum",
                              "mean", "prod", "cumsum", "cumprod", "matmul", "mm", "bmm"), ("value_mismatch",),
        "complex arithmetic meeting nan/inf: torch's vectorized and scalar complex kernels differ among themselves "
        "((inf+0j) * (1+0j) is inf+nanj in one, inf+0j in the other)", f"{NUMERICAL_ACCURACY} (Extremal values)",
        when=_complex_nonfinite),
    Allowance(
        "no-complex32", tuple(_BINARY_AND_POW), ("value_mismatch",),
        "torchplug has no complex32: float16 meeting a complex number promotes to complex64 (torch: complex32, "
        "whose support torch calls experimental)",
        "torch warns 'ComplexHalf support is experimental'; torchplug/_dtype.py promote_types",
        detail="dtype complex64 != torch's complex32"),
    Allowance(
        "var-empty-dims-grad", ("var", "std"), ("value_mismatch",),
        "torch's var/std(dim=()) reduce over every dim forward but their backward treats () as no dim (n = 1, "
        "so nan/inf gradients); torchplug's gradient is the one of the forward it computed",
        "torch 2.13: torch.var(torch.tensor([[1., 2., 3.]], requires_grad=True), dim=()).backward() gives "
        "[-inf, nan, inf]; with dim=None it gives [-1, 0, 1]",
        detail="grad", when=lambda call: call.kwargs.get("dim") == ()),
    Allowance(
        "logsumexp-empty-dims", ("logsumexp",), ("silent_accept",),
        "torch's logsumexp(x, dim=()) fails inside its own kernel (its all-dims result meets the keepdim-shaped "
        "maximum it subtracts); torchplug returns the logsumexp over all dims, as sum/amax do for dim=()",
        "torch 2.13: torch.logsumexp(torch.ones(1, 3), dim=()) raises RuntimeError 'output with shape [] doesn't "
        "match the broadcast shape [1, 1]'; torch.sum(torch.ones(1, 3), dim=()) reduces every dim",
        torch_error="RuntimeError: output with shape [] doesn't match the broadcast shape",
        when=lambda call: call.kwargs.get("dim") == ()),
    # ---- open defects (known_defect=True, each removed with its fix): none open ------------------------------
]
