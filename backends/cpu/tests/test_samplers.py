"""The samplers behind torch.distributions (``_standard_gamma``, ``_sample_dirichlet``, ``binomial``, ``poisson``) draw
PyTorch's CPU stream value for value, through the C kernels and the NumPy fallback, and their
reparameterisation gradients (``_standard_gamma_grad``, ``_dirichlet_grad``) agree with ATen's."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp
from torchplug_cpu import _stream
from torchplug_cpu import _sampler_math as sampler_grads

torch = pytest.importorskip("torch")

FLOATS = ("float32", "float64")


@pytest.fixture(params=["c", "numpy"])
def engine(request, monkeypatch):
    """Run a case through the C kernels and again through the NumPy fallback."""
    if request.param == "c" and _stream._C is None:
        pytest.skip("torchplug_cpu._crandom not built")
    if request.param == "numpy":
        monkeypatch.setattr(_stream, "_C", None)
    return request.param


def _alphas(dtype: str, shape=(30, 4)) -> np.ndarray:
    # concentrations across the boosted (< 1), ordinary and large regimes, with a zero
    a = np.exp(np.random.default_rng(0).uniform(-4, 4, shape)).astype(dtype)
    a.flat[3] = 0
    return a


def _same_stream(tp_call, torch_call, seed=7):
    """Same values after the same seed (the fallback computes with Python's math module, the C library's
    functions, so it is exact too)."""
    tp.manual_seed(seed)
    torch.manual_seed(seed)
    mine, ref = tp_call(), torch_call()
    np.testing.assert_array_equal(mine.numpy(), ref.numpy())
    # the generator advanced by as many words: the next draws agree too
    np.testing.assert_array_equal(tp.rand(3, dtype=tp.float64).numpy(), torch.rand(3, dtype=torch.float64).numpy())


@pytest.mark.parametrize("dtype", FLOATS)
def test_standard_gamma_stream(engine, dtype):
    a = _alphas(dtype)
    _same_stream(lambda: tp._standard_gamma(tp.tensor(a)), lambda: torch._standard_gamma(torch.tensor(a)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_standard_gamma_noncontiguous(dtype):
    a = _alphas(dtype, (6, 5))
    _same_stream(lambda: tp._standard_gamma(tp.tensor(a).t()), lambda: torch._standard_gamma(torch.tensor(a).t()))


@pytest.mark.parametrize("dtype", FLOATS)
def test_sample_dirichlet_stream(engine, dtype):
    a = _alphas(dtype)[:, :3] + np.asarray(0.05, dtype)
    _same_stream(lambda: tp._sample_dirichlet(tp.tensor(a)), lambda: torch._sample_dirichlet(torch.tensor(a)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_binomial_stream(engine, dtype):
    rng = np.random.default_rng(1)
    # both samplers (inversion below count * p = 10, BTRS above), p on both sides of 1/2, edge values
    count = rng.integers(0, 300, 60).astype(dtype)
    prob = rng.uniform(0, 1, 60).astype(dtype)
    prob[:3] = (0, 1, 0.5)
    _same_stream(lambda: tp.binomial(tp.tensor(count), tp.tensor(prob)),
                 lambda: torch.binomial(torch.tensor(count), torch.tensor(prob)))


def test_poisson_stream(engine):
    rates = np.random.default_rng(4).uniform(0, 30, 80)  # both of ATen's samplers (rate below and above 10)
    rates[:2] = (0, 10)
    _same_stream(lambda: tp.poisson(tp.tensor(rates)), lambda: torch.poisson(torch.tensor(rates)))


def test_binomial_broadcasts_prob():
    count = np.full((3, 4), 20.0)
    _same_stream(lambda: tp.binomial(tp.tensor(count), tp.tensor([0.3])),
                 lambda: torch.binomial(torch.tensor(count), torch.tensor([0.3], dtype=torch.float64)))


@pytest.mark.parametrize("op", ["_standard_gamma", "_sample_dirichlet"])
def test_integer_input_refused_like_torch(op):
    with pytest.raises(NotImplementedError) as mine:
        getattr(tp, op)(tp.tensor([1, 2]))
    with pytest.raises(NotImplementedError) as ref:
        getattr(torch, op)(torch.tensor([1, 2]))
    assert str(mine.value) == str(ref.value)


def test_standard_gamma_grad_matches_aten():
    rng = np.random.default_rng(2)
    a = np.exp(rng.uniform(-3, 4, 3000))
    x = rng.gamma(a)
    mine = tp._standard_gamma_grad(tp.tensor(a), tp.tensor(x)).numpy()
    ref = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    # ATen's value is a fitted approximation (about 1e-3 relative at worst); ours the exact derivative
    np.testing.assert_allclose(mine, ref, rtol=2e-3, atol=1e-8)


def test_standard_gamma_grad_is_the_implicit_derivative():
    from scipy import special

    a, x, h = np.array([0.3, 2.5, 7.0, 40.0]), np.array([0.1, 3.0, 2.0, 44.0]), 1e-6
    dcdf = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) - x - special.gammaln(a))
    np.testing.assert_allclose(sampler_grads.gamma_grad(a, x), -dcdf / pdf, rtol=1e-6)


def test_dirichlet_grad_matches_aten():
    rng = np.random.default_rng(3)
    # concentrations from 0.02 to 400: small ones put x near 0 or 1, large ones need the continued fraction
    al, be = np.exp(rng.uniform(-4, 6, 4000)), np.exp(rng.uniform(-4, 6, 4000))
    x = torch._sample_dirichlet(torch.tensor(np.stack([al, be], -1))).numpy()[:, 0]
    args = (x, al, al + be)
    mine = tp._dirichlet_grad(*map(tp.tensor, args)).numpy()
    ref = torch._dirichlet_grad(*map(torch.tensor, args)).numpy()
    np.testing.assert_allclose(mine, ref, rtol=5e-3, atol=1e-10)


def test_dirichlet_grad_is_the_implicit_derivative():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for x, a, b in ((0.03, 5.5, 280.0), (0.5, 120.0, 130.0), (1e-8, 0.05, 3.0), (0.999, 4.0, 0.3)):
        X, A, B = mpmath.mpf(x), mpmath.mpf(a), mpmath.mpf(b)
        d_cdf = mpmath.diff(lambda s: mpmath.betainc(s, B, 0, X, regularized=True), A)
        exact = -d_cdf / (X ** (A - 1) * (1 - X) ** (B - 1) / mpmath.beta(A, B)) / (1 - X)
        ours = sampler_grads.beta_grad(np.array([x]), np.array([a]), np.array([a + b]))[0]
        assert ours == pytest.approx(float(exact), rel=1e-6), (x, a, b)


def test_standard_gamma_is_reparameterised():
    a = tp.tensor([0.5, 2.0, 9.0], dtype=tp.float64, requires_grad=True)
    tp.manual_seed(0)
    x = tp._standard_gamma(a)
    assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
    (g,) = tp.autograd.grad(x.sum(), a)
    np.testing.assert_allclose(g.numpy(), tp._standard_gamma_grad(a.detach(), x.detach()).numpy())


@pytest.mark.parametrize("call", [lambda t: tp._sample_dirichlet(t), lambda t: tp.binomial(t * 5, t / 4)])
def test_no_derivative_like_torch(call):
    t = tp.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^derivative for aten::.* is not implemented"):
        call(t).sum().backward()


def test_meta_shapes():
    a = tp.empty(2, 3, device="meta")
    for out in (tp._standard_gamma(a), tp._sample_dirichlet(a), tp.binomial(a, a), tp._standard_gamma_grad(a, a),
                tp._dirichlet_grad(a, a, a)):
        assert out.device.type == "meta" and out.shape == (2, 3) and out.dtype == tp.float32
