"""The CPU random stream equals PyTorch's bit for bit: every distribution, size path, dtype and
layout after the same seed, interleaved sequences, generator states moved between the two
libraries, module initialisation and the data-loading shuffles.

Each case seeds both libraries identically, runs the same calls on each and compares the bits
(``assert_same``).  PyTorch's AVX2/AVX512 kernels and its ``ATEN_CPU_CAPABILITY=default`` build
differ in a few places (fused multiply-adds, avx_mathfun's float normal); torchplug reads the same
environment, so these comparisons hold under either.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import torchplug as tp
from torchplug_cpu import _stream

torch = pytest.importorskip("torch")

SEEDS = (0, 1, 123456789, 2**40 + 3)
SIZES = (1, 5, 15, 16, 17, 100, 1000)
FLOATS = ("float32", "float64")
# float normal_fill, log/exp/tan based distributions: exact through the C kernels (the C library's
# functions); the NumPy fallback (no compiler) agrees to the last bit or two only
needs_c = pytest.mark.skipif(_stream._C is None, reason="torchplug_cpu._crandom not built (NumPy fallback)")
# float32 normal_fill of contiguous tensors: the fallback replays avx_mathfun exactly (AVX2 machines);
# PyTorch's default build uses the C library's logf/cosf there, which NumPy's float32 functions are not
needs_exact_float_normal = pytest.mark.skipif(_stream._C is None and not _stream.FUSED,
                                              reason="no C kernels and PyTorch's default-capability float normal")


def _np(t) -> np.ndarray:
    if t.dtype in (torch.bfloat16,):
        return t.float().numpy()
    if t.dtype == tp.bfloat16:
        return np.asarray(t.float().numpy())
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy())


def assert_same(a, b) -> None:
    """Same shape, dtype and bits (so -0.0 and 0.0 differ, as NaN payloads would)."""
    x, y = _np(a), _np(b)
    assert x.shape == y.shape, (x.shape, y.shape)
    assert x.dtype == y.dtype, (x.dtype, y.dtype)
    if x.dtype.kind == "f":
        x, y = x.view(f"u{x.itemsize}"), y.view(f"u{y.itemsize}")
    mismatch = np.flatnonzero(x.reshape(-1) != y.reshape(-1))
    assert mismatch.size == 0, f"{mismatch.size} of {x.size} differ, first at {mismatch[:5]}:\n{a}\n{b}"


def both(seed, fn, *, seed_both=True):
    """``fn(torch)`` and ``fn(tp)`` after seeding both; then the next draw of each must agree too."""
    if seed_both:
        torch.manual_seed(seed)
        tp.manual_seed(seed)
    a, b = fn(torch), fn(tp)
    assert_same(a, b)
    assert_same(torch.rand(3, dtype=torch.float64), tp.rand(3, dtype=tp.float64))  # streams still in step
    return a, b


# ---- the engine and seeding -------------------------------------------------------------------------
def test_issue_example():
    tp.manual_seed(0)
    assert tp.rand(3).tolist() == pytest.approx([0.4963, 0.7682, 0.0885], abs=1e-4)
    both(0, lambda m: m.rand(3))


@pytest.mark.parametrize("seed", [*SEEDS, -1, -(2**63), 2**64 - 1])
def test_seeds_including_negative_and_64_bit(seed):
    both(seed, lambda m: m.rand(7))
    assert tp.initial_seed() == torch.initial_seed()


def test_seed_conversions_and_errors_like_torch():
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError, match="^Overflow when unpacking long long$"):
            tp.manual_seed(bad)
        with pytest.raises(ValueError, match="^Overflow when unpacking long long$"):
            torch.manual_seed(bad)
    for loose in (1.5, "3", True):  # torch.manual_seed takes int(seed)
        assert tp.manual_seed(loose).initial_seed() == torch.manual_seed(loose).initial_seed()
    for strict in (1.5, "3", True):  # Generator.manual_seed takes integers only
        with pytest.raises(RuntimeError) as ours:
            tp.Generator().manual_seed(strict)
        with pytest.raises(RuntimeError) as theirs:
            torch.Generator().manual_seed(strict)
        assert str(ours.value) == str(theirs.value)


def test_new_generator_uses_torch_default_seed():
    assert tp.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert_same(torch.rand(5, generator=torch.Generator()), tp.rand(5, generator=tp.Generator()))


def test_default_generator_seeded_per_process():
    code = "import torchplug; print(torchplug.initial_seed())"
    seeds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
             for _ in range(2)}
    assert len(seeds) == 2


def test_seed_is_64_bit_and_reseeds():
    s = tp.seed()
    assert 0 <= s < 2**64 and tp.initial_seed() == s
    torch.manual_seed(s)
    assert_same(torch.rand(4), tp.rand(4))


# ---- uniform ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand(seed, n, dtype):
    both(seed, lambda m: m.rand(n, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("dtype", (*FLOATS, "float16", "bfloat16"))
@pytest.mark.parametrize("bounds", [(-3.3, 7.1), (2.0, 2.5), (-1e-3, 0.0), (0.0, 1.0)])
def test_uniform_ranges(dtype, bounds):
    both(11, lambda m: m.empty(1000, dtype=getattr(m, dtype)).uniform_(*bounds))


@pytest.mark.parametrize("dtype", (*FLOATS, "float16", "bfloat16"))
@pytest.mark.parametrize("n", (0, 3))
def test_uniform_bound_errors(dtype, n):
    for bounds in [(-3e38, 3e38), (0, float("inf")), (float("nan"), 1), (-1e308, 1e308), (2, 1), (-6e4, 6e4)]:
        outcome = []
        for m in (torch, tp):
            try:
                outcome.append(m.empty(n, dtype=getattr(m, dtype)).uniform_(*bounds).float().tolist())
            except RuntimeError as e:
                outcome.append(str(e))
        assert outcome[0] == outcome[1], bounds


@pytest.mark.parametrize("dtype", FLOATS)
def test_odd_shapes_and_non_contiguous_outputs(dtype):
    views = [
        lambda m: m.empty(3, 7, 5, dtype=getattr(m, dtype)),
        lambda m: m.empty(20, 3, dtype=getattr(m, dtype)).t(),
        lambda m: m.empty(4, 5, 6, dtype=getattr(m, dtype))[:, ::2, 1:],
        lambda m: m.empty(2, 3, 4, 5, dtype=getattr(m, dtype)).permute(0, 2, 3, 1),
        lambda m: m.empty(6, 1, 4, dtype=getattr(m, dtype)).transpose(0, 2),
    ]
    fills = [lambda t: t.uniform_(), lambda t: t.uniform_(-2.0, 3.0), lambda t: t.bernoulli_(0.4),
             lambda t: t.random_(0, 9), lambda t: t.random_()]
    if _stream._C is not None:  # log/sin/cos: the C library's in the C kernels, NumPy's in the fallback
        fills += [lambda t: t.normal_(), lambda t: t.normal_(2.0, 3.0), lambda t: t.exponential_(2.0)]
    for make in views:
        for fill in fills:
            a, b = both(5, lambda m: fill(make(m)))
            assert a.stride() == b.stride()


# ---- normal -----------------------------------------------------------------------------------------
@needs_c
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_size_paths(seed, n, dtype):
    # n < 16: Box-Muller with the cached second sample; n >= 16: normal_fill in blocks of 16
    both(seed, lambda m: m.randn(n, dtype=getattr(m, dtype)))


@needs_c
@pytest.mark.parametrize("dtype", ("float16", "bfloat16"))
@pytest.mark.parametrize("n", (5, 16, 17, 40))
def test_randn_reduced_precision(dtype, n):
    both(3, lambda m: m.randn(n, dtype=getattr(m, dtype)))


@needs_c
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", (3, 16, 33, 1000))
def test_normal_mean_std(dtype, n):
    both(4, lambda m: m.empty(n, dtype=getattr(m, dtype)).normal_(1.5, 2.5))
    both(4, lambda m: m.normal(-2.0, 0.5, (n,), dtype=getattr(m, dtype)))


@needs_c
@pytest.mark.parametrize("n", (7, 40))
def test_normal_with_tensor_mean_and_std(n):
    both(6, lambda m: m.normal(m.arange(float(n)), 2.0))
    both(6, lambda m: m.normal(1.0, m.arange(float(n))))
    both(6, lambda m: m.normal(m.arange(float(n)), m.linspace(0.1, 2.0, n)))
    both(6, lambda m: m.normal(m.zeros(4, 1), m.ones(1, 5, dtype=m.float64).float()))


@needs_c
def test_cached_normal_sample_spans_calls():
    def seq(m):
        return m.cat([m.randn(1, dtype=m.float64), m.randn(1, dtype=m.float64), m.randn(3).double(),
                      m.rand(2, dtype=m.float64), m.randn(5, dtype=m.float64), m.randn(20).double(),
                      m.randn(1, dtype=m.float64)])

    both(9, seq)


# ---- integers ---------------------------------------------------------------------------------------
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "float32", "float64", "float16", "bfloat16")


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("n", (1, 17, 1000))
def test_randint_small_and_negative_ranges(dtype, n):
    both(2, lambda m: m.randint(0, 10, (n,), dtype=getattr(m, dtype)))
    both(2, lambda m: m.randint(-7, 3, (n,), dtype=getattr(m, dtype)) if dtype != "uint8" else m.randint(3, (n,)))


@pytest.mark.parametrize("bounds", [(0, 2**32), (-2**40, 2**40), (-2**62, 2**62 + 5), (5, 2**33 + 1)])
def test_randint_wide_ranges_use_random64(bounds):
    both(3, lambda m: m.randint(*bounds, (50,)))
    if bounds[1] <= 2**53:  # (wider ranges warn for doubles)
        both(3, lambda m: m.randint(*bounds, (50,), dtype=m.float64))


@pytest.mark.parametrize("dtype", (*INT_DTYPES, "bool"))
def test_random_default_and_from_ranges(dtype):
    both(8, lambda m: m.empty(100, dtype=getattr(m, dtype)).random_())
    both(8, lambda m: m.empty(100, dtype=getattr(m, dtype)).random_(2))
    if dtype not in ("bool", "uint8"):
        both(8, lambda m: m.empty(100, dtype=getattr(m, dtype)).random_(-5, None))
    both(8, lambda m: m.empty(100, dtype=m.int64).random_(-(2**63), None))  # the full 64-bit range


@pytest.mark.parametrize("dtype", ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
                                   "uint8", "bool"))
def test_random_bounds_beyond_the_dtype(dtype):
    """Float bounds moved onto representable values (update_from/update_to), ATen's range checks,
    errors and the full-range kernel's dtype list."""
    import warnings

    cases = [(-2000, 2000), (0, 2000), (100, 70000), (3, 10**9), (-(2**40), 2**40), (-3000, None), (1999, None),
             (-(2**63), None), (-(2**63), 2**63 - 1), (2**62, None), (2, 1)]
    for bounds in cases:
        outcome = []
        for m in (torch, tp):
            m.manual_seed(0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    outcome.append(m.empty(300, dtype=getattr(m, dtype)).random_(*bounds).double().numpy())
            except (RuntimeError, NotImplementedError) as e:
                outcome.append(f"{type(e).__name__}: {e}")
        a, b = outcome
        if isinstance(a, str) or isinstance(b, str):
            assert a == b, bounds
        else:
            assert np.array_equal(a, b), bounds


@pytest.mark.parametrize("n", (0, 1, 2, 5, 16, 1000, 100_000))
@pytest.mark.parametrize("dtype", ("int64", "int32", "float32"))
def test_randperm(n, dtype):
    both(7, lambda m: m.randperm(n, dtype=getattr(m, dtype)))


# ---- bernoulli, dropout -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", (*FLOATS, "bool", "int64", "uint8"))
@pytest.mark.parametrize("p", (0.0, 0.3, 0.5, 1.0))
def test_bernoulli_scalar_p(dtype, p):
    both(12, lambda m: m.empty(3, 33, dtype=getattr(m, dtype)).bernoulli_(p))
    both(12, lambda m: m.bernoulli(m.empty(19, dtype=getattr(m, dtype)), p) if dtype in FLOATS else m.rand(1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_tensor_p(dtype):
    both(13, lambda m: m.bernoulli(m.linspace(0, 1, 101, dtype=getattr(m, dtype))))
    both(13, lambda m: m.bernoulli(m.rand(9, 6, dtype=getattr(m, dtype)).t()))  # p laid out transposed


@pytest.mark.parametrize("dtype", (*FLOATS, "bool", "int32"))
def test_bernoulli_in_place_with_tensor_p_and_method_p(dtype):
    dt = lambda m: getattr(m, dtype)  # noqa: E731
    both(19, lambda m: m.empty(4, 5, dtype=dt(m)).bernoulli_(m.linspace(0, 1, 5)))  # p broadcast over self
    both(19, lambda m: m.empty(5, 4, dtype=dt(m)).t().bernoulli_(m.rand(4, 5, dtype=m.float64)))  # self transposed
    both(19, lambda m: m.empty(2, 9, dtype=dt(m)).t().bernoulli(0.3))
    for bad in (lambda m: m.full((2, 5), 0.5), lambda m: m.full((3,), 0.5)):
        with pytest.raises(RuntimeError) as theirs:
            torch.empty(4, 5).bernoulli_(bad(torch))
        with pytest.raises(RuntimeError) as ours:
            tp.empty(4, 5).bernoulli_(bad(tp))
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("p", (0.1, 0.5, 0.9))
def test_dropout_masks(p):
    both(14, lambda m: m.nn.functional.dropout(m.ones(7, 9), p))
    both(14, lambda m: m.nn.Dropout(p)(m.arange(40.0).reshape(5, 8)))
    both(14, lambda m: m.nn.functional.dropout2d(m.ones(3, 4, 2, 5), p))
    both(14, lambda m: m.nn.Dropout2d(p)(m.ones(2, 6, 3, 3)))
    both(14, lambda m: m.nn.functional.dropout1d(m.ones(3, 4, 5), p))
    both(14, lambda m: m.nn.functional.alpha_dropout(m.arange(30.0), p, training=True))
    both(14, lambda m: m.nn.functional.dropout(m.ones(33, dtype=m.float64), p, training=True))


# ---- the other distributions ------------------------------------------------------------------------
@needs_c
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", (1, 5, 16, 17, 1000))
def test_exponential_geometric_log_normal_cauchy(dtype, n):
    dt = lambda m: getattr(m, dtype)  # noqa: E731
    both(15, lambda m: m.empty(n, dtype=dt(m)).exponential_())
    both(15, lambda m: m.empty(n, dtype=dt(m)).exponential_(3.5))
    both(15, lambda m: m.empty(n, dtype=dt(m)).geometric_(0.2))
    both(15, lambda m: m.empty(n, dtype=m.int64).geometric_(0.7))
    both(15, lambda m: m.empty(n, dtype=dt(m)).log_normal_())
    both(15, lambda m: m.empty(n, dtype=dt(m)).log_normal_(0.5, 0.25))
    both(15, lambda m: m.empty(n, dtype=dt(m)).cauchy_())
    both(15, lambda m: m.empty(n, dtype=dt(m)).cauchy_(-1.0, 0.5))


@needs_c
@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial(dtype):
    dt = lambda m: getattr(m, dtype)  # noqa: E731
    probs = lambda m: m.tensor([[0.1, 0.0, 0.3, 0.6], [2.0, 1.0, 1.0, 4.0], [0.0, 0.0, 1.0, 0.0]], dtype=dt(m))  # noqa: E731
    both(16, lambda m: m.multinomial(probs(m), 7, replacement=True))
    both(16, lambda m: m.multinomial(probs(m)[1], 50, replacement=True))
    both(16, lambda m: m.multinomial(probs(m)[:2], 2))
    both(16, lambda m: m.multinomial(probs(m)[1], 4))
    both(16, lambda m: m.multinomial(probs(m), 1, replacement=True))  # n_sample == 1 takes the exponential path
    both(16, lambda m: m.multinomial(m.rand(5, 300, dtype=dt(m)), 40))


@needs_c
@pytest.mark.parametrize("dtype", FLOATS)
def test_poisson(dtype):
    both(17, lambda m: m.poisson(m.tensor([0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 1e3], dtype=getattr(m, dtype))))
    both(17, lambda m: m.poisson(m.rand(40, 3, dtype=getattr(m, dtype)).t() * 30))


@needs_c
def test_like_factories_keep_layout():
    for make in (lambda m: m.empty(5, 7), lambda m: m.empty(20, 3).t(), lambda m: m.empty(2, 3, 4, 5).permute(0, 2, 3, 1)):
        a, b = both(18, lambda m: m.rand_like(make(m)))
        assert a.stride() == b.stride()
        both(18, lambda m: m.randn_like(make(m)))
        both(18, lambda m: m.randn_like(make(m), dtype=m.float64))
        both(18, lambda m: m.randint_like(make(m), 3, 11))


# ---- sequences and states ---------------------------------------------------------------------------
def _mixed_sequence(m):
    out = [m.rand(5), m.randint(0, 100, (7,)).float(), m.randperm(9).float(), m.empty(4).bernoulli_(0.5),
           m.rand(2, dtype=m.float64).float()]
    if _stream._C is not None:
        out += [m.randn(3), m.randn(21), m.randn(1, dtype=m.float64).float(), m.empty(3).exponential_(),
                m.randn(2, dtype=m.float64).float(), m.empty(5).log_normal_()]
    return m.cat(out)


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_sequences(seed):
    both(seed, _mixed_sequence)
    both(seed, lambda m: m.cat([_mixed_sequence(m) for _ in range(3)]))


def _state_bytes(state) -> bytes:
    return bytes(np.asarray(state.tolist(), dtype=np.uint8))


@pytest.mark.parametrize("prefix", [lambda m: None, lambda m: m.rand(5), lambda m: m.rand(700),
                                    lambda m: m.randn(3, dtype=m.float64)])  # the last leaves a cached normal
def test_state_bytes_equal_torch(prefix):
    torch.manual_seed(21)
    tp.manual_seed(21)
    prefix(torch)
    prefix(tp)
    ours, theirs = _state_bytes(tp.get_rng_state()), bytes(torch.get_rng_state().numpy())
    assert len(ours) == len(theirs) == 5056
    assert ours == theirs


@pytest.mark.parametrize("draws", [0, 3, 624, 1000])
def test_state_moves_between_libraries(draws):
    torch.manual_seed(22)
    torch.rand(draws)
    torch.randn(1, dtype=torch.float64)  # a cached second sample travels in the state too
    tp.set_rng_state(tp.tensor(torch.get_rng_state().tolist(), dtype=tp.uint8))
    assert tp.initial_seed() == 22
    both(None, _mixed_sequence, seed_both=False)
    # and back: torchplug's state set into torch
    tp.manual_seed(23)
    tp.rand(draws)
    torch.set_rng_state(torch.tensor(list(_state_bytes(tp.get_rng_state())), dtype=torch.uint8))
    both(None, _mixed_sequence, seed_both=False)


def test_generator_states():
    g1, g2 = torch.Generator().manual_seed(31), tp.Generator().manual_seed(31)
    torch.rand(10, generator=g1)
    tp.rand(10, generator=g2)
    assert _state_bytes(g2.get_state()) == bytes(g1.get_state().numpy())
    saved = g2.get_state()
    first = tp.rand(6, generator=g2)
    g2.set_state(saved)
    assert_same(first, tp.rand(6, generator=g2))
    g1.set_state(torch.tensor(list(_state_bytes(saved)), dtype=torch.uint8))
    assert_same(torch.rand(6, generator=g1), first)


def test_generator_pickles_and_copies_with_its_state():
    import copy
    import pickle

    g = tp.Generator().manual_seed(5)
    tp.randn(3, dtype=tp.float64, generator=g)  # leaves a cached normal sample
    for other in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert other.initial_seed() == 5
        assert_same(tp.randn(5, dtype=tp.float64, generator=other), tp.randn(5, dtype=tp.float64, generator=g.clone_state()))
    with pytest.raises(RuntimeError, match="^CPU Generator does not use offset$"):
        g.get_offset()


def test_bad_states_raise_like_torch():
    cases = [lambda m: m.zeros(100, dtype=m.uint8), lambda m: m.zeros(5048, dtype=m.uint8),
             lambda m: m.zeros(5056, dtype=m.uint8), lambda m: m.zeros(5056)]
    for make in cases:
        with pytest.raises((RuntimeError, TypeError)) as theirs:
            torch.Generator().set_state(make(torch))
        with pytest.raises(theirs.type) as ours:
            tp.Generator().set_state(make(tp))
        assert str(ours.value) == str(theirs.value)


def test_fork_rng_restores_the_stream():
    tp.manual_seed(41)
    torch.manual_seed(41)
    with tp.random.fork_rng(devices=[]):
        tp.rand(100)
    assert_same(torch.rand(4), tp.rand(4))


# ---- modules and data loading -----------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda m: m.nn.Linear(20, 7), lambda m: m.nn.Conv2d(3, 8, 3), lambda m: m.nn.Conv1d(4, 6, 5, bias=False),
    lambda m: m.nn.ConvTranspose2d(3, 2, 3), lambda m: m.nn.Embedding(10, 4), lambda m: m.nn.LSTM(5, 7, 2),
    lambda m: m.nn.GRU(3, 4), lambda m: m.nn.Bilinear(3, 4, 5), lambda m: m.nn.MultiheadAttention(8, 2),
    lambda m: m.nn.Sequential(m.nn.Linear(64, 32), m.nn.ReLU(), m.nn.Linear(32, 10)),
])
@needs_exact_float_normal
def test_module_initialisation(make):
    torch.manual_seed(0)
    tp.manual_seed(0)
    ours, theirs = list(make(tp).parameters()), list(make(torch).parameters())
    assert len(ours) == len(theirs)
    for a, b in zip(theirs, ours):
        assert_same(a.detach(), b.detach())
    assert_same(torch.rand(3), tp.rand(3))


@pytest.mark.parametrize("init", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                  "kaiming_normal_", "trunc_normal_", "sparse_"])
@needs_exact_float_normal
def test_nn_init(init):
    args = (0.3,) if init == "sparse_" else ()
    both(1, lambda m: getattr(m.nn.init, init)(m.empty(30, 20), *args))
    if init == "trunc_normal_":  # the narrow-interval sampler (uniform proposals) as well
        both(1, lambda m: m.nn.init.trunc_normal_(m.empty(30, 20), 0.0, 1.0, -0.1, 0.1))


