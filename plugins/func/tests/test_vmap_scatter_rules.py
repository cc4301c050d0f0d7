"""diag_embed and the <view>_scatter ops batch by their own rules: their composites write into a tensor they make
unbatched, so running them on batched values used to send them to the per-sample loop for good (the coverage
test then failed or passed depending on which test had called them first).  Values against torch.vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
A3 = RNG.standard_normal((3, 4, 5))
S3 = RNG.standard_normal((3, 4, 2))
D3 = RNG.standard_normal((3, 4))

CASES = {
    "diag_embed": (lambda T, a: T.diag_embed(a), (A3,), (0,)),
    "diag_embed_offset_dims": (lambda T, a: T.diag_embed(a, 1, 0, 2), (A3,), (1,)),
    "diag_embed_negative_dims": (lambda T, a: T.diag_embed(a, -1, -1, -3), (A3,), (2,)),
    "slice_scatter_both": (lambda T, a, s: T.slice_scatter(a, s, 1, 1, 5, 2), (A3, S3), (0, 0)),
    "slice_scatter_unbatched_self": (lambda T, a, s: T.slice_scatter(a, s, -1, 0, 2), (A3[0], S3), (None, 0)),
    "slice_scatter_unbatched_src": (lambda T, a, s: T.slice_scatter(a, s, 1, 3), (A3, S3[0]), (0, None)),
    "select_scatter": (lambda T, a, s: T.select_scatter(a, s, 1, 2), (A3, D3), (0, 0)),
    "select_scatter_unbatched_self": (lambda T, a, s: T.select_scatter(a, s, 0, -1), (A3[0], A3[:, 0]), (None, 0)),
    "diagonal_scatter": (lambda T, a, s: T.diagonal_scatter(a, s, 0, 0, 1), (A3, D3), (0, 0)),
    "diagonal_scatter_unbatched_self": (lambda T, a, s: T.diagonal_scatter(a, s, 1, -1, -2),
                                        (A3[0], D3[:, :3]), (None, 0)),
    "diagonal_scatter_unbatched_src": (lambda T, a, s: T.diagonal_scatter(a, s, -1, 1, 0), (A3, D3[0, :3]), (1, None)),
}


def _vmapped(T: Any, case: str) -> np.ndarray:
    fn, arrays, in_dims = CASES[case]
    args = [T.tensor(a) for a in arrays]
    return T.vmap(lambda *xs: fn(T, *xs), in_dims=in_dims)(*args).numpy()


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_as_torch_vmap(case: str) -> None:
    np.testing.assert_allclose(_vmapped(tp, case), _vmapped(torch, case))


def test_batched_calls_leave_them_on_their_rules() -> None:
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug_func._coverage import classify

    for case in CASES:
        _vmapped(tp, case)
    for name in ("diag_embed", "slice_scatter", "select_scatter", "diagonal_scatter"):
        assert classify(DISPATCHER.find("aten::" + name)) == "rule"
