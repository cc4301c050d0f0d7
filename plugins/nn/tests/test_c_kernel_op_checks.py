"""Every op that reaches a C kernel (convolution and F.unfold/F.fold through im2col/col2im, softmax,
nll_loss, relu's backward, max pooling's backward) refuses bad arguments with PyTorch's exception
type and message before the kernel runs; compared with the installed torch case by case.
"""

from __future__ import annotations

import numpy as np
import pytest

import torchplug

A = torchplug.ops.aten


def _outcome(mod, fn):
    try:
        r = fn(mod)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", tuple(r.shape)


def _f(m):
    return m.nn.functional


def _x(m, *s):
    return m.ones(*s)


def _lsm(m, *s):
    return m.log_softmax(m.ones(*s), -1)


def _i(m, values, dtype=None):
    return m.tensor(values, dtype=dtype or m.int64)


_MP_BWD = "max_pool2d_with_indices_backward"
CASES = {
    # convolution (im2col/col2im): PyTorch's order of checks
    "conv groups before lengths": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, (1, 1, 1), 0, 1, 0),
    "conv negative padding": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 1, (1, -1)),
    "conv negative dilation": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 1, 0, -1),
    "conv negative dilation, padding limit": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 1,
                                                                    2 ** 62, -1),
    "conv stride 0": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 0),
    "conv padding limit": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 1, 2 ** 62),
    "conv1d padding limit": lambda m: _f(m).conv1d(_x(m, 1, 2, 6), _x(m, 3, 2, 2), None, 1, 2 ** 62),
    "conv padded size wraps int64": lambda m: _f(m).conv2d(_x(m, 1, 1, 4, 5), _x(m, 2, 1, 1, 3), None, 2,
                                                           (2 ** 62 - 1, 0), 2),
    "conv kernel over input": lambda m: _f(m).conv2d(_x(m, 1, 2, 2, 2), _x(m, 4, 2, 3, 3)),
    "conv huge padding, one output": lambda m: _f(m).conv1d(_x(m, 1, 1, 3), _x(m, 1, 1, 3), None, 2 ** 40,
                                                            2 ** 31 - 1, 2 ** 31),
    "conv huge stride": lambda m: _f(m).conv2d(_x(m, 1, 2, 6, 6), _x(m, 4, 2, 3, 3), None, 2 ** 62),
    "conv_transpose2d output too small": lambda m: _f(m).conv_transpose2d(_x(m, 1, 2, 6, 6), _x(m, 2, 3, 3, 3), None,
                                                                          1, 5),
    "conv_transpose output padding": lambda m: _f(m).conv_transpose2d(_x(m, 2, 4, 2, 4), _x(m, 4, 1, 1, 2), None, 1,
                                                                      0, 1, 2, 1),
    # F.unfold / F.fold
    "unfold negative padding": lambda m: _f(m).unfold(_x(m, 1, 2, 5, 5), 2, 1, -1),
    "unfold zero stride": lambda m: _f(m).unfold(_x(m, 1, 2, 5, 5), 2, 1, 0, 0),
    "unfold zero kernel": lambda m: _f(m).unfold(_x(m, 1, 2, 5, 5), 0),
    "unfold kernel over input": lambda m: _f(m).unfold(_x(m, 1, 2, 5, 5), 6, stride=2),
    "unfold rank 5": lambda m: _f(m).unfold(_x(m, 1, 1, 1, 5, 5), 2),
    "unfold empty channels": lambda m: _f(m).unfold(_x(m, 1, 0, 5, 5), 2),
    "unfold huge stride": lambda m: _f(m).unfold(_x(m, 1, 2, 5, 5), 2, 1, 0, 2 ** 62),
    "fold negative padding": lambda m: _f(m).fold(_x(m, 1, 8, 16), (5, 5), 2, 1, -1),
    "fold blocks mismatch": lambda m: _f(m).fold(_x(m, 1, 8, 15), (5, 5), 2),
    "fold channels not divisible": lambda m: _f(m).fold(_x(m, 1, 7, 16), (5, 5), 2),
    "fold kernel over output": lambda m: _f(m).fold(_x(m, 1, 36, 1), (5, 5), 6, stride=2),
    "fold rank 4": lambda m: _f(m).fold(_x(m, 1, 1, 8, 16), (5, 5), 2),
    # softmax
    "softmax dim out of range": lambda m: _f(m).softmax(_x(m, 2, 3), 2),
    "log_softmax dim out of range": lambda m: _f(m).log_softmax(_x(m, 2, 3), -3),
    "softmax backward shapes": lambda m: m.ops.aten._softmax_backward_data(_x(m, 2, 3), _x(m, 3, 2), 1, m.float32),
    # nll_loss and its backward
    "nll target out of range": lambda m: _f(m).nll_loss(_lsm(m, 2, 3), _i(m, [0, 3])),
    "nll target negative": lambda m: _f(m).nll_loss(_lsm(m, 2, 3), _i(m, [0, -1])),
    "nll target length": lambda m: _f(m).nll_loss(_lsm(m, 2, 3), _i(m, [0, 1, 1])),
    "nll 1d input, 1-element target": lambda m: m.ops.aten.nll_loss_forward(_lsm(m, 3), _i(m, [1]), None, 1, -100)[0],
    "nll 1d input, 2-element target": lambda m: m.ops.aten.nll_loss_forward(_lsm(m, 3), _i(m, [1, 2]), None, 1, -100)[0],
    "nll backward target length": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [0, 1, 1]), None,
                                                                1, -100, m.tensor(2.)),
    "nll backward 2-d target": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [[0, 1]]), None, 1,
                                                             -100, m.tensor(2.)),
    "nll backward 3-d input": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3, 4), _i(m, [0, 1]), None, 1,
                                                            -100, m.tensor(2.)),
    "nll backward total_weight": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [0, 1]), None, 1,
                                                               -100, m.tensor([2., 1.])),
    "nll backward grad elements": lambda m: m.ops.aten.nll_loss_backward(m.tensor([1., 1.]), _lsm(m, 2, 3), _i(m, [0, 1]),
                                                                None, 1, -100, m.tensor(2.)),
    "nll backward unreduced grad": lambda m: m.ops.aten.nll_loss_backward(m.ones(3), _lsm(m, 2, 3), _i(m, [0, 1]), None, 0,
                                                                 -100, m.tensor(2.)),
    "nll backward weight": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [0, 1]), m.ones(2), 1,
                                                         -100, m.tensor(2.)),
    "nll backward int32 target": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [0, 1], m.int32),
                                                               None, 1, -100, m.tensor(2.)),
    "nll backward target out of range": lambda m: m.ops.aten.nll_loss_backward(m.tensor(1.), _lsm(m, 2, 3), _i(m, [0, 3]),
                                                                      None, 1, -100, m.tensor(2.)),
    "nll2d backward target shape": lambda m: m.ops.aten.nll_loss2d_backward(m.tensor(1.), _x(m, 2, 3, 2, 2),
                                                                   m.zeros(2, 2, 3, dtype=m.int64), None, 1, -100,
                                                                   m.tensor(1.)),
    "nll2d backward unreduced grad": lambda m: m.ops.aten.nll_loss2d_backward(m.ones(2, 2, 3), _x(m, 2, 3, 2, 2),
                                                                     m.zeros(2, 2, 2, dtype=m.int64), None, 0, -100,
                                                                     m.tensor(1.)),
    # relu's backward
    "threshold_backward shapes": lambda m: m.ops.aten.threshold_backward(_x(m, 2, 3), _x(m, 3, 2), 0.0),
    "threshold_backward broadcasts": lambda m: m.ops.aten.threshold_backward(_x(m, 2, 3), _x(m, 3), 0.0),
    # max pooling's backward
    "max_pool backward grad shape": lambda m: getattr(m.ops.aten, _MP_BWD)(_x(m, 1, 1, 3, 3), _x(m, 1, 1, 4, 4), [2, 2],
                                                                  [2, 2], [0, 0], [1, 1], False,
                                                                  m.zeros(1, 1, 2, 2, dtype=m.int64)),
    "max_pool backward indices rank": lambda m: getattr(m.ops.aten, _MP_BWD)(_x(m, 1, 1, 2, 2), _x(m, 1, 1, 4, 4), [2, 2],
                                                                    [2, 2], [0, 0], [1, 1], False,
                                                                    m.zeros(1, 1, 3, dtype=m.int64)),
    "max_pool backward batch": lambda m: getattr(m.ops.aten, _MP_BWD)(_x(m, 2, 1, 2, 2), _x(m, 1, 1, 4, 4), [2, 2], [2, 2],
                                                             [0, 0], [1, 1], False, m.zeros(1, 1, 2, 2, dtype=m.int64)),
    "max_pool backward int32 indices": lambda m: getattr(m.ops.aten, _MP_BWD)(_x(m, 1, 1, 2, 2), _x(m, 1, 1, 4, 4), [2, 2],
                                                                     [2, 2], [0, 0], [1, 1], False,
                                                                     m.zeros(1, 1, 2, 2, dtype=m.int32)),
    "max_pool backward negative padding": lambda m: getattr(m.ops.aten, _MP_BWD)(_x(m, 1, 1, 2, 2), _x(m, 1, 1, 4, 4), [2, 2],
                                                                        [2, 2], [-1, 0], [1, 1], False,
                                                                        m.zeros(1, 1, 2, 2, dtype=m.int64)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    want, got = _outcome(torch, CASES[case]), _outcome(torchplug, CASES[case])
    assert got[0] == want[0], (want, got)
    if want[0] == "ok":
        assert got == want
    else:
        assert got[1].startswith(want[1][:40]), (want, got)


@pytest.mark.parametrize("index", [16, -1])
def test_max_pool_backward_refuses_indices_outside_the_plane(index):
    # PyTorch writes through such an index (outside the gradient's buffer); torchplug refuses it
    F = torchplug.nn.functional
    out, idx = F.max_pool2d(torchplug.ones(1, 1, 4, 4), 2, return_indices=True)
    idx[0, 0, 0, 0] = index
    with pytest.raises(IndexError, match="outside its input plane of 16 elements"):
        getattr(A, _MP_BWD)(torchplug.ones_like(out), torchplug.ones(1, 1, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1],
                            False, idx)


def test_windows_of_padding_only_get_no_gradient_like_torch_forward():
    # a dilated window can hold padding only: PyTorch gives -inf and an index past the plane; its
    # gradient reaches no input (PyTorch's backward would write past the gradient's buffer)
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((1, 3, 1, 9)).astype(np.float32)
    args = ((2, 1), (1, 2), (1, 0), (2, 1))
    t = torchplug.tensor(x, requires_grad=True)
    out, idx = torchplug.nn.functional.max_pool2d(t, *args, return_indices=True)
    ref, ref_idx = torch.nn.functional.max_pool2d(torch.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    assert (idx.numpy() >= 9).all() and np.isneginf(out.detach().numpy()).all()
    (g,) = torchplug.autograd.grad(out.sum(), t)
    assert g.shape == t.shape and not g.numpy().any()
