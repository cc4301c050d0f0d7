"""torchplug.autograd.Variable: PyTorch's legacy wrapper honours requires_grad."""

from __future__ import annotations

import pytest

import torchplug
from torchplug.autograd import Variable


@pytest.fixture
def real():
    return pytest.importorskip("torch")


def test_variable_requires_grad_is_a_leaf_alias(real):
    a = torchplug.ones(2)
    v = Variable(a, requires_grad=True)
    ra = real.ones(2)
    rv = real.autograd.Variable(ra, requires_grad=True)
    assert (v is a) is (rv is ra) is False
    assert v.requires_grad is rv.requires_grad is True and v.is_leaf is rv.is_leaf is True
    assert v.data_ptr() == a.data_ptr()  # shares memory, as PyTorch's does
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]
    assert Variable(a, True).requires_grad  # positional, as in PyTorch
    assert Variable(a).requires_grad is False


def test_variable_of_a_non_leaf_detaches(real):
    b = torchplug.ones(2, requires_grad=True) * 2
    rb = real.ones(2, requires_grad=True) * 2
    v, rv = Variable(b), real.autograd.Variable(rb)
    assert (v.requires_grad, v.grad_fn is None, v.is_leaf) == (rv.requires_grad, rv.grad_fn is None, rv.is_leaf)


def test_variable_isinstance_and_type(real):
    assert isinstance(torchplug.zeros(1), Variable) and not isinstance([1], Variable)
    assert type(Variable(torchplug.zeros(1))) is torchplug.Tensor
    assert Variable().tolist() == real.autograd.Variable().tolist() == []


def test_variable_errors_match_torch(real):
    for args, kwargs in [(([1, 2],), {}), ((real.ones(2, dtype=real.long),), {"requires_grad": True})]:
        with pytest.raises(Exception) as theirs:
            real.autograd.Variable(*args, **kwargs)
        ours_args = tuple(torchplug.ones(2, dtype=torchplug.long) if isinstance(x, real.Tensor) else x for x in args)
        with pytest.raises(theirs.type) as ours:
            Variable(*ours_args, **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_volatile_warns_like_torch():
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect. Use `with torch.no_grad"):
        v = Variable(torchplug.ones(1), volatile=True)
    assert v.requires_grad is False
