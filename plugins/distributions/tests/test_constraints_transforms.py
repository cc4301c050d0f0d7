"""constraints, biject_to/transform_to and transforms against torch in float64: forward values, inverses,
log_abs_det_jacobian, shapes, and the constraints' check()."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 3))  # unconstrained input; batch of 4, last dim 3


def _both(fn):
    return fn(tp.distributions, tp), fn(torch.distributions, torch)


def _close(a, b, rtol=1e-9, atol=1e-10):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


# (id, constraint factory, input shape): biject_to and transform_to of each
CONSTRAINTS = [
    ("real", lambda C, L: C.real, (4, 3)),
    ("positive", lambda C, L: C.positive, (4, 3)),
    ("greater_than", lambda C, L: C.greater_than(L.tensor(1.5, dtype=L.float64)), (4, 3)),
    ("less_than", lambda C, L: C.less_than(-2.0), (4, 3)),
    ("unit_interval", lambda C, L: C.unit_interval, (4, 3)),
    ("interval", lambda C, L: C.interval(-1.0, 3.0), (4, 3)),
    ("half_open_interval", lambda C, L: C.half_open_interval(0.0, 2.0), (4, 3)),
    ("simplex", lambda C, L: C.simplex, (4, 3)),
    ("lower_cholesky", lambda C, L: C.lower_cholesky, (2, 3, 3)),
    ("positive_definite", lambda C, L: C.positive_definite, (2, 3, 3)),
    ("corr_cholesky", lambda C, L: C.corr_cholesky, (2, 3)),
    ("independent_positive", lambda C, L: C.independent(C.positive, 1), (4, 3)),
    ("cat", lambda C, L: C.cat([C.real, C.positive], dim=-1, lengths=[1, 2]), (4, 3)),
    ("stack", lambda C, L: C.stack([C.real, C.positive, C.unit_interval], dim=-1), (4, 3)),
    ("softplus_positive", lambda C, L: C.positive, (4, 3)),
]


def _steps(t, xt, check=None):
    """Each step's result or exception type: forward, inverse, log_abs_det_jacobian, shapes."""
    out = []
    y = t(xt)
    out.append(y)
    if check is not None:
        assert bool(check(y).all())
    for step in (lambda: t.inv(y), lambda: t.log_abs_det_jacobian(xt, y),
                 lambda: (tuple(t.forward_shape(xt.shape)), tuple(t.inverse_shape(y.shape))),
                 lambda: (t.domain.event_dim, t.codomain.event_dim, t.bijective)):
        try:
            out.append(step())
        except (NotImplementedError, ValueError) as e:
            out.append(type(e))
    return out


