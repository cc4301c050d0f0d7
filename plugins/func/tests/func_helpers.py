"""Shared helpers: the same random inputs for torch and torchplug, and comparison with tolerances."""

from __future__ import annotations

import numpy as np

import torchplug


def pair(*shape, dtype="float64", seed=0, low=None, high=None):
    """(torchplug tensor, torch tensor) holding the same values."""
    import torch

    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    if low is not None:
        arr = rng.integers(low, high, size=shape).astype("int64")
    else:
        arr = rng.standard_normal(shape).astype(dtype)
    return torchplug.tensor(arr), torch.tensor(arr)


def close(mine, theirs, atol=1e-6, rtol=1e-6):
    """Assert a (pytree of) torchplug result equals torch's in shape, dtype and values (with tolerance)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            close(a, b, atol, rtol)
        return
    if isinstance(theirs, dict):
        assert set(mine) == set(theirs)
        for k in theirs:
            close(mine[k], theirs[k], atol, rtol)
        return
    assert tuple(mine.shape) == tuple(theirs.shape), (tuple(mine.shape), tuple(theirs.shape))
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (mine.dtype, theirs.dtype)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), atol=atol, rtol=rtol)
