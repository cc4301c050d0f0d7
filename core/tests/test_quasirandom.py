"""torchplug.quasirandom.SobolEngine against torch's: direction numbers, scrambling (seeded and from the default
generator), draws in both float dtypes, fast_forward, reset, draw_base2 and errors: bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")


def _engines(dimension, scramble, seed):
    return (tp.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed),
            torch.quasirandom.SobolEngine(dimension, scramble=scramble, seed=seed))


@pytest.mark.parametrize("dimension, scramble, seed", [(1, False, None), (3, False, None), (5, True, 7),
                                                       (40, True, 123), (300, True, 0)])
def test_draws_match_torch(dimension, scramble, seed):
    ours, theirs = _engines(dimension, scramble, seed)
    np.testing.assert_array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
    for dtype in ("float32", "float64"):
        a, b = ours.draw(17, dtype=getattr(tp, dtype)), theirs.draw(17, dtype=getattr(torch, dtype))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1] == dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    ours.fast_forward(1000), theirs.fast_forward(1000)
    np.testing.assert_array_equal(ours.draw(3).numpy(), theirs.draw(3).numpy())
    ours.reset(), theirs.reset()
    np.testing.assert_array_equal(ours.draw_base2(4).numpy(), theirs.draw_base2(4).numpy())
    assert repr(ours) == repr(theirs)


def test_unseeded_scramble_uses_the_default_generator():
    tp.manual_seed(11)
    torch.manual_seed(11)
    ours, theirs = _engines(4, True, None)
    np.testing.assert_array_equal(ours.draw(8).numpy(), theirs.draw(8).numpy())


def test_first_draws_and_out():
    ours, theirs = _engines(2, False, None)
    assert ours.draw().tolist() == theirs.draw().tolist() == [[0.0, 0.0]]
    out = tp.empty(0)
    assert ours.draw(2, out=out) is out and out.tolist() == theirs.draw(2).tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.quasirandom.SobolEngine(0),
    lambda m: m.quasirandom.SobolEngine(21202),
    lambda m: m.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(2),
], ids=["dimension_zero", "dimension_too_large", "base2_unbalanced"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value) == str(theirs.value)
