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


# ---- views made under no_grad of a tensor that requires grad: leaf-like views that require grad ----
NO_GRAD_VIEWS = {
    "slice": lambda t: t[:2],
    "select": lambda t: t[1],
    "view": lambda t: t.view(3, 2),
    "transpose": lambda t: t.t(),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t[:1].expand(4, 3),
    "unbind": lambda t: t.unbind(0)[0],
    "real": lambda t: t.real,
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("name", sorted(NO_GRAD_VIEWS))
@pytest.mark.parametrize("leaf", [True, False])
def test_no_grad_view_reports_requires_grad_like_torch(name, leaf, device):
    make = NO_GRAD_VIEWS[name]

    def facts(m):
        a = m.ones(2, 3, requires_grad=True, device=device)
        base = a if leaf else a * 1
        with m.no_grad():
            v = make(base)
        return (v.requires_grad, v.grad_fn is None, v.is_leaf, v._base is base, v._is_view())

    assert facts(tp) == facts(torch)


def test_ops_on_a_no_grad_view_record_a_node_with_an_undefined_edge_like_torch():
    def facts(m):
        a = m.ones(3, requires_grad=True)
        with m.no_grad():
            v = a[:2]
        u = v * 3
        names = [None if f is None else f.name() for f, _ in u.grad_fn.next_functions]
        u.sum().backward()
        return u.requires_grad, u.grad_fn.name(), names, a.grad, v.grad

    assert facts(tp) == facts(torch)


def test_view_of_a_no_grad_view_written_with_grad_is_refused_like_torch():
    def run(m, make):
        a = m.ones(2, 3, requires_grad=True)
        with m.no_grad():
            v = a[:1]
        w = make(v)
        assert w.requires_grad and w.grad_fn is not None
        w.mul_(2)

    for make in (lambda v: v[:, :2], lambda v: v.squeeze(0), lambda v: v.squeeze(0).unsqueeze(1)):
        ours, theirs = _message(lambda: run(tp, make)), _message(lambda: run(torch, make))
        assert theirs is not None and "is a view of a view which was created in no_grad mode" in theirs
        assert ours == theirs


def test_no_grad_view_whose_base_changed_in_place_is_refused_like_torch():
    def run(m, step):
        a = m.ones(3, requires_grad=True)
        b = a * 1
        with m.no_grad():
            v = b[:2]
            if step == "nograd":
                v.mul_(2)
        if step == "grad":
            b.mul_(2)
        return v * 3

    for step in ("grad", "nograd"):
        ours, theirs = _message(lambda: run(tp, step)), _message(lambda: run(torch, step))
        assert theirs is not None and "its base or another view of its base has been modified inplace" in theirs
        assert ours == theirs


def test_integer_view_and_detach_under_no_grad_do_not_require_grad_like_torch():
    for m in (tp, torch):
        a = m.ones(3, requires_grad=True)
        with m.no_grad():
            iv = a.view(m.int32)
            d = a.detach()
            pieces = a.unsafe_split(1)
        assert not iv.requires_grad and not d.requires_grad and d._base is None
        assert [p.requires_grad for p in pieces] == [False] * 3
        iv.add_(1)  # not a differentiable view: allowed with grad mode on


def test_view_made_a_leaf_with_requires_grad_accumulates_its_own_grad():
    for m in (tp, torch):
        y = m.zeros(4)
        v = y[:2]
        v.requires_grad_()
        (v * 2).sum().backward()
        assert v.grad.tolist() == [2.0, 2.0]
