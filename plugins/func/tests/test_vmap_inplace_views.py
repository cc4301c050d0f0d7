"""Composites that write in place under vmap: the in-place view methods (``transpose_``, ``t_``, ``squeeze_``,
``unsqueeze_``) on batched tensors take the view's batched value (nn.RNN's batch_first output is one), and
circular padding copies into a batched ``new_empty`` output, as under torch.vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import torchplug as tp
from torchplug.func import vmap

torch = pytest.importorskip("torch")

CASES = {
    "transpose_": lambda a: a.clone().transpose_(0, 1),
    "t_unsqueeze_squeeze_": lambda a: a.clone().t_().unsqueeze_(0).squeeze_(0) * 2,
    "squeeze_dim": lambda a: a.clone().unsqueeze(1).squeeze_(1),
    "swapdims_": lambda a: (a * 1).swapdims_(1, 0).exp(),
}
CASES_TORCH_NN = {
    # circular padding copies into an output made with new_empty: batched under vmap
    "pad_circular": lambda T: lambda a: T.nn.functional.pad(a.unsqueeze(0), (1, 2, 2, 0), mode="circular"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inplace_views_under_vmap_match_torch(case: str) -> None:
    data = np.random.default_rng(0).standard_normal((3, 2, 4))
    fn: Any = CASES[case]
    ref = torch.vmap(fn)(torch.tensor(data))
    got = vmap(fn)(tp.tensor(data))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES_TORCH_NN))
def test_composites_writing_in_place_under_vmap_match_torch(case: str) -> None:
    data = np.random.default_rng(1).standard_normal((3, 2, 3, 4))
    ref = torch.vmap(CASES_TORCH_NN[case](torch))(torch.tensor(data))
    got = vmap(CASES_TORCH_NN[case](tp))(tp.tensor(data))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)
