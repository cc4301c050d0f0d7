"""Draws from a ``torchplug.Generator`` exactly as PyTorch's CPU kernels draw from theirs.

``fill``/``integers``/``randperm`` advance the generator's mt19937 state through the C kernels of
``_crandom`` (built where a compiler exists), else through NumPy's MT19937 and NumPy arithmetic:
the same engine words and the same integer, uniform and bernoulli values; where a value goes
through log/sin/cos/exp/tan, NumPy's functions may differ from the C library's in the last bit.
``order_view`` gives the element order of ATen's TensorIterator for an output, the order in which
the serial kernels consume the stream.

``FUSED`` mirrors PyTorch's CPU capability: its AVX2/AVX512 kernels fuse ``a * b + c`` (uniform_
with a range, float normal_fill through avx_mathfun), its ``ATEN_CPU_CAPABILITY=default`` build
does not; the same environment variable selects the same arithmetic here.
"""

from __future__ import annotations

import importlib
import math
import os
from typing import Any

import numpy as np

from torchplug._base.env import pure_python
from torchplug._runtime import generator as R

__all__ = [
    "FUSED", "fill", "direct_target", "integers", "randperm", "order_view", "order_perm", "UNIFORM_F", "UNIFORM_D", "NORMFILL_F", "NORMFILL_H",
    "NORMFILL_D", "NORMAL", "LOGNORMAL", "EXPONENTIAL", "GEOMETRIC", "CAUCHY", "BERNOULLI", "BERN_PF", "BERN_PD",
    "POISSON", "GAMMA", "BINOMIAL",
]

(RAW32, UNIFORM_F, UNIFORM_D, NORMFILL_F, NORMFILL_H, NORMFILL_D, NORMAL, LOGNORMAL, EXPONENTIAL, GEOMETRIC, CAUCHY,
 BERNOULLI, BERN_PF, BERN_PD, POISSON, GAMMA, BINOMIAL) = range(17)
_OUT_DTYPE = {RAW32: np.uint32, UNIFORM_F: np.float32, UNIFORM_D: np.float64, NORMFILL_F: np.float32,
              NORMFILL_H: np.float32, NORMFILL_D: np.float64, BERNOULLI: np.uint8, BERN_PF: np.uint8, BERN_PD: np.uint8}


def _load() -> Any:
    if pure_python():
        return None
    try:
        return importlib.import_module("torchplug_cpu._crandom")
    except ImportError:  # not built: the NumPy versions below are used
        return None


def _cpu_has_avx2_fma() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:  # NumPy 1.x
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return False
    return bool(feats.get("AVX2") and feats.get("FMA3"))


_C = _load()
FUSED = os.environ.get("ATEN_CPU_CAPABILITY", "").lower() != "default" and _cpu_has_avx2_fma()


def _gen(generator: Any) -> R.Generator:
    return generator if generator is not None else R.default_generator


def direct_target(data: Any, kind: int | None) -> np.ndarray | None:
    """``data`` flattened, when ``fill`` can write ``kind``'s values straight into it (a C-contiguous
    host array of the kind's output type; ``kind`` None: int64 for ``integers``), else None."""
    if type(data) is np.ndarray and data.flags.c_contiguous and data.flags.writeable \
            and data.dtype == _OUT_DTYPE.get(kind, np.float64 if kind is not None else np.int64):
        return data.reshape(-1)
    return None


def fill(generator: Any, kind: int, n: int, a: float = 0.0, b: float = 1.0, p: np.ndarray | None = None,
         out: np.ndarray | None = None) -> np.ndarray:
    """``n`` values of distribution ``kind`` (parameters ``a``, ``b``; per-element ``p``), drawn in
    order, into ``out`` (from :func:`direct_target`) or a new array."""
    g = _gen(generator)
    if out is None:
        out = np.empty(n, dtype=_OUT_DTYPE.get(kind, np.float64))
    if p is not None:
        p = np.ascontiguousarray(p, dtype=np.float32 if kind == BERN_PF else np.float64).reshape(-1)
    if _C is not None:
        with g._lock:
            has = g._normal_double is not None
            pos, has, value = _C.fill(g._key, g._pos, kind, out, float(a), float(b), int(FUSED), has,
                                      g._normal_double if has else 0.0, b"" if p is None else p)
            g._pos = pos
            g._normal_double = value if has else None
            if n:
                g._fresh = False
        return out
    out[...] = _numpy_fill(g, kind, n, a, b, p)
    return out


