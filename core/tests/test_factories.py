"""Factory functions against PyTorch: how the shape is given, and the dim order ``*_like`` keeps."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
        return type(exc).__name__, str(exc).split("\n")[0]


@pytest.mark.parametrize("name", ["empty", "zeros", "ones"])
def test_size_forms_and_missing_size(name):
    for L in (tp, torch):
        assert tuple(getattr(L, name)(size=(2, 3)).shape) == (2, 3)
        assert tuple(getattr(L, name)((2, 3)).shape) == (2, 3)
    assert _outcome(lambda: getattr(tp, name)()) == _outcome(lambda: getattr(torch, name)())
    assert _outcome(lambda: getattr(tp, name)((2,), size=(2,))) == _outcome(lambda: getattr(torch, name)((2,), size=(2,)))


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_factories_need_a_size(name):
    with pytest.raises(TypeError):
        getattr(torch, name)()
    with pytest.raises(TypeError, match="size"):
        getattr(tp, name)()


LAYOUTS = [
    lambda L: L.ones(2, 3).t(),
    lambda L: L.ones(2, 3, 4).permute(2, 0, 1),
    lambda L: L.ones(4, 3)[::2],
    lambda L: L.ones(3, 4).t()[:, ::2],
    lambda L: L.ones(2, 1, 3).transpose(0, 2),
]
LIKES = [
    lambda L, x: L.empty_like(x),
    lambda L, x: L.zeros_like(x),
    lambda L, x: L.ones_like(x),
    lambda L, x: L.full_like(x, 2.5),
    lambda L, x: L.zeros_like(x, memory_format=L.contiguous_format),
    lambda L, x: L.ones_like(x, dtype=L.float64),
]


@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
@pytest.mark.parametrize("like", range(len(LIKES)))
def test_like_keeps_the_inputs_dim_order(layout, like):
    ours = LIKES[like](tp, LAYOUTS[layout](tp))
    theirs = LIKES[like](torch, LAYOUTS[layout](torch))
    assert ours.stride() == theirs.stride()
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    if like != 0:
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_numpy_unsigned_scalars_in_a_list():
    for data, dtype in [([np.uint8(3)], "uint8"), ([np.uint8(3), 2], None), ([np.uint16(7)], "int32")]:
        ours = tp.tensor(data, dtype=getattr(tp, dtype) if dtype else None)
        theirs = torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None)
        assert ours.tolist() == theirs.tolist() and str(ours.dtype)[-5:] == str(theirs.dtype)[-5:]
    assert _outcome(lambda: tp.tensor([2**63])) == _outcome(lambda: torch.tensor([2**63]))
