"""Helpers shared by the autograd tests: run the same function under torchplug and real torch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug

torch = pytest.importorskip("torch")


def to_np(t):
    return None if t is None else np.asarray(t.detach().cpu().tolist(), dtype=np.float64)


def compare_grads(fn, *arrays, requires=None, atol=1e-8, rtol=1e-6, seed=0):
    """Run ``fn(T, *tensors)`` with T = torchplug and T = torch on the same float64 inputs, reduce
    the outputs with fixed random weights, backward, and compare every input's .grad (None too)."""
    requires = requires if requires is not None else [True] * len(arrays)
    results = []
    for T in (torchplug, torch):
        ts = []
        for a, r in zip(arrays, requires):
            if isinstance(a, np.ndarray):
                t = T.tensor(a)
                if r:
                    t.requires_grad_(True)
                ts.append(t)
            else:
                ts.append(a)
        out = fn(T, *ts)
        outs = out if isinstance(out, (tuple, list)) else [out]
        rng = np.random.default_rng(seed)
        loss = 0
        for o in outs:
            if isinstance(o, T.Tensor) and o.requires_grad:
                w = T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
                loss = loss + (o * w).sum()
        if isinstance(loss, T.Tensor):
            loss.backward()
        results.append(([to_np(o) for o in outs if isinstance(o, T.Tensor)],
                         [to_np(t.grad) if isinstance(t, T.Tensor) and t.is_leaf else None for t in ts]))
    (outs_p, grads_p), (outs_t, grads_t) = results
    for a, b in zip(outs_p, outs_t):
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    for i, (a, b) in enumerate(zip(grads_p, grads_t)):
        assert (a is None) == (b is None), f"input {i}: torchplug grad {'None' if a is None else 'set'}, torch {'None' if b is None else 'set'}"
        if a is not None:
            np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=f"grad of input {i}")


def gradcheck(fn, *arrays, requires=None, **kw):
    """torchplug.autograd.gradcheck of ``fn(torchplug, *tensors)`` in float64."""
    requires = requires if requires is not None else [True] * len(arrays)
    ts = [torchplug.tensor(a).requires_grad_(bool(r)) if isinstance(a, np.ndarray) else a for a, r in zip(arrays, requires)]
    return torchplug.autograd.gradcheck(lambda *xs: fn(torchplug, *xs), tuple(ts), **kw)