def integers(generator: Any, n: int, wide: bool, range_: int, base: int, out: np.ndarray | None = None) -> np.ndarray:
    """``n`` int64 values ``(draw % range_) + base`` (``range_`` 0: the draw itself); ``wide`` draws
    random64(); into ``out`` (a flat int64 array) or a new array."""
    g = _gen(generator)
    if out is None:
        out = np.empty(n, dtype=np.int64)
    if _C is not None:
        with g._lock:
            g._pos = _C.integers(g._key, g._pos, out, int(wide), range_, base)
            if n:
                g._fresh = False
        return out
    draws = _raw64(g, n) if wide else g.random_raw(n).astype(np.uint64)
    if range_:
        draws %= np.uint64(range_)
    out[...] = (draws + np.uint64(base & 0xFFFF_FFFF_FFFF_FFFF)).view(np.int64)
    return out


def randperm(generator: Any, n: int) -> np.ndarray:
    """ATen's randperm_cpu: Fisher-Yates with ``random() % (n - i)`` (or inside-out with random64 for huge n)."""
    g = _gen(generator)
    out = np.empty(n, dtype=np.int64)
    if _C is not None:
        with g._lock:
            g._pos = _C.randperm(g._key, g._pos, out)
            if n > 1:
                g._fresh = False
        return out
    if n < 0xFFFF_FFFF // 20:
        out[...] = np.arange(n)
        z = (g.random_raw(max(n - 1, 0)).astype(np.int64) % (n - np.arange(max(n - 1, 0)))).tolist()
        r = out.tolist()
        for i, zi in enumerate(z):
            r[i], r[zi + i] = r[zi + i], r[i]
        out[...] = r
    else:
        z = (_raw64(g, n) % (np.arange(n, dtype=np.uint64) + np.uint64(1))).astype(np.int64).tolist()
        r = [0] * n
        for i, zi in enumerate(z):
            r[i] = r[zi]
            r[zi] = i
        out[...] = r
    return out


def order_view(arr: np.ndarray) -> np.ndarray:
    """A view of ``arr`` whose C order is the order ATen's TensorIterator visits an output in.

    Dimensions are sorted by stride (the smallest innermost; equal strides: the smaller size
    inner), as TensorIterator's reorder_dimensions does; a contiguous array is its flat self.
    """
    if arr.flags.c_contiguous or arr.ndim < 2:
        return arr
    return arr.transpose(order_perm(arr))


def order_perm(arr: Any) -> list[int]:
    """The axis order (outermost first) of :func:`order_view`."""
    if arr.flags.c_contiguous or arr.ndim < 2:
        return list(range(arr.ndim))
    strides = arr.strides
    shape = arr.shape
    perm = list(range(arr.ndim - 1, -1, -1))  # innermost first

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, arr.ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm[::-1]


# ---- NumPy versions (no C compiler) ----------------------------------------------------------------
def _raw64(g: R.Generator, n: int) -> np.ndarray:
    r = g.random_raw(2 * n).astype(np.uint64)
    return (r[0::2] << np.uint64(32)) | r[1::2]


