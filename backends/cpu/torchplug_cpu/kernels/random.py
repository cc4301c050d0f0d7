"""cpu kernels: random sampling in place, ``bernoulli``, ``multinomial`` and ``poisson``.

Each kernel draws from the ``torchplug.Generator`` passed (or the default one) through
:mod:`torchplug_cpu._stream`, consuming the mt19937 stream exactly as ATen's CPU kernel for the op
does (the same words per element, the same element order, the same size and dtype paths), so
after the same seed the values equal PyTorch's bit for bit.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from torchplug._ops import composites as CP
from torchplug._ops import composites_complex as CX
from torchplug._base import dtype as D
from torchplug.library import KernelTable
from torchplug_cpu import _stream as S

from .core import check_internal_overlap, fresh

H = S.np  # NumPy itself for host-side work, also where ``np`` is another array namespace

TABLE = KernelTable("CPU")

_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_C_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
    "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _not_implemented(op: str, dtype: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{op}" not implemented for \'{CP.scalar_type_name(dtype)}\'')


def _store(self, values) -> None:
    """Write the drawn values (host, in draw order) into ``self`` in TensorIterator order."""
    data = self._data
    check_internal_overlap(data)
    view = S.order_view(data)
    if self._dtype.name in ("float16", "bfloat16") and values.dtype.itemsize == 8:
        # c10::Half/BFloat16 are built from a float: a double or int64 value is rounded to float first
        values = values.astype(H.float32)
    np.copyto(view, np.asarray(values).reshape(view.shape), casting="unsafe")


def _host(arr) -> Any:
    """A host (NumPy) copy of a kernel array (the cuda family's arrays live on the device)."""
    return arr.get() if hasattr(arr, "get") and not isinstance(arr, H.ndarray) else arr


def _contiguous(data) -> bool:
    return data.flags.c_contiguous


def _check_float(op: str, dtype: D.dtype) -> None:
    if dtype._category != 2:
        raise _not_implemented(op, dtype)


@TABLE.impl("aten::uniform_")
def uniform_(self, from_=0.0, to=1.0, generator=None):
    dt = self._dtype
    if dt.is_complex:  # ATen draws the (real, imaginary) pairs as a real tensor
        return CX.complex_random(self, uniform_, from_, to, generator)
    _check_float("check_uniform_bounds", dt)
    data = self._data
    # uniform_impl_'s checks (empty tensors included)
    info = D.finfo(dt)
    lo, hi = float(info.min), float(info.max)
    for value, what in ((from_, "from"), (to, "to")):
        if not lo <= value <= hi:
            raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[dt.name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    if not to - from_ <= hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{CP.scalar_type_name(dt)}>::max(), but "
                           f"found to={to:g} and from={from_:g} which result in to-from to exceed the limit")
    npdt = np.dtype(dt.numpy_dtype)
    n = data.size
    kind = S.UNIFORM_D if npdt == np.float64 else S.UNIFORM_F
    direct = S.direct_target(data, kind) if npdt in (np.float32, np.float64) else None
    if direct is not None:
        # a contiguous float tensor: the values go straight into its storage (no copy)
        check_internal_overlap(data)
        S.fill(generator, kind, n, float(npdt.type(from_)), float(npdt.type(to)), out=direct)
        direct[direct == npdt.type(to)] = npdt.type(from_)
        return self
    if npdt == np.float64:
        values = S.fill(generator, S.UNIFORM_D, n, from_, to)
    else:
        # float32 arithmetic (ATen's opmath type for float, half and bfloat16), then the cast
        values = S.fill(generator, S.UNIFORM_F, n, float(np.float32(from_)), float(np.float32(to)))
        if npdt != np.float32:
            values = values.astype(npdt)
    # the cast may round up onto ``to``: ATen maps that value to ``from``
    top = npdt.type(to)
    hit = values == top
    if hit.any():
        values[hit] = npdt.type(from_)
    _store(self, values)
    return self


@TABLE.impl("aten::normal_")
def normal_(self, mean=0.0, std=1.0, generator=None):
    dt = self._dtype
    if dt.is_complex:  # ATen draws the (real, imaginary) pairs as reals, each with half the variance
        return CX.complex_random(self, normal_, mean, std / math.sqrt(2.0) if std >= 0 else std, generator)
    _check_float("normal_kernel_cpu", dt)
    if not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    npdt = np.dtype(dt.numpy_dtype)
    data = self._data
    n = data.size
    if n >= 16 and _contiguous(data):
        # normal_fill: uniforms, then Box-Muller on blocks of 16 (the tail block recomputed)
        kind = S.NORMFILL_D if npdt == np.float64 else S.NORMFILL_F if npdt == np.float32 else S.NORMFILL_H
        direct = S.direct_target(data, kind) if kind != S.NORMFILL_H else None
        if direct is not None:  # straight into the tensor's storage
            check_internal_overlap(data)
            S.fill(generator, kind, n, mean, std, out=direct)
            return self
        values = S.fill(generator, kind, n, mean, std)
    else:
        # the scalar path: normal_distribution<double> with the generator's cached second sample
        values = S.fill(generator, S.NORMAL, n, mean, std)
    _store(self, values)
    return self


def _continuous(op: str, dt: D.dtype) -> None:
    if dt._category != 2:
        raise RuntimeError(f"{op} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {CP.scalar_type_name(dt)}")


@TABLE.impl("aten::exponential_")
def exponential_(self, lambd=1.0, generator=None):
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous("Exponential", self._dtype)
    _store(self, S.fill(generator, S.EXPONENTIAL, self._data.size, lambd))
    return self


@TABLE.impl("aten::geometric_")
def geometric_(self, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self._dtype._category == 3 or self._dtype is D.bool_:
        raise _not_implemented("geometric_cpu", self._dtype)
    _store(self, S.fill(generator, S.GEOMETRIC, self._data.size, p))
    return self


@TABLE.impl("aten::log_normal_")
def log_normal_(self, mean=1.0, std=2.0, generator=None):
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _check_float("log_normal_cpu", self._dtype)
    _store(self, S.fill(generator, S.LOGNORMAL, self._data.size, mean, std))
    return self


@TABLE.impl("aten::cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    if self._dtype._category != 2:  # (this message names the C++ type)
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_C_NAMES.get(self._dtype.name, self._dtype.name)}")
    _store(self, S.fill(generator, S.CAUCHY, self._data.size, median, sigma))
    return self


@TABLE.impl("aten::poisson")
def poisson(self, generator=None):
    dt = self._dtype
    if dt._category != 2:
        raise _not_implemented("poisson_cpu", dt)
    rates = _host(self._data)
    if rates.size and not (rates >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # _s_poisson_cpu: a contiguous zeros(lambda.sizes()) output, visited in its (C) order
    values = S.fill(generator, S.POISSON, rates.size, p=H.ascontiguousarray(rates).reshape(-1))
    return fresh(np.asarray(values.astype(rates.dtype).reshape(rates.shape)))


def _int_bounds(dt: D.dtype) -> tuple[int, int]:
    if dt is D.bool_:
        return 0, 1
    if dt._category == 1:
        info = np.iinfo(dt.numpy_dtype)
        return int(info.min), int(info.max)
    return -(2 ** _MANTISSA[dt.name]), 2 ** _MANTISSA[dt.name]


@TABLE.impl("aten::random_.from")
def random_from(self, from_, to=None, generator=None):
    dt = self._dtype
    if dt._category == 3:  # complex: random_from_to_impl's checks, in its order
        if to is not None:
            if from_ >= to:
                raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
            raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
        if from_ == -(2 ** 63):
            raise _not_implemented("random_full_64_bits_range_kernel_cpu", dt)
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
    if to is None and from_ == -(2 ** 63):
        # [int64 min, int64 max]: random_full_64_bits_range_kernel, for these dtypes only
        if dt.name not in ("int64", "float64", "float32", "bfloat16"):
            if dt in (D.float16, D.bool_) or dt.name.startswith("uint") and dt.name != "uint8":
                raise _not_implemented("random_full_64_bits_range_kernel_cpu", dt)
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        _store_integers(self, generator, True, 0, 0)
        return self
    lo, hi = _int_bounds(dt)
    name = _C_NAMES.get(dt.name, dt.name)
    if to is not None and from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    if dt._category == 2:
        # random_from_to_impl for floating types: bounds moved onto values the dtype holds, then
        # checked against its range, with a warning past 2**digits
        digits = _MANTISSA[dt.name]
        if to is None:
            top = 2 ** digits
            from_ = _update_from(from_, dt)
            if not from_ < top:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted "
                                   f"to dtype, but got from={from_} > to_inc={top}")
        else:
            from_, to = _update_from(from_, dt), _update_to(to, dt)
            if from_ >= to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                                   f"from={from_} >= to={to}")
            top = to - 1
        info = D.finfo(dt)
        for value, what in ((from_, "from"), (top, "to - 1")):
            if not float(info.min) <= value <= float(info.max):
                raise RuntimeError(f"{what} is out of bounds for {name}")
        for value, what in ((from_, "from"), (top, "to - 1")):
            if not -(2 ** digits) <= value <= 2 ** digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {name} can "
                    "support discrete uniform distribution only within this range. This warning will become an error "
                    "in version 1.7 release, please fix the code in advance", UserWarning, stacklevel=3)
    else:
        top = hi if to is None else to - 1
        if not lo <= from_ <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= top <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")
    span = top - from_ + 1
    # uniform_int_from_to_distribution: random64() from a range of 2**28 up (less modulo skew)
    _store_integers(self, generator, span >= 2 ** 28, span, from_)
    return self


