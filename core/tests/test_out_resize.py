"""``out=`` of the wrong shape is resized as PyTorch does, with its deprecation warning pointing at the caller."""

import warnings

import pytest

import torchplug as torch


@pytest.mark.parametrize("call", [lambda a, o: torch.add(a, a, out=o), lambda a, o: torch.exp(a, out=o)])
def test_resized_out_warns_at_the_users_line(call):
    a = torch.ones(3)
    out = torch.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(a, out)
    assert out.shape == (3,)
    assert [str(w.message).split(" since")[0] for w in caught] == ["An output with one or more elements was resized"]
    assert caught[0].filename == __file__


def test_empty_out_is_resized_silently():
    out = torch.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.add(torch.ones(3), 1, out=out)
    assert out.tolist() == [2.0, 2.0, 2.0]