def test_data_loading_shuffles():
    from torch.utils import data as td

    from torchplug.utils import data as pd

    def batches(loader):
        return [b[0].tolist() for b in loader]

    for seed in (0, 7):
        a = batches(td.DataLoader(td.TensorDataset(torch.arange(50)), batch_size=8, shuffle=True,
                                  generator=torch.Generator().manual_seed(seed)))
        b = batches(pd.DataLoader(pd.TensorDataset(tp.arange(50)), batch_size=8, shuffle=True,
                                  generator=tp.Generator().manual_seed(seed)))
        assert a == b
        torch.manual_seed(seed)
        tp.manual_seed(seed)
        assert batches(td.DataLoader(td.TensorDataset(torch.arange(30)), batch_size=4, shuffle=True)) == \
            batches(pd.DataLoader(pd.TensorDataset(tp.arange(30)), batch_size=4, shuffle=True))
        assert list(td.RandomSampler(range(30), replacement=True, num_samples=70,
                                     generator=torch.Generator().manual_seed(seed))) == \
            list(pd.RandomSampler(range(30), replacement=True, num_samples=70, generator=tp.Generator().manual_seed(seed)))
        split_a = td.random_split(range(20), [0.3, 0.7], generator=torch.Generator().manual_seed(seed))
        split_b = pd.random_split(range(20), [0.3, 0.7], generator=tp.Generator().manual_seed(seed))
        assert [list(s.indices) for s in split_a] == [list(s.indices) for s in split_b]
        assert list(td.SubsetRandomSampler(range(15), generator=torch.Generator().manual_seed(seed))) == \
            list(pd.SubsetRandomSampler(range(15), generator=tp.Generator().manual_seed(seed)))