def _unit_f(g: R.Generator, n: int) -> np.ndarray:
    return (g.random_raw(n) & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _unit_d(g: R.Generator, n: int) -> np.ndarray:
    return (_raw64(g, n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53


def _two_prod(a: np.ndarray, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """a * b as an unevaluated sum p + e (Dekker's product, no FMA needed)."""
    p = a * b
    f = 134217729.0  # 2**27 + 1
    ah = a * f - (a * f - a)
    al = a - ah
    bh = b * f - (b * f - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _madd(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """a * b + c in float64, fused (one rounding, to within a rare last-bit tie) where PyTorch's build fuses it."""
    if not FUSED:
        return a * b + c
    p, e = _two_prod(np.asarray(a, dtype=np.float64), b)
    s = p + c
    v = s - p
    return s + (((p - (s - v)) + (c - v)) + e)


def _fmaf(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """float32 fma through float64 (the product is exact there; one more rounding to float)."""
    return (np.asarray(a, np.float64) * np.float64(b) + np.asarray(c, np.float64)).astype(np.float32)


def _cephes_logf(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's log256_ps for x > 0, lane by lane in float32, with the AVX2 build's fused steps."""
    f32 = np.float32
    x = np.maximum(x, np.array(0x00800000, np.uint32).view(f32))
    bits = x.view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 0x7F).astype(f32) + f32(1)
    x = ((bits & np.uint32(~0x7F800000 & 0xFFFFFFFF)) | np.array(0.5, f32).view(np.uint32)).view(f32)
    lt = x < f32(0.707106781186547524)
    tmp = np.where(lt, x, f32(0))
    x = x - f32(1)
    e = e - np.where(lt, f32(1), f32(0))
    x = x + tmp
    z = x * x
    y = np.full_like(x, f32(7.0376836292e-2))
    for p in (-1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
              2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1):
        y = _fmaf(y, x, f32(p))
    y = y * x
    y = _fmaf(y, z, e * f32(-2.12194440e-4))
    y = _fmaf(-z, f32(0.5), y)
    x = x + y
    return _fmaf(e, f32(0.693359375), x)


def _cephes_sincosf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's sincos256_ps for 0 <= x < 2 pi, lane by lane in float32 (fused as the AVX2 build)."""
    f32 = np.float32
    j = (x * f32(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(f32)
    swap_sin = ((j & 4).astype(np.uint32) << np.uint32(29))
    poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fmaf(y, f32(dp), x)
    sign_cos = ((~(j - 2) & 4).astype(np.uint32) << np.uint32(29))
    z = x * x
    yc = _fmaf(np.full_like(z, f32(2.443315711809948e-5)), z, f32(-1.388731625493765e-3))
    yc = _fmaf(yc, z, f32(4.166664568298827e-2))
    yc = yc * z
    yc = _fmaf(yc, z, -(z * f32(0.5)))
    yc = yc + f32(1)
    ys = _fmaf(np.full_like(z, f32(-1.9515295891e-4)), z, f32(8.3321608736e-3))
    ys = _fmaf(ys, z, f32(-1.6666654611e-1))
    ys = ys * z
    ys = _fmaf(ys, x, x)
    ysin2 = np.where(poly, ys, f32(0))
    ysin1 = np.where(poly, f32(0), yc)
    r1 = ysin1 + ysin2
    r2 = (yc - ysin1) + (ys - ysin2)
    return (r1.view(np.uint32) ^ swap_sin).view(f32), (r2.view(np.uint32) ^ sign_cos).view(f32)


def _fill16(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """NormalFill16 on rows of 16: avx_mathfun's float path where PyTorch uses it, else the C library's."""
    u1 = 1 - d[:, :8]
    u2 = d[:, 8:]
    if d.dtype == np.float32:
        if FUSED:
            radius = np.sqrt(np.float32(-2) * _cephes_logf(u1))
            s, c = _cephes_sincosf(np.float32(2.0 * math.pi) * u2)
        else:
            radius = np.sqrt(np.float32(-2) * np.log(u1))
            theta = (2.0 * math.pi * u2.astype(np.float64)).astype(np.float32)
            c, s = np.cos(theta), np.sin(theta)
        both = np.concatenate([radius * c, radius * s], axis=1)
        return _fmaf(both, np.float32(std), np.float32(mean))
    radius = np.sqrt(-2 * np.log(u1))
    theta = 2.0 * math.pi * u2
    both = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
    p, e = _two_prod(both, std)  # std::fma
    s = p + mean
    v = s - p
    return s + (((p - (s - v)) + (mean - v)) + e)


def _normal_pairs(g: R.Generator, n: int, mean: float, std: float) -> np.ndarray:
    out = np.empty(n)
    start = 0
    if n and g._normal_double is not None:
        out[0] = g._normal_double
        g._normal_double = None
        start = 1
    m = n - start
    pairs = (m + 1) // 2
    u = _unit_d(g, 2 * pairs).reshape(pairs, 2)
    r = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
    theta = 2.0 * math.pi * u[:, 0]
    both = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)
    out[start:] = both[:m]
    if m % 2:
        g._normal_double = float(both[-1])
    return _madd(out, std, mean)


def _numpy_fill(g: R.Generator, kind: int, n: int, a: float, b: float, p: np.ndarray | None) -> np.ndarray:
    if kind == RAW32:
        return g.random_raw(n)
    if kind == UNIFORM_F:
        x, lo, span = _unit_f(g, n), np.float32(a), np.float32(b) - np.float32(a)
        return _fmaf(x, span, lo) if FUSED else x * span + lo
    if kind == UNIFORM_D:
        return _madd(_unit_d(g, n), b - a, a)
    if kind in (NORMFILL_F, NORMFILL_D):
        d = _unit_f(g, n) if kind == NORMFILL_F else _unit_d(g, n)
        full = n // 16 * 16
        out = d.copy()
        out[:full] = _fill16(d[:full].reshape(-1, 16), a, b).reshape(-1)
        if n % 16:
            t = _unit_f(g, 16) if kind == NORMFILL_F else _unit_d(g, 16)
            out[n - 16:] = _fill16(t.reshape(1, 16), a, b).reshape(-1)
        return out
    if kind == NORMFILL_H:
        blocks = n // 16 + (1 if n % 16 else 0)
        d = _fill16(_unit_f(g, 16 * blocks).reshape(-1, 16), a, b).reshape(-1)
        out = d[:n].copy()
        if n % 16:
            out[n - 16:] = d[-16:]
        return out
    if kind in (NORMAL, LOGNORMAL):
        v = _normal_pairs(g, n, a, b)
        return np.exp(v) if kind == LOGNORMAL else v
    if kind == EXPONENTIAL:
        return -1.0 / a * np.log1p(-_unit_d(g, n))
    if kind == GEOMETRIC:
        return np.ceil(np.log(_unit_d(g, n)) / math.log1p(-a))
    if kind == CAUCHY:
        return _madd(np.tan(math.pi * (_unit_d(g, n) - 0.5)), b, a)
    if kind == BERNOULLI:
        return _unit_d(g, n) < a
    if kind == BERN_PF:
        return _unit_f(g, n) < p
    if kind == BERN_PD:
        return _unit_d(g, n) < p
    if kind == POISSON:
        draws = _Draws(g)
        try:
            return np.array([_poisson_one(draws, float(lam)) for lam in p], dtype=np.float64)
        finally:
            draws.finish()
    if kind == GAMMA:
        draws = _Draws(g)
        try:
            return np.array([_gamma_one(draws, float(alpha), bool(a)) for alpha in p], dtype=np.float64)
        finally:
            draws.finish()
    if kind == BINOMIAL:
        draws = _Draws(g)
        try:
            return np.array([_binomial_one(draws, float(c), float(q)) for c, q in zip(p[:n], p[n:])], dtype=np.float64)
        finally:
            draws.finish()
    raise ValueError(f"unknown distribution kind {kind}")


def _poisson_one(g: _Draws, lam: float) -> float:
    """ATen's sample_poisson (one rate; the C version runs the same steps)."""
    u = g.unit_d

    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = u() - 0.5
            V = u()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and V > us):
                continue
            if math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b) <= -lam + k * loglam - math.lgamma(k + 1):
                return float(k)
    if lam == 0:
        return 0.0
    x, prod, enlam = 0, 1.0, math.exp(-lam)
    while True:
        prod *= u()
        if prod > enlam:
            x += 1
        else:
            return float(x)


class _Draws:
    """One value at a time for the fallback's rejection samplers (poisson, gamma, binomial), from a block of engine
    words drawn ahead; ``finish`` leaves the generator advanced by exactly the words used (a NumPy MT19937
    round trip per value would cost more than the sampler itself)."""

    def __init__(self, g: R.Generator, block: int = 4096) -> None:
        self.g = g
        self._start = (g._key.copy(), g._pos)
        self._words = g.random_raw(block).tolist()
        self._i = 0

    def _word(self) -> int:
        if self._i == len(self._words):
            self._words += self.g.random_raw(len(self._words)).tolist()
        self._i += 1
        return self._words[self._i - 1]

    def unit_d(self) -> float:
        """uniform_real_distribution<double>(0, 1): 53 bits of random64() (high word first)."""
        hi = self._word()
        return (((hi << 32) | self._word()) & ((1 << 53) - 1)) * 2.0 ** -53

    def normal(self) -> float:
        """normal_distribution<double>(0, 1): Box-Muller, the second value cached in the generator."""
        g = self.g
        if g._normal_double is not None:
            value, g._normal_double = g._normal_double, None
            return value
        u1, u2 = self.unit_d(), self.unit_d()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        g._normal_double = r * math.sin(theta)
        return r * math.cos(theta)

    def finish(self) -> None:
        g = self.g
        with g._lock:
            g._key, g._pos = self._start
        g.random_raw(self._i)


def _gamma_one(g: _Draws, alpha: float, single: bool) -> float:
    """ATen's sample_gamma as _s_gamma_cpu runs it (the C version runs the same steps; ``single``:
    scalar_t float, whose alpha, 1/alpha and d steps round to float32)."""
    f32 = np.float32
    scale = 1.0
    if single:
        af = f32(alpha)
        if af < 1:
            if af == 0:
                return float(np.finfo(f32).tiny)  # sample_gamma's 0, clamped as every result
            scale *= (1 - g.unit_d()) ** float(f32(1) / af)
            af = f32(af + f32(1))
        d = float(f32(af - f32(1) / f32(3)))
    else:
        if alpha < 1:
            if alpha == 0:
                return float(np.finfo(np.float64).tiny)
            scale *= (1 - g.unit_d()) ** (1.0 / alpha)
            alpha += 1.0
        d = alpha - float(f32(1) / f32(3))
    c = 1.0 / math.sqrt(9.0 * d)
    k0331 = float(f32(0.0331))
    while True:
        while True:
            x = g.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - g.unit_d()
        xx = x * x
        if u < 1.0 - k0331 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            sample = scale * d * v
            break
    if single:
        return float(max(f32(sample), np.finfo(f32).tiny))
    return max(sample, np.finfo(np.float64).tiny)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
                  0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(g: _Draws, count: float, prob: float) -> float:
    """ATen's btrs (Hoermann's transformed rejection), for count * prob >= 10."""
    stddev = math.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor((count + 1) * prob)
    while True:
        U = g.unit_d() - 0.5
        V = g.unit_d()
        us = 0.5 - abs(U)
        k = math.floor((2 * a / us + b) * U + c)
        if k < 0 or k > count:
            continue
        if us >= 0.07 and V <= v_r:
            return float(k)
        V = math.log(V * alpha / (a / (us * us) + b))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (count - m + 1))) + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(r * (count - k + 1) / (k + 1)) + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if V <= upper:
            return float(k)


def _binomial_inversion(g: _Draws, count: float, prob: float) -> float:
    geom_sum, num_geom = 0.0, 0.0
    logprob = math.log1p(-prob)
    while True:
        geom_sum += math.ceil(math.log(g.unit_d()) / logprob)
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _binomial_one(g: _Draws, count: float, prob: float) -> float:
    """ATen's sample_binomial (scalar_t double; the C version runs the same steps)."""
    if count <= 0 or prob <= 0:
        return 0.0
    if prob >= 1:
        return count
    if prob <= 0.5:
        return _btrs(g, count, prob) if count * prob >= 10 else _binomial_inversion(g, count, prob)
    if prob > 0.5:
        q = 1.0 - prob
        return count - (_btrs(g, count, q) if count * q >= 10 else _binomial_inversion(g, count, q))
    return math.nan