def _as_dtype_int(value: int, dt: D.dtype) -> int:
    """static_cast<int64_t>(static_cast<scalar_t>(value)) (half and bfloat16 are built from a float)."""
    npdt = np.dtype(dt.numpy_dtype)
    via = np.float64(value) if npdt == np.float64 else np.float32(value)
    with np.errstate(over="ignore"):
        cast = float(via.astype(npdt).astype(np.float64))
    # a value beyond int64 (or inf) converts to the "integer indefinite" int64 min on x86, as in ATen
    return int(cast) if math.isfinite(cast) and -(2 ** 63) <= cast < 2 ** 63 else -(2 ** 63)


def _update_from(from_: int, dt: D.dtype) -> int:
    """ATen's update_from: a ``from`` the dtype rounds down past is moved up to its next value."""
    plus_1 = _as_dtype_int(from_ + 1, dt)
    if plus_1 < from_:
        n = abs(from_ + 1).bit_length() - 1
        from_ = plus_1 + (1 << (n - (_MANTISSA[dt.name]) + 1))
    return from_


def _update_to(to: int, dt: D.dtype) -> int:
    """ATen's update_to: a ``to`` the dtype rounds up onto is moved down to its previous value."""
    minus_1 = _as_dtype_int(to - 1, dt)
    if minus_1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus_1 - (1 << (n - (_MANTISSA[dt.name]) + 1))
    return to


