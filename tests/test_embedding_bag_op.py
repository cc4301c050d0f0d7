"""torch.embedding_bag (ATen's operator: int mode, four results) compared with torch: the output and the
bookkeeping tensors for each mode, dtype, padding_idx, include_last_offset and per_sample_weights; gradients;
errors."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
W = RNG.standard_normal((10, 3)).astype(np.float32)
W[3] = W[5]  # tied maxima: the first index of the bag wins
I = np.array([1, 2, 4, 5, 4, 3, 2, 9, 5, 3])
OFFSETS = np.array([0, 4, 4, 7])  # an empty bag in the middle
LAST_OFFSETS = np.array([0, 4, 4, 7, 10])


def _run(m, dtype, index_dtype, mode, last=False, pad=None, psw=False, requires_grad=False):
    w = m.tensor(W).to(getattr(m, dtype)).requires_grad_(requires_grad)
    i = m.tensor(I).to(getattr(m, index_dtype))
    o = m.tensor(LAST_OFFSETS if last else OFFSETS).to(getattr(m, index_dtype))
    weights = m.arange(10.0).to(getattr(m, dtype)) if psw else None
    return w, m.embedding_bag(w, i, o, False, mode, False, weights, last, pad)


CASES = [{}, {"last": True}, {"pad": 4}, {"pad": -1}]


@pytest.mark.parametrize("kw", CASES + [{"psw": True}], ids=["plain", "last", "pad", "pad_neg", "psw"])
@pytest.mark.parametrize("mode", [0, 1, 2], ids=["sum", "mean", "max"])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_results_match_torch(dtype, index_dtype, mode, kw):
    if kw.get("psw") and mode != 0:
        pytest.skip("per_sample_weights is for mode sum only (see test_errors_match_torch)")
    ours, theirs = _run(tp, dtype, index_dtype, mode, **kw)[1], _run(torch, dtype, index_dtype, mode, **kw)[1]
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_gradients_match_torch(mode):
    grads = []
    for m in (tp, torch):
        w, (out, *_rest) = _run(m, "float64", "int64", mode, pad=4, requires_grad=True)
        (out * m.arange(1.0, 13.0, dtype=m.float64).reshape(4, 3)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.embedding_bag(m.ones(10, 3), m.tensor(I), m.tensor(OFFSETS), False, 3),
    lambda m: m.embedding_bag(m.ones(10, 3), m.tensor(I), m.tensor(OFFSETS), False, 1, False, m.ones(10)),
    lambda m: m.embedding_bag(m.ones(10, 3), m.tensor(I[:3]), m.tensor(OFFSETS), False, 1),
], ids=["mode", "psw_mode", "offsets_past_end"])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tp)
    assert str(ours.value) == str(theirs.value)
