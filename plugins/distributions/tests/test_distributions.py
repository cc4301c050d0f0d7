"""Every distribution against torch.distributions in float64: log_prob, moments, entropy, cdf/icdf, shapes,
expand, enumerate_support, the sampled values after the same seed (torchplug's CPU stream is PyTorch's),
sample moments, and gradients of rsample and log_prob."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp
from catalog import CASES, build

torch = pytest.importorskip("torch")

IDS = [c[0] for c in CASES]
# rsample of these goes through the gamma/Dirichlet reparameterisation gradients, which ATen approximates
APPROX_GRAD = {"beta", "gamma", "chi2", "dirichlet", "studentt", "fishersnedecor", "inversegamma", "wishart",
               "kumaraswamy"}


@pytest.fixture(params=CASES, ids=IDS)
def pair(request):
    cid, cls, params, kwargs = request.param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own construction warnings (e.g. Wishart's singular samples)
        return cid, build(tp, cls, params, kwargs), build(torch, cls, params, kwargs)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(mine, ref, rtol=1e-7, atol=1e-9):
    assert tuple(mine.shape) == tuple(ref.shape)
    assert str(mine.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    if ref.dtype == torch.float32:  # float32 cases: one rounding apart
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
    np.testing.assert_allclose(_np(mine), _np(ref), rtol=rtol, atol=atol, equal_nan=True)


def _mirror(value):
    return tp.tensor(value.numpy()) if isinstance(value, torch.Tensor) else value


def _torch_samples(ref, n=5, seed=0):
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ref.sample(n if isinstance(n, tuple) else (n,))


def _outcome(fn):
    """(value, None) or (None, exception type) of ``fn()``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except (NotImplementedError, ValueError, RuntimeError, AttributeError) as e:
        return None, type(e)


def test_shapes_and_support(pair):
    cid, d, r = pair
    assert tuple(d.batch_shape) == tuple(r.batch_shape) and tuple(d.event_shape) == tuple(r.event_shape)
    assert isinstance(d.batch_shape, tp.Size) and isinstance(d.event_shape, tp.Size)
    assert d.has_rsample == r.has_rsample and d.has_enumerate_support == r.has_enumerate_support
    assert type(d.support).__name__ == type(r.support).__name__
    assert repr(d).split("(")[0] == repr(r).split("(")[0]


def test_log_prob(pair):
    cid, d, r = pair
    x = _torch_samples(r)
    _close(d.log_prob(_mirror(x)), r.log_prob(x))


@pytest.mark.parametrize("attr", ["mean", "mode", "variance", "stddev", "entropy", "perplexity"])
def test_statistics(pair, attr):
    cid, d, r = pair
    ref, ref_err = _outcome(lambda: getattr(r, attr)() if attr in ("entropy", "perplexity") else getattr(r, attr))
    mine, err = _outcome(lambda: getattr(d, attr)() if attr in ("entropy", "perplexity") else getattr(d, attr))
    assert err == ref_err
    if cid == "kumaraswamy" and attr == "mode":
        # torch's Kumaraswamy.mode is nan for every parameter (it takes log1p(-concentration0)); compare with the
        # closed form ((a - 1) / (a b - 1)) ** (1 / a), nan where a < 1 or b < 1
        a, b = d.concentration1.numpy(), d.concentration0.numpy()
        with np.errstate(invalid="ignore"):
            expected = np.where((a < 1) | (b < 1), np.nan, ((a - 1) / (a * b - 1)) ** (1 / a))
        np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-12, equal_nan=True)
        return
    if ref_err is None:
        _close(mine, ref)


@pytest.mark.parametrize("method", ["cdf", "icdf"])
def test_cdf_icdf(pair, method):
    cid, d, r = pair
    if method == "cdf":
        x = _torch_samples(r)
    else:
        x = torch.linspace(0.05, 0.95, 5, dtype=torch.float64).reshape((5,) + (1,) * (len(r.batch_shape) + len(r.event_shape)))
        x = x.expand((5,) + tuple(r.batch_shape) + tuple(r.event_shape))
    ref, ref_err = _outcome(lambda: getattr(r, method)(x))
    mine, err = _outcome(lambda: getattr(d, method)(_mirror(x)))
    assert err == ref_err
    if ref_err is None:
        _close(mine, ref)