# ---- seeded sequences of random calls ---------------------------------------------------------------
_SEQ_OPS = [
    lambda m, t: t.uniform_(-2, 3), lambda m, t: t.bernoulli_(0.3),
    lambda m, t: t.random_(-5, 40), lambda m, t: t.random_(),
    lambda m, t: m.bernoulli(t.fill_(0.4)),
]
_SEQ_OPS_C = [  # through log/sin/cos/exp/tan: exact with the C kernels
    lambda m, t: t.normal_(0.5, 2.0), lambda m, t: t.exponential_(1.5), lambda m, t: t.log_normal_(0.1, 0.5), lambda m, t: t.cauchy_(0.0, 2.0),
    lambda m, t: t.geometric_(0.4), lambda m, t: m.poisson(t.fill_(12.0)),
]


def _layouts(m, t, k):
    if k == 1 and t.dim() >= 2:
        return t.transpose(0, 1)
    if k == 2 and t.dim() >= 1 and t.shape[-1] > 1:
        return t[..., ::2]
    return t


@pytest.mark.parametrize("case", range(40))
def test_seeded_random_call_sequences(case):
    """Random sequences of draws (ops, dtypes, shapes incl. 0-dim and 16/17, layouts) stay in step."""
    import random

    rng = random.Random(case)
    ops = _SEQ_OPS + (_SEQ_OPS_C if _stream._C is not None else [])
    calls = []
    for _ in range(rng.randint(1, 6)):
        shape = tuple(rng.choice([1, 2, 3, 5, 8, 16, 17, 33]) for _ in range(rng.randint(0, 3)))
        calls.append((rng.randrange(len(ops)), rng.choice(["float32", "float64", "float16", "bfloat16"]), shape,
                      rng.randint(0, 3)))

    def run(m):
        out = [ops[i](m, _layouts(m, m.empty(shape, dtype=getattr(m, dt)), k)).float().reshape(-1)
               for i, dt, shape, k in calls]
        return m.cat(out + [m.rand(2)])

    both(rng.randint(0, 2**40), run)