def _store_integers(self, generator, wide: bool, span: int, base: int) -> None:
    data = self._data
    direct = S.direct_target(data, None)
    if direct is not None:  # a contiguous int64 tensor: straight into its storage
        check_internal_overlap(data)
        S.integers(generator, data.size, wide, span, base, out=direct)
    else:
        _store(self, S.integers(generator, data.size, wide, span, base))


@TABLE.impl("aten::random_")
def random_(self, generator=None):
    dt = self._dtype
    if dt._category == 3:
        raise _not_implemented("random_kernel_cpu", dt)
    # uniform_int_distribution: random64() for int64 and double, random() otherwise, modulo one
    # past the largest integer the dtype holds exactly (bool: the lowest bit)
    if dt is D.bool_:
        modulus = 2
    elif dt._category == 2:
        modulus = 2 ** _MANTISSA[dt.name] + 1
    else:
        modulus = int(np.iinfo(dt.numpy_dtype).max) + 1
    _store_integers(self, generator, dt.name in ("int64", "float64"), modulus, 0)
    return self


def _check_p_tensor(p) -> None:
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)"
        )


@TABLE.impl("aten::bernoulli")
def bernoulli(self, generator=None):
    dt = self._dtype
    _check_float("bernoulli_tensor_cpu_p_", dt)
    p = _host(self._data)
    _check_p_tensor(p)
    # at::bernoulli: a contiguous empty_like(self).bernoulli_(self), visited in the output's (C) order
    flat = H.ascontiguousarray(p).reshape(-1)
    kind = S.BERN_PD if H.dtype(dt.numpy_dtype) == H.float64 else S.BERN_PF
    values = S.fill(generator, kind, flat.size, p=flat)
    return fresh(np.asarray(values.astype(p.dtype).reshape(p.shape)))


