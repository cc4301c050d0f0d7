"""scatter(reduce='add'|'multiply') and scatter_(reduce=): PyTorch's own overloads (scatter.reduce,
scatter.value_reduce), whose derivatives.yaml entry is ``not_implemented``: the forward values are
scatter_reduce's with self included, the recorded node's backward raises, and forward AD refuses."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.autograd.forward_ad as tp_fa

torch = pytest.importorskip("torch")
with warnings.catch_warnings():  # torch's first make_dual scripts its jvp decompositions (a jit DeprecationWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch.autograd.forward_ad as torch_fa  # noqa: E402
    import torch._decomp.decompositions_for_jvp  # noqa: E402,F401

REDUCTIONS = ("add", "multiply")


def _inputs(m, requires_grad=True):
    x = m.arange(1.0, 13.0).reshape(3, 4).requires_grad_(requires_grad)
    src = (m.arange(12.0).reshape(3, 4) / 4 + 0.5).requires_grad_(requires_grad)
    index = m.tensor([[0, 1, 2, 0], [2, 0, 0, 1]])
    return x, src, index


def _error(fn):
    try:
        fn()
    except (RuntimeError, NotImplementedError) as exc:
        return type(exc), str(exc)
    return None


CALLS = {
    "function src": lambda m, x, s, i, r: m.scatter(x, 0, i, s, reduce=r),
    "function value": lambda m, x, s, i, r: m.scatter(x, 1, i, 2.5, reduce=r),
    "method src": lambda m, x, s, i, r: x.scatter(0, i, s, reduce=r),
    "inplace src": lambda m, x, s, i, r: x.clone().scatter_(0, i, s, reduce=r),
    "inplace value": lambda m, x, s, i, r: x.clone().scatter_(1, i, 2.5, reduce=r),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_values_node_and_backward_error_match_torch(call, reduce):
    def run(m):
        x, s, i = _inputs(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the deprecation of Tensor src with reduce=
            y = CALLS[call](m, x, s, i, reduce)
        edges = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
        return y.detach().numpy().copy(), y.grad_fn.name(), type(y.grad_fn).__name__, edges, _error(
            lambda: y.sum().backward())

    ours, theirs = run(tp), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1:] == theirs[1:]
    assert theirs[4][0] is RuntimeError and theirs[4][1].startswith("derivative for aten::scatter")


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_out_and_no_grad_values_match_torch(reduce):
    results = []
    for m in (tp, torch):
        x, s, i = _inputs(m, requires_grad=False)
        out = m.empty(3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            m.scatter(x, 0, i, s, reduce=reduce, out=out)
        results.append(out.numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_bad_reduce_is_refused_like_torch():
    def run(m):
        x, s, i = _inputs(m)
        return _error(lambda: m.scatter(x, 0, i, s, reduce="mean"))

    assert run(tp) == run(torch)


def test_forward_ad_is_refused_like_torch():
    def run(m, fa, inplace):
        _, s, i = _inputs(m, requires_grad=False)
        with fa.dual_level():
            d = fa.make_dual(m.ones(3, 4), m.ones(3, 4))
            if inplace:
                return _error(lambda: d.scatter_(0, i, 2.0, reduce="add"))
            return _error(lambda: m.scatter(d, 0, i, 2.0, reduce="multiply"))

    for inplace in (False, True):
        assert run(tp, tp_fa, inplace) == run(torch, torch_fa, inplace)


def test_scatter_reduce_stays_differentiable():
    grads = []
    for m in (tp, torch):
        x, _, i = _inputs(m)
        s = m.arange(8.0).reshape(2, 4).requires_grad_()
        m.scatter_reduce(x, 0, i, s, "sum").pow(2).sum().backward()
        grads.append((x.grad.numpy().copy(), s.grad.numpy().copy()))
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