def test_same_samples_as_torch_after_same_seed(pair):
    cid, d, r = pair
    tp.manual_seed(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = d.sample((2, 3))
    ref = _torch_samples(r, n=(2, 3), seed=11)
    assert tuple(mine.shape) == (2, 3) + tuple(r.batch_shape) + tuple(r.event_shape)
    _close(mine, ref, rtol=1e-9, atol=1e-12)


def test_expand(pair):
    cid, d, r = pair
    shape = (4,) + tuple(r.batch_shape)
    de, re_ = d.expand(shape), r.expand(shape)
    assert tuple(de.batch_shape) == shape and type(de) is type(d)
    x = _torch_samples(re_, n=2)
    _close(de.log_prob(_mirror(x)), re_.log_prob(x))


ENUMERABLE = [c for c in CASES if isinstance(c[1], str) and getattr(torch.distributions, c[1]).has_enumerate_support]


@pytest.mark.parametrize("case", ENUMERABLE, ids=[c[0] for c in ENUMERABLE])
def test_enumerate_support(case):
    d, r = build(tp, *case[1:]), build(torch, *case[1:])
    for expand in (True, False):
        ref, ref_err = _outcome(lambda: r.enumerate_support(expand=expand))
        mine, err = _outcome(lambda: d.enumerate_support(expand=expand))
        assert err == ref_err
        if ref_err is None:
            _close(mine, ref)


def _grad_params(params):
    return {k: v for k, v in params.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"}


def _with_grad(lib, cls, params, kwargs):
    """The distribution with every float array parameter a leaf requiring grad, and those leaves."""
    leaves = {k: lib.tensor(v, dtype=getattr(lib, v.dtype.name), requires_grad=True)
              for k, v in _grad_params(params).items()}
    args = {**params, **leaves}
    if callable(cls):
        conv = {k: v if not isinstance(v, np.ndarray) else lib.tensor(v) for k, v in args.items()}
        return cls(lib.distributions, conv), leaves
    conv = {k: v if not isinstance(v, np.ndarray) else lib.tensor(v) for k, v in args.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib.distributions, cls)(**conv, **kwargs), leaves


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_log_prob_gradients(case):
    cid, cls, params, kwargs = case
    if not _grad_params(params):
        pytest.skip("no tensor parameters")
    r, rl = _with_grad(torch, cls, params, kwargs)
    d, dl = _with_grad(tp, cls, params, kwargs)
    x = _torch_samples(r).detach()
    r.log_prob(x).sum().backward()
    d.log_prob(_mirror(x)).sum().backward()
    for k in rl:
        assert (dl[k].grad is None) == (rl[k].grad is None), k
        if rl[k].grad is not None:
            _close(dl[k].grad, rl[k].grad, rtol=1e-6, atol=1e-9)


# LKJCholesky has no rsample; torch's own Wishart rsample backward fails once a singular draw was redrawn in place
RSAMPLE_CASES = [c for c in CASES if c[0] not in ("lkjcholesky", "wishart")]


@pytest.mark.parametrize("case", RSAMPLE_CASES, ids=[c[0] for c in RSAMPLE_CASES])
def test_rsample_gradients(case):
    cid, cls, params, kwargs = case
    if not _grad_params(params):
        pytest.skip("no tensor parameters")
    r, rl = _with_grad(torch, cls, params, kwargs)
    d, dl = _with_grad(tp, cls, params, kwargs)
    if not r.has_rsample:
        with pytest.raises(NotImplementedError):
            d.rsample()
        return
    torch.manual_seed(3)
    tp.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ys, yd = r.rsample((4,)), d.rsample((4,))
    _close(yd, ys, rtol=1e-9, atol=1e-12)
    weights = np.random.default_rng(0).normal(size=tuple(ys.shape))
    (ys * torch.tensor(weights)).sum().backward()
    (yd * tp.tensor(weights)).sum().backward()
    tol = dict(rtol=5e-3, atol=1e-6) if cid in APPROX_GRAD else dict(rtol=1e-6, atol=1e-9)
    for k in rl:
        if rl[k].grad is not None:
            _close(dl[k].grad, rl[k].grad, **tol)


# ---- sample moments: the draws follow the distribution (loose, fixed seed) -------------------------------------
MOMENT_CASES = ["normal", "bernoulli_probs", "binomial", "multinomial", "uniform", "beta",
                "gamma", "chi2", "dirichlet", "exponential", "laplace", "poisson", "geometric", "studentt", "mvn_cov",
                "lowrank_mvn", "halfnormal", "gumbel", "weibull", "vonmises", "negbinomial", "kumaraswamy",
                "mixture", "independent", "onehot"]  # (Categorical's mean is nan, as torch's; LogNormal's variance too heavy-tailed)


@pytest.mark.parametrize("cid", MOMENT_CASES)
def test_sample_moments(cid):
    _, cls, params, kwargs = next(c for c in CASES if c[0] == cid)
    d = build(tp, cls, params, kwargs)
    tp.manual_seed(2024)
    x = d.sample((20000,)).numpy().astype(np.float64)
    mean, var = d.mean.numpy(), d.variance.numpy()
    if cid == "vonmises":  # circular: compare the mean direction
        np.testing.assert_allclose(np.angle(np.exp(1j * x).mean(0)), np.angle(np.exp(1j * mean)), atol=0.1)
        return
    # the sample mean is within 5 standard errors, the sample variance within 10%
    se = np.sqrt(var / x.shape[0])
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * se + 1e-9), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1, atol=1e-9)


def test_sample_shape_forms():
    d = tp.distributions.Normal(tp.zeros(3), tp.ones(3))
    assert d.sample().shape == (3,)
    assert d.sample((2,)).shape == (2, 3)
    assert d.sample(tp.Size([2, 4])).shape == (2, 4, 3)
    assert d.rsample([5]).shape == (5, 3)
    with pytest.warns(FutureWarning, match="`sample_n\\(n\\)` will be deprecated"):
        assert d.sample_n(2).shape == (2, 3)


FLOAT32_CASES = [c for c in CASES if c[0] not in ("wishart", "lkjcholesky")]  # (float32 Cholesky noise on both sides)


@pytest.mark.parametrize("case", FLOAT32_CASES, ids=[c[0] for c in FLOAT32_CASES])
def test_float32_parameters(case):
    """The same distributions with float32 parameters: float32 results, values within float32 rounding."""
    cid, cls, params, kwargs = case
    p32 = {k: v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype == np.float64 else v
           for k, v in params.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d, r = build(tp, cls, p32, kwargs), build(torch, cls, p32, kwargs)
    x = _torch_samples(r)
    mine, ref = d.log_prob(_mirror(x)), r.log_prob(x)
    assert str(mine.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=2e-4, atol=2e-4)
    tp.manual_seed(4)
    torch.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = d.sample((3,)), r.sample((3,))
    assert a.dtype.itemsize == b.dtype.itemsize and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-5, atol=1e-5)
