"""cpu kernels: random sampling in place and ``bernoulli``/``multinomial``.

Numbers come from the NumPy generator of the ``torchplug.Generator`` passed (or the default
one), so ``manual_seed``, ``get_rng_state``/``set_rng_state`` and private generators work; the
streams differ from PyTorch's.
"""

from __future__ import annotations

import warnings

import numpy as np

from torchplug import _composites as CP
from torchplug import _dtype as D
from torchplug import _random as R
from torchplug.library import KernelTable

from .core import check_internal_overlap, fresh

TABLE = KernelTable("CPU")

_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_C_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
}


def _gen(generator) -> np.random.Generator:
    return (generator if generator is not None else R.default_generator).numpy_generator


def _not_implemented(op: str, dtype: D.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{op}" not implemented for \'{CP.scalar_type_name(dtype)}\'')


def _store(self, values: np.ndarray) -> None:
    data = self._data
    check_internal_overlap(data)
    np.copyto(data, values, casting="unsafe")


def _check_float(op: str, dtype: D.dtype) -> None:
    if dtype._category != 2:
        raise _not_implemented(op, dtype)


@TABLE.impl("aten::uniform_")
def uniform_(self, from_=0.0, to=1.0, generator=None):
    dt = self._dtype
    _check_float("check_uniform_bounds", dt)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    shape = self._data.shape
    npdt = dt.numpy_dtype
    if npdt == np.float32 or npdt == np.float64:
        u = _gen(generator).random(shape, dtype=npdt)
        values = u * npdt.type(to - from_) + npdt.type(from_) if (from_, to) != (0.0, 1.0) else u
    else:
        values = (_gen(generator).random(shape) * (to - from_) + from_).astype(npdt)
    if to > from_:
        # Rounding may land on ``to``: keep the range half-open like PyTorch.
        values = np.asarray(values, dtype=npdt)
        hit = values >= npdt.type(to)
        if hit.any():
            values[hit] = np.nextafter(npdt.type(to), npdt.type(from_)) if npdt.kind == "f" and npdt.itemsize >= 4 else from_
    _store(self, values)
    return self


@TABLE.impl("aten::normal_")
def normal_(self, mean=0.0, std=1.0, generator=None):
    dt = self._dtype
    _check_float("normal_kernel_cpu", dt)
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    npdt = dt.numpy_dtype
    g = _gen(generator)
    shape = self._data.shape
    if npdt == np.float32 or npdt == np.float64:
        values = g.standard_normal(shape, dtype=npdt)
        if std != 1.0:
            values *= npdt.type(std)
        if mean != 0.0:
            values += npdt.type(mean)
    else:
        values = g.normal(mean, std, shape)
    _store(self, values)
    return self


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
    if dt._category == 3:
        raise _not_implemented("random_from_to_range_cpu", dt)
    lo, hi = _int_bounds(dt)
    name = _C_NAMES.get(dt.name, dt.name)
    if to is None:
        # [from, the largest value the dtype holds exactly]
        if dt._category == 2:
            top = 2 ** _MANTISSA[dt.name]
        else:
            top = hi
        if not lo <= from_ <= top:
            raise RuntimeError(f"from is out of bounds for {name}")
    else:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        top = to - 1
        if dt._category == 2:
            if not lo <= from_ <= hi or not lo <= top <= hi:
                which = "from" if not lo <= from_ <= hi else "to - 1"
                warnings.warn(
                    f"{which} is out of bounds [-(2^{_MANTISSA[dt.name]}), 2^{_MANTISSA[dt.name]}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within this range. This "
                    "warning will become an error in version 1.7 release, please fix the code in advance",
                    UserWarning, stacklevel=3,
                )
        else:
            if not lo <= from_ <= hi:
                raise RuntimeError(f"from is out of bounds for {name}")
            if not lo <= top <= hi:
                raise RuntimeError(f"to - 1 is out of bounds for {name}")
    shape = self._data.shape
    g = _gen(generator)
    values = _gen(generator).integers(from_, top, size=shape, dtype=np.int64, endpoint=True)
    _store(self, values)
    return self


@TABLE.impl("aten::bernoulli")
def bernoulli(self, generator=None):
    dt = self._dtype
    _check_float("bernoulli_tensor_cpu_p_", dt)
    p = self._data
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)"
        )
    u = _gen(generator).random(p.shape)
    return fresh((u < p).astype(dt.numpy_dtype))


@TABLE.impl("aten::bernoulli_.float")
def bernoulli_(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self._dtype._category == 3:
        raise _not_implemented("bernoulli_scalar_cpu_", self._dtype)
    u = _gen(generator).random(self._data.shape)
    _store(self, u < p)
    return self


@TABLE.impl("aten::multinomial")
def multinomial(self, num_samples, replacement=False, generator=None):
    dt = self._dtype
    probs = self._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if dt._category != 2:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {CP.scalar_type_name(dt)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = probs.shape[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = probs.reshape(-1, n_cat).astype(np.float64)
    if rows.size and (not np.isfinite(rows).all() or (rows < 0).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _gen(generator)
    n_rows = rows.shape[0]
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = g.random((n_rows, num_samples))
        out = np.empty((n_rows, num_samples), np.int64)
        for r in range(n_rows):
            out[r] = np.searchsorted(cdf[r], u[r], side="right")
        # Never pick a zero-probability category at the top end through rounding.
        np.minimum(out, n_cat - 1, out=out)
    else:
        # Exponential race (PyTorch's algorithm): the k smallest E/p are a weighted sample
        # without replacement; categories with p == 0 come last.
        e = g.exponential(size=rows.shape)
        with np.errstate(divide="ignore"):
            keys = np.where(rows > 0, e / rows, np.inf)
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples].astype(np.int64)
    if probs.ndim == 1:
        out = out.reshape(num_samples)
    return fresh(np.ascontiguousarray(out))