@TABLE.impl("aten::bernoulli_.float")
def bernoulli_(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self._dtype._category == 3:
        raise _not_implemented("bernoulli_scalar_cpu_", self._dtype)
    _store(self, S.fill(generator, S.BERNOULLI, self._data.size, p))
    return self


@TABLE.impl("aten::bernoulli_.Tensor")
def bernoulli_tensor_(self, p, generator=None):
    if self._dtype._category == 3:
        raise _not_implemented("bernoulli_tensor_cpu_self_", self._dtype)
    pdt = p._dtype
    _check_float("bernoulli_tensor_cpu_p_", pdt)
    probs = _host(p._data)
    _check_p_tensor(probs)
    data = self._data
    probs = _expand_to(probs, data.shape, pdt)  # expand_inplace(self, p)
    # one draw per element of self, in self's TensorIterator order, against p at that element
    flat = H.ascontiguousarray(probs.transpose(S.order_perm(data))).reshape(-1)
    kind = S.BERN_PD if H.dtype(pdt.numpy_dtype) == H.float64 else S.BERN_PF
    _store(self, S.fill(generator, kind, flat.size, p=flat))
    return self


def _expand_to(arr, shape, dt):
    """``arr`` broadcast to ``shape`` as ``Tensor.expand`` does, with its errors."""
    shape, have = list(shape), list(arr.shape)
    if len(have) > len(shape):
        raise RuntimeError(f"expand(torch.{CP.scalar_type_name(dt)}Tensor{{{have}}}, size={shape}): the number of sizes "
                           f"provided ({len(shape)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(have)})")
    for k in range(1, len(have) + 1):
        if have[-k] != shape[-k] and have[-k] != 1:
            raise RuntimeError(f"The expanded size of the tensor ({shape[-k]}) must match the existing size "
                               f"({have[-k]}) at non-singleton dimension {len(shape) - k}.  Target sizes: {shape}.  "
                               f"Tensor sizes: {have}")
    return H.broadcast_to(arr, shape)


@TABLE.impl("aten::bernoulli.p")
def bernoulli_p(self, p, generator=None):
    # empty_like(self, contiguous).bernoulli_(p)
    return bernoulli_(fresh(np.empty(self._data.shape, self._dtype.numpy_dtype)), p, generator)


@TABLE.impl("aten::multinomial")
def multinomial(self, num_samples, replacement=False, generator=None):
    dt = self._dtype
    probs = _host(self._data)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if dt._category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {CP.scalar_type_name(dt)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = probs.reshape(-1, n_cat)
    if rows.size and (not H.isfinite(rows).all() or (rows < 0).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows.astype(H.float64).sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n_rows = rows.shape[0]
    if not replacement or num_samples == 1:
        # Distributions.cpp's fast path: q ~ Exp(1) shaped like the input, then the largest p / q
        q = S.fill(generator, S.EXPONENTIAL, rows.size, 1.0).astype(rows.dtype).reshape(rows.shape)
        keys = rows / q
        if num_samples == 1:
            out = H.argmax(keys, axis=1)[:, None]
        else:
            out = H.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    else:
        # MultinomialKernel.cpp: a normalized running sum in the input's type (float for
        # half/bfloat16), one double uniform per sample, the first bucket whose sum reaches it
        acc = H.float64 if rows.dtype == H.float64 else H.float32
        cum = H.cumsum(rows.astype(acc), axis=1, dtype=acc)
        cum /= cum[:, -1:]
        cum[:, -1] = 1
        u = S.fill(generator, S.UNIFORM_D, n_rows * num_samples).reshape(n_rows, num_samples)
        cum64 = cum.astype(H.float64)
        out = H.empty((n_rows, num_samples), H.int64)
        for r in range(n_rows):
            out[r] = H.searchsorted(cum64[r], u[r], side="left")
    out = H.ascontiguousarray(out, dtype=H.int64)
    if probs.ndim == 1:
        out = out.reshape(num_samples)
    return fresh(np.asarray(out))


def _check_floating(op: str, dt: D.dtype) -> None:
    """AT_DISPATCH_FLOATING_TYPES: float32 and float64 only."""
    if dt.name not in ("float32", "float64"):
        raise _not_implemented(op, dt)


@TABLE.impl("aten::_standard_gamma")
def _standard_gamma(self, generator=None):
    dt = self._dtype
    _check_floating("gamma_cpu", dt)
    alpha = _host(self._data)
    # _s_gamma_cpu: a contiguous zeros(alpha.sizes()) output visited in C order; the float kernel rounds as float
    flat = H.ascontiguousarray(alpha, dtype=H.float64).reshape(-1)
    values = S.fill(generator, S.GAMMA, flat.size, 1.0 if dt.name == "float32" else 0.0, p=flat)
    return fresh(np.asarray(values.astype(alpha.dtype).reshape(alpha.shape)))


@TABLE.impl("aten::_sample_dirichlet")
def _sample_dirichlet(self, generator=None):
    dt = self._dtype
    _check_floating("dirichlet", dt)
    alpha = _host(self._data)
    # _s_dirichlet_cpu: gamma draws in double (against underflow), normalized over the last dimension,
    # then clamped into [tiny, nextafter(1, 0)] of the result type
    flat = H.ascontiguousarray(alpha, dtype=H.float64).reshape(-1)
    gamma = S.fill(generator, S.GAMMA, flat.size, 0.0, p=flat).reshape(alpha.shape)
    with H.errstate(invalid="ignore", divide="ignore"):
        ratio = (gamma / gamma.sum(axis=-1, keepdims=True)).astype(alpha.dtype) if alpha.ndim else gamma.astype(alpha.dtype)
    info = H.finfo(alpha.dtype)
    out = H.minimum(H.nextafter(alpha.dtype.type(1), alpha.dtype.type(0)), H.maximum(info.tiny, ratio))
    return fresh(np.asarray(H.ascontiguousarray(out)))


@TABLE.impl("aten::binomial")
def binomial(count, prob, generator=None):
    dt = count._dtype
    _check_floating("binomial_cpu", dt)
    counts = _host(count._data)
    probs = _expand_to(_host(prob._data), counts.shape, prob._dtype)  # TensorIterator broadcasts prob to the output
    # _s_binomial_cpu: a zeros(count.sizes()) output visited in C order, one uniform stream for both samplers
    packed = H.concatenate([H.ascontiguousarray(counts, dtype=H.float64).reshape(-1),
                            H.ascontiguousarray(probs, dtype=H.float64).reshape(-1)])
    values = S.fill(generator, S.BINOMIAL, counts.size, p=packed)
    return fresh(np.asarray(values.astype(counts.dtype).reshape(counts.shape)))
