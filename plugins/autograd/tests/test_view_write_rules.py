"""PyTorch's refusals of in-place writes to views: views made under no_grad, and outputs of
functions returning several views (unbind, split, chunk, split_with_sizes) — same messages,
same allowed cases."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

MULTI = {
    "unbind": (lambda m, a: a.unbind(0), "Output 0 of Unbind"),
    "split": (lambda m, a: m.split(a, 2), "Output 0 of Split"),
    "chunk": (lambda m, a: a.chunk(2), "Output 0 of Split"),
    "split_with_sizes": (lambda m, a: a.split([1, 3]), "Output 0 of SplitWithSizes"),
}


def _message(fn):
    try:
        fn()
    except RuntimeError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_output_view_written_in_place_is_refused_like_torch(name):
    make, expected = MULTI[name]

    def run(m):
        a = m.ones(4, 3, requires_grad=True).clone()
        make(m, a)[0].mul_(2)

    ours, theirs = _message(lambda: run(tp)), _message(lambda: run(torch))
    assert theirs is not None and expected in theirs
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_output_views_are_writable_where_torch_allows(name):
    make, _ = MULTI[name]
    for m in (tp, torch):
        a = m.ones(4, 3, requires_grad=True).clone()
        with m.no_grad():
            make(m, a)[0].mul_(2)  # no autograd: allowed
        plain = m.ones(4, 3)
        make(m, plain)[0].mul_(2)  # base without grad: allowed
        assert plain[0, 0].item() == 2.0
    tp.ones(4, 3, requires_grad=True).clone().tensor_split(2)[0].add_(1)  # tensor_split is not multi-view


def test_view_made_under_no_grad_then_written_with_grad_is_refused_like_torch():
    def run(m, leaf):
        a = m.ones(3, requires_grad=True)
        base = a if leaf else a.clone()
        with m.no_grad():
            v = base[:2]
        v.mul_(2)

    for leaf in (False, True):
        ours, theirs = _message(lambda: run(tp, leaf)), _message(lambda: run(torch, leaf))
        assert theirs is not None and theirs.startswith("A view was created in no_grad mode")
        assert ours == theirs


def test_no_grad_view_written_under_no_grad_or_of_plain_base_is_allowed():
    a = tp.ones(3, requires_grad=True).clone()
    with tp.no_grad():
        v = a[:2]
        v.mul_(2)
    np.testing.assert_array_equal(a.detach().numpy(), [2.0, 2.0, 1.0])
    b = tp.ones(3)
    with tp.no_grad():
        w = b[1:]
    w.add_(1)
    np.testing.assert_array_equal(b.numpy(), [1.0, 2.0, 2.0])