def _compare_steps(mine, ref, rtol=1e-8):
    for a, b in zip(mine, ref):
        if isinstance(b, torch.Tensor):
            _close(a, b, rtol=rtol, atol=1e-9)
        else:
            assert a == b


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("cid,make,shape", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_registry_transforms(registry, cid, make, shape):
    x = RNG.normal(size=shape)
    results = []
    for D, L in ((tp.distributions, tp), (torch.distributions, torch)):
        c = make(D.constraints, L)
        try:
            t = getattr(D, registry)(c)
        except NotImplementedError as e:  # torch registers no bijection for some constraints
            results.append(str(e))
            continue
        results.append((type(t).__name__, _steps(t, L.tensor(x), c.check)))
    mine, ref = results
    if isinstance(ref, str):
        assert mine == ref
        return
    assert mine[0] == ref[0]
    _compare_steps(mine[1], ref[1])


# (id, transform factory, input shape, in domain?)
TRANSFORMS = [
    ("exp", lambda T, L: T.ExpTransform(), (4, 3)),
    ("affine", lambda T, L: T.AffineTransform(L.tensor([1.0, -2.0, 0.5], dtype=L.float64), 3.0), (4, 3)),
    ("affine_event", lambda T, L: T.AffineTransform(0.5, L.tensor([[1.0, 2.0, 3.0]], dtype=L.float64), event_dim=1), (4, 3)),
    ("sigmoid", lambda T, L: T.SigmoidTransform(), (4, 3)),
    ("tanh", lambda T, L: T.TanhTransform(), (4, 3)),
    ("softplus", lambda T, L: T.SoftplusTransform(), (4, 3)),
    ("power", lambda T, L: T.ComposeTransform([T.ExpTransform(), T.PowerTransform(2.5)]), (4, 3)),
    ("abs", lambda T, L: T.AbsTransform(), (4, 3)),
    ("softmax", lambda T, L: T.SoftmaxTransform(), (4, 3)),
    ("stick_breaking", lambda T, L: T.StickBreakingTransform(), (4, 3)),
    ("lower_cholesky", lambda T, L: T.LowerCholeskyTransform(), (2, 3, 3)),
    ("positive_definite", lambda T, L: T.PositiveDefiniteTransform(), (2, 3, 3)),
    ("corr_cholesky", lambda T, L: T.CorrCholeskyTransform(), (2, 6)),
    ("compose", lambda T, L: T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.SigmoidTransform()]), (4, 3)),
    ("independent", lambda T, L: T.IndependentTransform(T.ExpTransform(), 1), (4, 3)),
    ("reshape", lambda T, L: T.ReshapeTransform((3,), (3, 1)), (4, 3)),
    ("cat", lambda T, L: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=-1, lengths=[1, 2]), (4, 3)),
    ("stack", lambda T, L: T.StackTransform([T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform()], dim=-1), (4, 3)),
    ("cdf", lambda T, L: T.CumulativeDistributionTransform(L.distributions.Normal(L.tensor(0.5, dtype=L.float64), 2.0)), (4, 3)),
    ("inverse_of_exp", lambda T, L: T.ExpTransform().inv, (4, 3)),
]


@pytest.mark.parametrize("tid,make,shape", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform(tid, make, shape):
    x = RNG.normal(size=shape)
    if tid == "inverse_of_exp":
        x = np.abs(x) + 0.1
    mine, ref = (_steps(make(L.distributions.transforms, L), L.tensor(x)) for L in (tp, torch))
    _compare_steps(mine, ref, rtol=1e-7)


def test_transform_equality_and_caching():
    T = tp.distributions.transforms
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform().inv.inv == T.ExpTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    t = T.ExpTransform(cache_size=1)
    x = tp.randn(3)
    y = t(x)
    assert t.inv(y) is x  # the cached input comes back, as torch's
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


@pytest.mark.parametrize("name,value", [
    ("boolean", [0.0, 1.0, 0.5]), ("nonnegative_integer", [0.0, 2.0, -1.0, 1.5]), ("positive", [1.0, 0.0, -1.0]),
    ("nonnegative", [0.0, -0.1]), ("unit_interval", [0.0, 1.0, 1.1]), ("simplex", [[0.2, 0.8], [0.5, 0.6]]),
    ("real_vector", [[1.0, float("nan")], [0.0, 1.0]]), ("corr_cholesky", [[[1.0, 0.0], [0.6, 0.8]], [[1.0, 0.0], [0.9, 0.9]]]),
    ("positive_definite", [[[2.0, 0.5], [0.5, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_semidefinite", [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("lower_cholesky", [[[1.0, 0.0], [2.0, 3.0]], [[1.0, 1.0], [0.0, 1.0]]]),
    ("square", [[1.0, 2.0], [3.0, 4.0]]), ("symmetric", [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [3.0, 1.0]]]),
])
def test_constraint_check(name, value):
    mine = getattr(tp.distributions.constraints, name).check(tp.tensor(value, dtype=tp.float64))
    ref = getattr(torch.distributions.constraints, name).check(torch.tensor(value, dtype=torch.float64))
    assert mine.tolist() == ref.tolist()


def test_constraint_properties():
    C, R = tp.distributions.constraints, torch.distributions.constraints
    for name in ("real", "positive", "simplex", "boolean", "integer_interval", "positive_definite", "corr_cholesky"):
        mine, ref = getattr(C, name), getattr(R, name)
        if callable(mine) and isinstance(mine, type):
            continue
        assert (mine.is_discrete, mine.event_dim) == (ref.is_discrete, ref.event_dim)
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert repr(C.interval(0.0, 1.0)) == repr(R.interval(0.0, 1.0))
