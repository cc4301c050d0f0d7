"""OpInfos of the samplers behind torch.distributions (``_schemas/sampling.py``): the draws compare shapes and
dtypes (the cpu values equal PyTorch's stream, which backends/cpu/tests/test_samplers.py checks); the two
reparameterisation gradients compare values within ATen's approximation error."""

from __future__ import annotations

from collections.abc import Iterator

from torchplug.testing.opinfo import OpInfo, SampleInput, T

__all__ = ["OPS"]

S = SampleInput
FLOAT = ("float32", "float64")
# ATen approximates both gradients (fitted series); torchplug computes the exact implicit derivative
APPROX = {"float32": (3e-3, 1e-5), "float64": (3e-3, 1e-8)}


def _concentration(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), low=0.1, high=5),), name="2d")
    yield S((T((3, 4), low=0.2, high=3, noncontig=True),), name="noncontig")
    yield S((T((0, 3), low=0.1, high=2),), name="empty")


def _binomial(dtype: str) -> Iterator[SampleInput]:
    count = T((2, 5), values=[[0, 3, 12, 40, 200], [7, 1, 25, 60, 5]])
    yield S((count, T((2, 5), low=0.05, high=0.95)), name="counts")
    yield S((count, T((5,), low=0.1, high=0.9)), name="broadcast_prob")


def _gamma_grad(dtype: str) -> Iterator[SampleInput]:
    yield S((T((3, 4), values=[[0.3, 0.8, 1.5, 2.0], [4.0, 9.0, 12.0, 0.5], [3.0, 20.0, 1.0, 6.0]]),
             T((3, 4), values=[[0.1, 0.6, 1.2, 3.0], [2.5, 8.0, 14.0, 0.05], [5.0, 18.0, 0.7, 1.5]])), name="regimes")


def _dirichlet_grad(dtype: str) -> Iterator[SampleInput]:
    x = T((2, 4), values=[[0.05, 0.3, 0.5, 0.7], [0.95, 0.2, 0.45, 0.8]])
    alpha = T((2, 4), values=[[0.5, 1.5, 2.0, 3.0], [8.0, 0.7, 4.0, 7.0]])
    total = T((2, 4), values=[[2.0, 3.0, 5.0, 4.0], [9.0, 3.5, 12.0, 15.0]])
    yield S((x, alpha, total), name="regimes")


OPS = [
    OpInfo("_standard_gamma", _concentration, dtypes=FLOAT, aten=("_standard_gamma",), random=True),
    OpInfo("_sample_dirichlet", _concentration, dtypes=FLOAT, aten=("_sample_dirichlet",), random=True),
    OpInfo("binomial", _binomial, dtypes=FLOAT, aten=("binomial",), random=True),
    OpInfo("_standard_gamma_grad", _gamma_grad, dtypes=FLOAT, aten=("_standard_gamma_grad",), tolerances=APPROX),
    OpInfo("_dirichlet_grad", _dirichlet_grad, dtypes=FLOAT, aten=("_dirichlet_grad",), tolerances=APPROX),
]
