"""cpu random kernels: distributions (statistically), determinism, generators, RNG state, errors vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

N = 20000


def same_error(fn_tp, fn_torch):
    with pytest.raises(Exception) as ours:
        fn_tp()
    with pytest.raises(Exception) as theirs:
        fn_torch()
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)
    assert str(ours.value) == str(theirs.value).split("\n")[0]


def vals(t):
    return t.float().numpy() if t.dtype in (tp.bfloat16, tp.float16) else t.numpy()


# ---- uniform_ -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform(dtype):
    t = tp.empty(N, dtype=getattr(tp, dtype)).uniform_(-2, 3)
    v = vals(t)
    assert t.dtype.name == dtype
    assert v.min() >= -2 and v.max() < 3
    assert abs(v.mean() - 0.5) < 0.1
    assert abs(v.std() - 5 / np.sqrt(12)) < 0.1


def test_rand_and_defaults():
    t = tp.rand(100, 50)
    assert t.dtype is tp.float32 and t.shape == (100, 50)
    v = t.numpy()
    assert 0 <= v.min() and v.max() < 1 and abs(v.mean() - 0.5) < 0.02


def test_uniform_into_views_and_version():
    base = tp.zeros(4, 6)
    v0 = base._version
    base.t().narrow(0, 1, 2).uniform_(5, 6)
    arr = base.numpy()
    assert (arr[:, 1:3] >= 5).all() and (arr[:, [0, 3, 4, 5]] == 0).all()
    assert base._version == v0 + 1


def test_uniform_errors():
    same_error(lambda: tp.empty(2).uniform_(2, 1), lambda: torch.empty(2).uniform_(2, 1))
    same_error(lambda: tp.empty(3, dtype=tp.int64).uniform_(), lambda: torch.empty(3, dtype=torch.int64).uniform_())
    same_error(lambda: tp.zeros(1).expand(3).uniform_(), lambda: torch.zeros(1).expand(3).uniform_())


# ---- normal_ ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_normal(dtype):
    t = tp.empty(N, dtype=getattr(tp, dtype)).normal_(3, 2)
    v = vals(t)
    assert t.dtype.name == dtype
    assert abs(v.mean() - 3) < 0.1 and abs(v.std() - 2) < 0.1


def test_randn_and_normal_function():
    v = tp.randn(N).numpy()
    assert abs(v.mean()) < 0.05 and abs(v.std() - 1) < 0.05
    w = tp.normal(1.0, 0.5, (N,)).numpy()
    assert abs(w.mean() - 1) < 0.05 and abs(w.std() - 0.5) < 0.05
    assert (tp.empty(10).normal_(4, 0).numpy() == 4).all()


def test_normal_errors():
    same_error(lambda: tp.empty(3).normal_(0, -1), lambda: torch.empty(3).normal_(0, -1))
    same_error(lambda: tp.empty(3, dtype=tp.int64).normal_(), lambda: torch.empty(3, dtype=torch.int64).normal_())


# ---- random_ / randint --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "float32", "float64"])
def test_random_from_to(dtype):
    t = tp.empty(N, dtype=getattr(tp, dtype)).random_(-3 if dtype != "uint8" else 2, 7)
    v = t.numpy()
    lo = -3 if dtype != "uint8" else 2
    assert t.dtype.name == dtype
    assert set(np.unique(v).tolist()) == set(range(lo, 7))
    assert abs(v.mean() - (lo + 6) / 2) < 0.1


def test_random_defaults():
    b = tp.empty(1000, dtype=tp.bool).random_()
    assert set(np.unique(b.numpy()).tolist()) == {False, True}
    u = tp.empty(1000, dtype=tp.uint8).random_()
    assert u.numpy().max() > 200 and u.numpy().min() < 50
    f = tp.empty(1000).random_()
    v = f.numpy()
    assert v.min() >= 0 and v.max() <= 2**24 and (v == np.round(v)).all()
    r = tp.empty(1000, dtype=tp.int64).random_(10)
    assert set(np.unique(r.numpy()).tolist()) == set(range(10))
    big = tp.ops.aten.random_.__getattr__("from")(tp.empty(1000, dtype=tp.int16), 100, None)
    assert big.numpy().min() >= 100 and big.numpy().max() > 1000


def test_randint():
    t = tp.randint(3, 9, (N,))
    assert t.dtype is tp.int64 and set(np.unique(t.numpy()).tolist()) == set(range(3, 9))
    t = tp.randint(5, (2, 3), dtype=tp.int32)
    assert t.dtype is tp.int32 and t.shape == (2, 3) and t.numpy().max() < 5


def test_random_errors():
    same_error(lambda: tp.empty(3, dtype=tp.int64).random_(5, 3), lambda: torch.empty(3, dtype=torch.int64).random_(5, 3))
    same_error(lambda: tp.empty(3, dtype=tp.int8).random_(0, 300), lambda: torch.empty(3, dtype=torch.int8).random_(0, 300))
    same_error(lambda: tp.empty(3, dtype=tp.int8).random_(-200, 3), lambda: torch.empty(3, dtype=torch.int8).random_(-200, 3))
    same_error(lambda: tp.empty(3, dtype=tp.bool).random_(0, 3), lambda: torch.empty(3, dtype=torch.bool).random_(0, 3))
    with pytest.warns(UserWarning, match="to - 1 is out of bounds"):
        tp.empty(3).random_(0, 2**30)


# ---- bernoulli ---------------------------------------------------------------------------------------------------------------
def test_bernoulli_tensor_p():
    p = tp.full((N,), 0.3)
    s = tp.bernoulli(p)
    assert s.dtype is tp.float32 and set(np.unique(s.numpy()).tolist()) == {0.0, 1.0}
    assert abs(s.numpy().mean() - 0.3) < 0.02
    edge = tp.bernoulli(tp.tensor([0.0, 1.0, 0.0, 1.0], dtype=tp.float64))
    np.testing.assert_array_equal(edge.numpy(), [0, 1, 0, 1])
    assert edge.dtype is tp.float64
    assert abs(tp.bernoulli(p, 0.8).numpy().mean() - 0.8) < 0.02


def test_bernoulli_inplace():
    t = tp.empty(N).bernoulli_(0.25)
    assert abs(t.numpy().mean() - 0.25) < 0.02
    i = tp.empty(N, dtype=tp.int64).bernoulli_(0.5)
    assert i.dtype is tp.int64 and set(np.unique(i.numpy()).tolist()) == {0, 1}
    b = tp.empty(100, dtype=tp.bool).bernoulli_(1.0)
    assert b.numpy().all()


def test_bernoulli_errors():
    same_error(lambda: tp.empty(3).bernoulli_(1.5), lambda: torch.empty(3).bernoulli_(1.5))
    same_error(lambda: tp.bernoulli(tp.tensor([0.5, 1.5])), lambda: torch.bernoulli(torch.tensor([0.5, 1.5])))
    same_error(lambda: tp.bernoulli(tp.tensor([0, 1])), lambda: torch.bernoulli(torch.tensor([0, 1])))


# ---- multinomial -----------------------------------------------------------------------------------------------------------------
def test_multinomial_with_replacement():
    probs = tp.tensor([0.1, 0.0, 0.6, 0.3])
    s = tp.multinomial(probs, N, replacement=True)
    assert s.dtype is tp.int64 and s.shape == (N,)
    counts = np.bincount(s.numpy(), minlength=4) / N
    np.testing.assert_allclose(counts, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    rows = tp.multinomial(tp.tensor([[1.0, 0.0], [0.0, 2.0]]), 5, True)
    np.testing.assert_array_equal(rows.numpy(), [[0] * 5, [1] * 5])


def test_multinomial_without_replacement():
    probs = tp.tensor([1.0, 2.0, 3.0, 4.0])
    draws = np.stack([tp.multinomial(probs, 4).numpy() for _ in range(300)])
    for row in draws:
        assert sorted(row.tolist()) == [0, 1, 2, 3]
    first = np.bincount(draws[:, 0], minlength=4) / len(draws)
    np.testing.assert_allclose(first, [0.1, 0.2, 0.3, 0.4], atol=0.08)
    s = tp.multinomial(tp.tensor([0.0, 1.0, 0.0]), 1)
    np.testing.assert_array_equal(s.numpy(), [1])
    batch = tp.multinomial(tp.rand(3, 6) + 0.01, 6)
    assert batch.shape == (3, 6) and batch.stride() == (6, 1)
    for row in batch.numpy():
        assert sorted(row.tolist()) == list(range(6))


def test_multinomial_errors():
    cases = [
        (lambda m: m.multinomial(m.tensor([1.0, 1.0]), 3)),
        (lambda m: m.multinomial(m.tensor([1.0, 1.0]), 0)),
        (lambda m: m.multinomial(m.tensor([1, 1]), 1)),
        (lambda m: m.multinomial(m.ones(2, 2, 2), 1)),
        (lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1)),
        (lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1)),
        (lambda m: m.multinomial(m.tensor([float("nan"), 1.0]), 1)),
        (lambda m: m.multinomial(m.tensor(1.0), 1)),
    ]
    for case in cases:
        same_error(lambda: case(tp), lambda: case(torch))


# ---- determinism, generators, state -------------------------------------------------------------------------------------------------
def draw_all(generator=None):
    kw = {} if generator is None else {"generator": generator}
    return np.concatenate([
        tp.rand(5, **kw).numpy().astype(np.float64), tp.randn(5, **kw).numpy(), tp.randint(0, 100, (5,), **kw).numpy(),
        tp.randperm(5, **kw).numpy(), tp.bernoulli(tp.full((5,), 0.5), **kw).numpy(),
        tp.multinomial(tp.ones(5), 3, **kw).numpy(), tp.empty(5).uniform_(**kw).numpy(), tp.empty(5).normal_(**kw).numpy(),
        tp.empty(5, dtype=tp.int64).random_(0, 9, **kw).numpy(), tp.empty(5).bernoulli_(0.5, **kw).numpy(),
    ])


def test_manual_seed_determinism():
    tp.manual_seed(1234)
    a = draw_all()
    tp.manual_seed(1234)
    b = draw_all()
    np.testing.assert_array_equal(a, b)
    tp.manual_seed(4321)
    assert not np.array_equal(draw_all(), a)


def test_generator_isolation():
    tp.manual_seed(7)
    ref = draw_all()
    tp.manual_seed(7)
    g = tp.Generator().manual_seed(99)
    private = draw_all(g)
    np.testing.assert_array_equal(draw_all(), ref)  # the private generator did not advance the default one
    g2 = tp.Generator().manual_seed(99)
    np.testing.assert_array_equal(draw_all(g2), private)


def test_rng_state_roundtrip():
    tp.manual_seed(5)
    tp.rand(3)
    state = tp.get_rng_state()
    a = draw_all()
    tp.rand(10)
    tp.set_rng_state(state)
    np.testing.assert_array_equal(draw_all(), a)
    g = tp.Generator().manual_seed(11)
    st = g.get_state()
    x = tp.randn(4, generator=g).numpy()
    g.set_state(st)
    np.testing.assert_array_equal(tp.randn(4, generator=g).numpy(), x)
