"""torchplug_cpu._crandom's own argument checks and its engine (no PyTorch needed).

Every entry point checks the buffers it is given (the mt19937 key: 624 aligned uint32 words and a
position in [0, 624]; outputs and per-element parameters by item size, alignment and count), so no
argument can make it read or write outside them; the engine is checked against NumPy's MT19937.
"""

from __future__ import annotations

import numpy as np
import pytest

from torchplug._runtime import generator as R
from torchplug_cpu import _stream as S

C = S._C
pytestmark = pytest.mark.skipif(C is None, reason="torchplug_cpu._crandom not built")


def _key(seed: int = 5) -> np.ndarray:
    return R._init_genrand(seed)


def test_engine_words_equal_numpy_mt19937():
    for seed, n in ((0, 1), (5, 623), (7, 624), (9, 625), (2**32 + 3, 5000)):
        key = _key(seed)
        out = np.empty(n, np.uint32)
        pos, _, _ = C.fill(key, 624, S.RAW32, out, 0.0, 1.0, 0, 0, 0.0, b"")
        bg = np.random.MT19937()
        bg.state = {"bit_generator": "MT19937", "state": {"key": _key(seed), "pos": 624}}
        assert np.array_equal(out, bg.random_raw(n).astype(np.uint32))
        assert pos == bg.state["state"]["pos"] and np.array_equal(key, bg.state["state"]["key"])


def test_fallback_and_c_kernels_draw_the_same_words():
    g1, g2 = R.Generator().manual_seed(3), R.Generator().manual_seed(3)
    out = np.empty(1000, np.uint32)
    g1._pos, _, _ = C.fill(g1._key, g1._pos, S.RAW32, out, 0.0, 1.0, 0, 0, 0.0, b"")
    assert np.array_equal(out, g2.random_raw(1000))
    assert g1._pos == g2._pos and np.array_equal(g1._key, g2._key)


@pytest.mark.parametrize("key", [np.zeros(623, np.uint32), np.zeros(625, np.uint32), np.zeros(624, np.uint64),
                                 np.zeros(624, np.uint32)[::2].copy()])
def test_bad_key_is_refused(key):
    with pytest.raises(ValueError, match="mt19937 key"):
        C.fill(key, 624, S.RAW32, np.empty(4, np.uint32), 0.0, 1.0, 0, 0, 0.0, b"")
    with pytest.raises(ValueError, match="mt19937 key"):
        C.integers(key, 624, np.empty(4, np.int64), 0, 10, 0)
    with pytest.raises(ValueError, match="mt19937 key"):
        C.randperm(key, 624, np.empty(4, np.int64))


@pytest.mark.parametrize("pos", [-1, 625, 2**40])
def test_bad_position_is_refused(pos):
    with pytest.raises(ValueError, match="position"):
        C.fill(_key(), pos, S.RAW32, np.empty(4, np.uint32), 0.0, 1.0, 0, 0, 0.0, b"")
    with pytest.raises(ValueError, match="position"):
        C.randperm(_key(), pos, np.empty(4, np.int64))


def test_readonly_key_or_output_is_refused():
    key = _key()
    key.setflags(write=False)
    with pytest.raises((TypeError, BufferError, ValueError)):
        C.fill(key, 624, S.RAW32, np.empty(4, np.uint32), 0.0, 1.0, 0, 0, 0.0, b"")
    out = np.empty(4, np.uint32)
    out.setflags(write=False)
    with pytest.raises((TypeError, BufferError, ValueError)):
        C.fill(_key(), 624, S.RAW32, out, 0.0, 1.0, 0, 0, 0.0, b"")


def test_output_and_parameter_sizes_are_checked():
    with pytest.raises(ValueError, match="unknown kind"):
        C.fill(_key(), 624, 99, np.empty(4, np.float64), 0.0, 1.0, 0, 0, 0.0, b"")
    with pytest.raises(ValueError, match="out must be an aligned array of 8-byte items"):
        C.fill(_key(), 624, S.UNIFORM_D, np.empty(5, np.float32)[1:4], 0.0, 1.0, 0, 0, 0.0, b"")
    with pytest.raises(ValueError, match="p holds 3 items for 4 outputs"):
        C.fill(_key(), 624, S.BERN_PD, np.empty(4, np.uint8), 0.0, 1.0, 0, 0, 0.0, np.zeros(3))
    with pytest.raises(ValueError, match="p holds 0 items for 4 outputs"):
        C.fill(_key(), 624, S.POISSON, np.empty(4, np.float64), 0.0, 1.0, 0, 0, 0.0, b"")
    with pytest.raises(ValueError, match="at least 16 items"):
        C.fill(_key(), 624, S.NORMFILL_F, np.empty(15, np.float32), 0.0, 1.0, 1, 0, 0.0, b"")
    with pytest.raises(ValueError, match="8-byte items"):
        C.integers(_key(), 624, np.empty(3, np.int32), 0, 10, 0)
    with pytest.raises(ValueError, match="8-byte items"):
        C.randperm(_key(), 624, np.empty(3, np.int32))


def test_failed_call_leaves_the_state_alone():
    key = _key()
    before = key.copy()
    with pytest.raises(ValueError):
        C.fill(key, 624, S.BERN_PF, np.empty(4, np.uint8), 0.0, 1.0, 0, 0, 0.0, np.zeros(2, np.float32))
    assert np.array_equal(key, before)


def test_integer_wraparound_is_defined():
    # (draw % range) + base in unsigned 64-bit arithmetic, as ATen casts: the full range wraps
    out = np.empty(1000, np.int64)
    C.integers(_key(), 624, out, 1, 0, -(2**63))
    assert out.min() < 0 < out.max()
    C.integers(_key(), 624, out, 0, 7, 2**63 - 4)
    assert set(out.tolist()) <= {2**63 - 4 + k if k < 4 else -(2**63) + k - 4 for k in range(7)}


def test_randperm_is_a_permutation():
    for n in (0, 1, 2, 17, 1000):
        out = np.empty(n, np.int64)
        C.randperm(_key(), 624, out)
        assert sorted(out.tolist()) == list(range(n))


def test_fast_seeding_is_init_genrand():
    for seed in (0, 1, 5489, 2**31, 2**32 - 1, 2**32 + 7, 2**64 - 1, R._DEFAULT_SEED):
        assert np.array_equal(R._init_genrand(seed), R._init_genrand_py(seed)), seed
