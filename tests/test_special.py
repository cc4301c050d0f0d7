"""torchplug.special against the installed PyTorch: the namespace's names, values in float64 and float32
(special values included), dtype rules and errors, Python-number operands, ``out=``, and gradients (torch's,
gradcheck, and the functions torch gives none).

The conformance suite (``torchplug/testing/opinfos/special.py``) runs the new primitives on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
SPECIAL_VALUES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-8, -3.0, 30.0, -30.0, np.inf, -np.inf, np.nan])
UNARY = ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
         "spherical_bessel_j0", "entr", "erfcx", "i0e", "i1e", "i1", "log_ndtr", "ndtr", "ndtri")
POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")
SHARED = ("digamma", "psi", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "log1p", "sinc",
          "round")
# torch's float64 Airy and Bessel kernels are accurate to about 1e-7 absolute (torchplug's are SciPy's, to
# double precision), so their float64 comparisons allow that much
LOOSE64 = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"}


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def _assert_same(a, b, rtol, atol):
    assert _name(a.dtype) == _name(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol, equal_nan=True)


def test_the_namespace_is_torchs():
    ours = set(tp.special.__all__)
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n))}
    theirs -= {"Tensor"}
    assert ours == theirs
    import importlib

    assert importlib.import_module("torchplug.special") is tp.special
    from torchplug.special import bessel_j0, zeta  # noqa: F401


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_match_torch(name):
    x = np.concatenate([SPECIAL_VALUES, RNG.uniform(-10, 10, 40), RNG.uniform(0, 1, 10)])
    for dtype, tol in ((np.float64, 2e-6 if name in LOOSE64 else 1e-10), (np.float32, 1e-4)):
        a = getattr(tp.special, name)(tp.tensor(x.astype(dtype)))
        b = getattr(torch.special, name)(torch.tensor(x.astype(dtype)))
        _assert_same(a, b, rtol=tol if name not in LOOSE64 else 2e-4, atol=tol)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name):
    # x on the special points (+-1, 0, 1/2) and around them; n negative, zero, small, high (the closed forms),
    # and fractional (truncated to an integer)
    xs = np.concatenate([[0.0, 1.0, -1.0, 0.5, 2.0, -2.5, np.inf], RNG.uniform(-1.5, 1.5, 20)])
    ns = np.array([-3, -1, 0, 1, 2, 3, 5, 7, 9, 10, 12, 20, 0.5, 2.7, -0.5])
    x, n = np.meshgrid(xs, ns)
    for dtype, tol in ((np.float64, 1e-9), (np.float32, 1e-4)):
        a = getattr(tp.special, name)(tp.tensor(x.astype(dtype)), tp.tensor(n.astype(dtype)))
        b = getattr(torch.special, name)(torch.tensor(x.astype(dtype)), torch.tensor(n.astype(dtype)))
        _assert_same(a, b, rtol=tol, atol=tol)
    # integer degrees and Python numbers for either argument
    a = getattr(tp.special, name)(tp.tensor(xs[:-1]), 4)
    b = getattr(torch.special, name)(torch.tensor(xs[:-1]), 4)
    _assert_same(a, b, 1e-9, 1e-9)
    a = getattr(tp.special, name)(0.25, tp.arange(6))
    b = getattr(torch.special, name)(0.25, torch.arange(6))
    _assert_same(a, b, 1e-6, 1e-6)


@pytest.mark.parametrize("name", ("xlog1py", "zeta", "xlogy", "gammainc", "gammaincc"))
def test_binary_values_match_torch(name):
    x = np.concatenate([[0.0, 0.0, 1.0, 2.0, 2.0, 1.0, np.nan, 3.0], RNG.uniform(0.1, 6, 20)])
    y = np.concatenate([[-1.0, np.nan, 1.0, 0.0, -1.0, -2.5, 1.0, -1.5], RNG.uniform(-0.9, 5, 20)])
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 1e-4)):
        a = getattr(tp.special, name)(tp.tensor(x.astype(dtype)), tp.tensor(y.astype(dtype)))
        b = getattr(torch.special, name)(torch.tensor(x.astype(dtype)), torch.tensor(y.astype(dtype)))
        _assert_same(a, b, tol, tol)
    for args in ((2.0, y), (x, 3)):
        ta = [tp.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
        tb = [torch.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
        if name.startswith("gammainc"):  # torch has no Scalar overloads for these
            with pytest.raises(TypeError):
                getattr(torch.special, name)(*tb)
            with pytest.raises(TypeError):
                getattr(tp.special, name)(*ta)
            continue
        _assert_same(getattr(tp.special, name)(*ta), getattr(torch.special, name)(*tb), 1e-10, 1e-10)


@pytest.mark.parametrize("name", SHARED)
def test_shared_functions_match_torch(name):
    x = np.concatenate([[0.0, 1.0, -1.0, 0.5, np.inf, np.nan], RNG.uniform(-0.99, 0.99, 20)])
    a, b = getattr(tp.special, name)(tp.tensor(x)), getattr(torch.special, name)(torch.tensor(x))
    _assert_same(a, b, 1e-10, 1e-10)
    out_a, out_b = tp.empty(0, dtype=tp.float64), torch.empty(0, dtype=torch.float64)
    getattr(tp.special, name)(tp.tensor(x), out=out_a)
    getattr(torch.special, name)(torch.tensor(x), out=out_b)
    _assert_same(out_a, out_b, 1e-10, 1e-10)


def test_functions_with_extra_arguments_match_torch():
    x = RNG.uniform(1.5, 5, (3, 4))
    pairs = [
        (lambda m, t: m.special.polygamma(2, t), 1e-10),
        (lambda m, t: m.special.multigammaln(t, 3), 1e-10),
        (lambda m, t: m.special.logit(t / 10, eps=0.2), 1e-10),
        (lambda m, t: m.special.logsumexp(t, 1, keepdim=True), 1e-10),
        (lambda m, t: m.special.softmax(t, 0, dtype=m.float32), 1e-6),
        (lambda m, t: m.special.log_softmax(t, -1), 1e-10),
        (lambda m, t: m.special.round(t, decimals=1), 1e-12),
        (lambda m, t: m.special.xlogy(t, 2.0), 1e-10),
    ]
    for fn, tol in pairs:
        _assert_same(fn(tp, tp.tensor(x)), fn(torch, torch.tensor(x)), tol, tol)


@pytest.mark.parametrize("name", (*UNARY, "xlog1py", "zeta", "chebyshev_polynomial_t", "laguerre_polynomial_l"))
def test_dtype_rules_and_errors_match_torch(name):
    binary = name in ("xlog1py", "zeta") or "polynomial" in name
    for dtype in ("bool", "int64", "float16", "bfloat16", "float32", "float64", "complex64"):
        args_a = [tp.ones(3, dtype=getattr(tp, dtype))] * (2 if binary else 1)
        args_b = [torch.ones(3, dtype=getattr(torch, dtype))] * (2 if binary else 1)
        try:
            expected = getattr(torch.special, name)(*args_b)
        except Exception as exc:  # noqa: BLE001 - the type and text are what is compared
            with pytest.raises(type(exc)) as ours:
                getattr(tp.special, name)(*args_a)
            assert str(ours.value) == str(exc)
            continue
        got = getattr(tp.special, name)(*args_a)
        assert _name(got.dtype) == _name(expected.dtype), (name, dtype)
        np.testing.assert_allclose(got.float().numpy(), expected.float().numpy(), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("name", ("bessel_j0", "erfcx", "xlog1py", "hermite_polynomial_h", "ndtr"))
def test_out(name):
    binary = name == "xlog1py" or "polynomial" in name
    x = RNG.uniform(0, 3, (2, 3))
    args_a = [tp.tensor(x)] * (2 if binary else 1)
    args_b = [torch.tensor(x)] * (2 if binary else 1)
    out_a, out_b = tp.empty(0, dtype=tp.float64), torch.empty(0, dtype=torch.float64)
    assert getattr(tp.special, name)(*args_a, out=out_a) is out_a
    getattr(torch.special, name)(*args_b, out=out_b)
    _assert_same(out_a, out_b, 1e-10, 1e-10)
    with pytest.raises(RuntimeError) as ours:
        getattr(tp.special, name)(*args_a, out=tp.empty(0, dtype=tp.int64))
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.special, name)(*args_b, out=torch.empty(0, dtype=torch.int64))
    assert str(ours.value) == str(theirs.value)


# ---- gradients --------------------------------------------------------------------------------------------
DIFFERENTIABLE = {  # name -> (value range of the input, node name)
    "entr": ((0.1, 3), "SpecialEntrBackward0"), "erfcx": ((-2, 3), "SpecialErfcxBackward0"),
    "i0e": ((-3, 3), "SpecialI0EBackward0"), "i1e": ((-3, 3), "SpecialI1EBackward0"),
    "i1": ((-3, 3), "SpecialI1Backward0"), "log_ndtr": ((-5, 5), "SpecialLogNdtrBackward0"),
    "ndtri": ((0.05, 0.95), "SpecialNdtriBackward0"), "ndtr": ((-3, 3), None),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_unary_gradients_match_torch(name):
    (low, high), node = DIFFERENTIABLE[name]
    x = np.concatenate([RNG.uniform(low, high, 10), [0.0] if low < 0 < high and name == "i1e" else []])
    grads, names = [], []
    for m in (tp, torch):
        t = m.tensor(x, requires_grad=True)
        y = getattr(m.special, name)(t)
        names.append(y.grad_fn.name())
        (y * m.tensor(np.linspace(0.5, 2, x.size))).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)
    if node is not None:
        assert names[0] == names[1] == node
    t = tp.tensor(RNG.uniform(low, high, 5), requires_grad=True)
    assert tp.autograd.gradcheck(getattr(tp.special, name), (t,))


@pytest.mark.parametrize("name", ("xlog1py", "zeta"))
def test_binary_gradients_match_torch(name):
    x = np.array([0.0, 1.5, 2.0, 3.0]) if name == "xlog1py" else np.array([2.0, 3.5, 4.0, 1.5])
    y = np.array([-1.0, 0.5, 2.0, -0.5]) if name == "xlog1py" else np.array([1.0, 2.0, 0.5, 3.0])
    for which in (0, 1):
        if name == "zeta" and which == 0:
            continue
        results = []
        for m in (tp, torch):
            args = [m.tensor(x, requires_grad=which == 0), m.tensor(y, requires_grad=which == 1)]
            out = getattr(m.special, name)(*args)
            out.sum().backward()
            results.append((out.grad_fn.name(), args[which].grad.numpy()))
        assert results[0][0] == results[1][0]
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-10, equal_nan=True)
    # the Python-number forms name their nodes as torch's Scalar overloads do
    for m in (tp, torch):
        t = m.tensor(y[1:], requires_grad=True)
        assert getattr(m.special, name)(2.5, t).grad_fn.name().endswith("Backward1")
    a = tp.tensor(x[1:], requires_grad=True)
    assert tp.autograd.gradcheck(lambda v: getattr(tp.special, name)(v, tp.tensor(y[1:] + 1.5)) if name == "xlog1py"
                                 else tp.special.zeta(tp.tensor(x[1:]), v.abs() + 0.5), (a,))


def test_zeta_has_no_gradient_for_its_first_argument_like_torch():
    errors = []
    for m in (tp, torch):
        x = m.tensor([2.0, 3.0], requires_grad=True)
        y = m.special.zeta(x, m.tensor([1.0, 2.0]))
        with pytest.raises(NotImplementedError) as info:
            y.sum().backward()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ("airy_ai", "bessel_j0", "modified_bessel_k1", "spherical_bessel_j0",
                                  "chebyshev_polynomial_t", "legendre_polynomial_p"))
def test_functions_torch_does_not_differentiate(name):
    args = [tp.tensor([0.3, 0.7], requires_grad=True)] * (2 if "polynomial" in name else 1)
    ref = [torch.tensor([0.3, 0.7], requires_grad=True)] * (2 if "polynomial" in name else 1)
    assert getattr(tp.special, name)(*args).requires_grad is getattr(torch.special, name)(*ref).requires_grad is False


def test_meta_results_match_torch():
    for name in ("bessel_y1", "entr", "ndtri", "xlog1py", "zeta", "hermite_polynomial_he"):
        binary = name in ("xlog1py", "zeta") or "polynomial" in name
        a = getattr(tp.special, name)(*[tp.empty(2, 3, device="meta", dtype=tp.float64)] * (2 if binary else 1))
        b = getattr(torch.special, name)(*[torch.empty(2, 3, device="meta", dtype=torch.float64)] * (2 if binary else 1))
        assert (tuple(a.shape), _name(a.dtype)) == (tuple(b.shape), _name(b.dtype))
