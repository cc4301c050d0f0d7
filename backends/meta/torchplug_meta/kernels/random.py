"""meta kernels for random ops: argument checks and result metadata; no numbers are drawn."""

from __future__ import annotations

from typing import Any

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")


@TABLE.impl("aten::uniform_")
def uniform_(self: C.Tensor, from_: float = 0.0, to: float = 1.0, generator: Any = None) -> C.Tensor:
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    return self


@TABLE.impl("aten::normal_")
def normal_(self: C.Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> C.Tensor:
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return self


@TABLE.impl("aten::random_.from")
def random_(self: C.Tensor, from_: int, to: int | None = None, generator: Any = None) -> C.Tensor:
    if to is not None and from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return self


@TABLE.impl("aten::random_")
def random_default(self: C.Tensor, generator: Any = None) -> C.Tensor:
    return self


@TABLE.impl("aten::bernoulli")
def bernoulli(self: C.Tensor, generator: Any = None) -> C.Tensor:
    return C.new(C.shape(self), self._dtype)  # contiguous, as torch's meta bernoulli


@TABLE.impl("aten::bernoulli_.float")
def bernoulli_(self: C.Tensor, p: float = 0.5, generator: Any = None) -> C.Tensor:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return self


@TABLE.impl("aten::bernoulli_.Tensor")
def bernoulli_tensor_(self: C.Tensor, p: C.Tensor, generator: Any = None) -> C.Tensor:
    return self


@TABLE.impl("aten::bernoulli.p")
def bernoulli_p(self: C.Tensor, p: float, generator: Any = None) -> C.Tensor:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::multinomial")
def multinomial(self: C.Tensor, num_samples: int, replacement: bool = False, generator: Any = None) -> C.Tensor:
    if D.category(self._dtype) != 2:
        raise RuntimeError(
            f"multinomial only supports floating-point dtypes for input, got: {C.scalar_type_name(self._dtype)}"
        )
    if self.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > C.shape(self)[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    size = (num_samples,) if self.dim() == 1 else (C.shape(self)[0], num_samples)
    return C.new(size, D.int64)


def _floating(op: str, self: C.Tensor) -> None:
    if D.category(self._dtype) != 2:
        raise RuntimeError(f"{op} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {C.scalar_type_name(self._dtype)}")


@TABLE.impl("aten::exponential_")
def exponential_(self: C.Tensor, lambd: float = 1.0, generator: Any = None) -> C.Tensor:
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _floating("Exponential", self)
    return self


@TABLE.impl("aten::geometric_")
def geometric_(self: C.Tensor, p: float, generator: Any = None) -> C.Tensor:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return self


@TABLE.impl("aten::log_normal_")
def log_normal_(self: C.Tensor, mean: float = 1.0, std: float = 2.0, generator: Any = None) -> C.Tensor:
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return self


@TABLE.impl("aten::cauchy_")
def cauchy_(self: C.Tensor, median: float = 0.0, sigma: float = 1.0, generator: Any = None) -> C.Tensor:
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _floating("Cauchy", self)
    return self


@TABLE.impl("aten::poisson")
def poisson(self: C.Tensor, generator: Any = None) -> C.Tensor:
    return C.new_like(self)  # torch's meta poisson keeps the input's layout (its cpu kernel does not)


def _sampler_dtype(op: str, dtype: Any) -> None:
    if dtype.name not in ("float32", "float64"):  # AT_DISPATCH_FLOATING_TYPES, as the cpu kernels
        raise NotImplementedError(f'"{op}" not implemented for \'{C.scalar_type_name(dtype)}\'')


@TABLE.impl("aten::_standard_gamma")
def _standard_gamma(self: C.Tensor, generator: Any = None) -> C.Tensor:
    _sampler_dtype("gamma_cpu", self._dtype)
    return C.new_like(self)  # torch's meta kernel keeps the input's layout


@TABLE.impl("aten::_sample_dirichlet")
def _sample_dirichlet(self: C.Tensor, generator: Any = None) -> C.Tensor:
    _sampler_dtype("dirichlet", self._dtype)
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::binomial")
def binomial(count: C.Tensor, prob: C.Tensor, generator: Any = None) -> C.Tensor:
    _sampler_dtype("binomial_cpu", count._dtype)
    return C.new(C.shape(count), count._dtype)


@TABLE.impl("aten::_standard_gamma_grad")
def _standard_gamma_grad(self: C.Tensor, output: C.Tensor) -> C.Tensor:
    _sampler_dtype("_standard_gamma_grad_cpu", self._dtype)
    return C.new(C.shape(self), self._dtype)


@TABLE.impl("aten::_dirichlet_grad")
def _dirichlet_grad(x: C.Tensor, alpha: C.Tensor, total: C.Tensor) -> C.Tensor:
    _sampler_dtype("_dirichlet_grad_cpu", x._dtype)
    return C.new(C.shape(x), x._dtype)
