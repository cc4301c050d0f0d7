"""Margin, embedding, likelihood and CTC losses (modules and functionals) compared with real torch:
values for every reduction, gradients, shapes of unbatched inputs, and the errors PyTorch raises."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
import torchplug.nn.functional as F

from nn_helpers import to_np

torch = pytest.importorskip("torch")

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape)


def _sign(*shape):
    return np.where(rng.random(shape) > 0.5, 1.0, -1.0)


X45, Y45, Z45 = _r(4, 5), _r(4, 5), _r(4, 5)
X5, Y5 = _r(5), _r(5)
S45, S4, S5 = _sign(4, 5), _sign(4), _sign(5)
BIN45 = (rng.random((4, 5)) > 0.5).astype(np.float64)
W5 = rng.random(5) + 0.5
RATE45 = rng.random((4, 5)) * 4
POS45 = rng.random((4, 5)) + 0.1
VAR41 = rng.random((4, 1)) + 0.1
VAR4 = rng.random(4) + 0.1
CLS4 = np.array([0, 4, 2, 2])
# multilabel targets: class lists ended by -1 (duplicates and a 0 after the end on purpose).
ML45 = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 1, 2, 3, 0], [4, 4, -1, 0, 0]])

# (name, module factory given (nn, tensor-maker), inputs, how many leading inputs get gradients)
CASES = [
    ("MarginRankingLoss", lambda m, T: m.MarginRankingLoss(margin=0.3), (X5, Y5, S5), 2),
    ("MarginRankingLoss-2d", lambda m, T: m.MarginRankingLoss(), (X45, Y45, S45), 2),
    ("HingeEmbeddingLoss", lambda m, T: m.HingeEmbeddingLoss(margin=0.7), (X45, S45), 1),
    ("SoftMarginLoss", lambda m, T: m.SoftMarginLoss(), (X45, S45), 1),
    ("MultiLabelSoftMarginLoss", lambda m, T: m.MultiLabelSoftMarginLoss(), (X45, BIN45), 1),
    ("MultiLabelSoftMarginLoss-w", lambda m, T: m.MultiLabelSoftMarginLoss(weight=T(W5)), (X45, BIN45), 1),
    ("MultiLabelMarginLoss", lambda m, T: m.MultiLabelMarginLoss(), (X45, ML45), 1),
    ("MultiLabelMarginLoss-1d", lambda m, T: m.MultiLabelMarginLoss(), (X5, ML45[0]), 1),
    ("MultiMarginLoss", lambda m, T: m.MultiMarginLoss(), (X45, CLS4), 1),
    ("MultiMarginLoss-p2-w", lambda m, T: m.MultiMarginLoss(p=2, margin=0.8, weight=T(W5)), (X45, CLS4), 1),
    ("MultiMarginLoss-1d", lambda m, T: m.MultiMarginLoss(), (X5, np.array(3)), 1),
    ("CosineEmbeddingLoss", lambda m, T: m.CosineEmbeddingLoss(margin=0.2), (X45, Y45, S4), 2),
    ("CosineEmbeddingLoss-1d", lambda m, T: m.CosineEmbeddingLoss(), (X5, Y5, np.array(-1.0)), 2),
    ("TripletMarginLoss", lambda m, T: m.TripletMarginLoss(), (X45, Y45, Z45), 3),
    ("TripletMarginLoss-p3-swap", lambda m, T: m.TripletMarginLoss(margin=2.0, p=3, swap=True), (X45, Y45, Z45), 3),
    ("TripletMarginLoss-1d", lambda m, T: m.TripletMarginLoss(), (X5, Y5, X5[::-1].copy()), 3),
    ("TripletMarginWithDistanceLoss", lambda m, T: m.TripletMarginWithDistanceLoss(swap=True), (X45, Y45, Z45), 3),
    ("TripletMarginWithDistanceLoss-cos",
     lambda m, T: m.TripletMarginWithDistanceLoss(
         distance_function=lambda a, b: 1.0 - m.functional.cosine_similarity(a, b), margin=0.5), (X45, Y45, Z45), 3),
    ("PoissonNLLLoss", lambda m, T: m.PoissonNLLLoss(), (X45, RATE45), 1),
    ("PoissonNLLLoss-full", lambda m, T: m.PoissonNLLLoss(full=True), (X45, RATE45), 1),
    ("PoissonNLLLoss-rate", lambda m, T: m.PoissonNLLLoss(log_input=False, eps=1e-6), (POS45, RATE45), 1),
    ("GaussianNLLLoss", lambda m, T: m.GaussianNLLLoss(), (X45, Y45, POS45), 3),
    ("GaussianNLLLoss-homo-full", lambda m, T: m.GaussianNLLLoss(full=True), (X45, Y45, VAR41), 3),
    ("GaussianNLLLoss-short", lambda m, T: m.GaussianNLLLoss(eps=0.2), (X45, Y45, VAR4), 3),
]


def _tensors(lib, arrays, ng):
    return [lib.tensor(a, requires_grad=(i < ng and a.dtype.kind == "f")) for i, a in enumerate(arrays)]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,make,arrays,ng", CASES, ids=[c[0] for c in CASES])
def test_loss_module_matches_torch(name, make, arrays, ng, reduction):
    mt = make(torch.nn, torch.tensor)
    mp = make(nn, tp.tensor)
    mt.reduction = mp.reduction = reduction
    ts, ps = _tensors(torch, arrays, ng), _tensors(tp, arrays, ng)
    out_t, out_p = mt(*ts), mp(*ps)
    assert tuple(out_p.shape) == tuple(out_t.shape)
    assert out_p.dtype == tp.float64
    np.testing.assert_allclose(to_np(out_p), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    out_t.sum().backward()
    out_p.sum().backward()
    for t, p in zip(ts, ps):
        if t.requires_grad:
            np.testing.assert_allclose(to_np(p.grad), t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_float32_losses_keep_dtype():
    x, y = X45.astype(np.float32), S45.astype(np.float32)
    out = F.soft_margin_loss(tp.tensor(x), tp.tensor(y))
    assert out.dtype == tp.float32
    ref = torch.nn.functional.soft_margin_loss(torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(to_np(out), ref.numpy(), rtol=1e-6)


def test_legacy_size_average_reduce():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        ref = torch.nn.functional.hinge_embedding_loss(torch.tensor(X45), torch.tensor(S45), reduce=False)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.hinge_embedding_loss(tp.tensor(X45), tp.tensor(S45), reduce=False)
    np.testing.assert_allclose(to_np(out), ref.numpy())
    with pytest.warns(UserWarning):
        ref_module = torch.nn.MarginRankingLoss(size_average=False)
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        module = nn.MarginRankingLoss(size_average=False)
    assert module.reduction == ref_module.reduction == "sum"


def _raises_like(fn_t, fn_p):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ep:
        fn_p()
    return str(et.value), str(ep.value)


@pytest.mark.parametrize("case", [
    lambda L, T: L.margin_ranking_loss(T(X45), T(Y45), T(S4)),
    lambda L, T: L.margin_ranking_loss(T(X5), T(Y5), T(S5), reduction="avg"),
    lambda L, T: L.multi_margin_loss(T(X45), T(CLS4), p=3),
    lambda L, T: L.multi_margin_loss(T(X45), T(CLS4), weight=T(X45)),
    lambda L, T: L.multi_margin_loss(T(X45), T(np.array([0, 1]))),
    lambda L, T: L.multi_margin_loss(T(X45), T(np.array([0, 1, 5, 2]))),
    lambda L, T: L.multi_margin_loss(T(_r(4, 5, 2)), T(CLS4)),
    lambda L, T: L.multilabel_margin_loss(T(X45), T(ML45[:2])),
    lambda L, T: L.multilabel_margin_loss(T(X5), T(ML45[0, :3])),
    lambda L, T: L.multilabel_margin_loss(T(X45), T(ML45 + 3)),
    lambda L, T: L.cosine_embedding_loss(T(X45), T(Y45), T(S45)),
    lambda L, T: L.cosine_embedding_loss(T(X5), T(Y5), T(S4)),
    lambda L, T: L.triplet_margin_loss(T(X45), T(Y45), T(Z45), margin=0.0),
    lambda L, T: L.triplet_margin_loss(T(X45), T(Y5), T(Z45)),
    lambda L, T: L.triplet_margin_with_distance_loss(T(X45), T(Y45), T(Z45), margin=-1.0),
    lambda L, T: L.poisson_nll_loss(T(X45), T(RATE45), reduction="bad"),
    lambda L, T: L.gaussian_nll_loss(T(X45), T(Y45), T(-POS45)),
    lambda L, T: L.gaussian_nll_loss(T(X45), T(Y45), T(_r(3, 2)).abs()),
    lambda L, T: L.gaussian_nll_loss(T(X45), T(Y45), T(POS45), reduction="avg"),
    lambda L, T: L.multilabel_soft_margin_loss(T(X45), T(BIN45), reduction="avg"),
], ids=lambda c: None)
def test_loss_errors_match_torch(case):
    msg_t, msg_p = _raises_like(lambda: case(torch.nn.functional, torch.tensor),
                                lambda: case(F, tp.tensor))
    assert msg_p.split("(")[0][:40] == msg_t.split("(")[0][:40]


def test_module_constructor_errors():
    for make in (lambda m: m.MultiMarginLoss(p=3), lambda m: m.TripletMarginLoss(margin=0),
                 lambda m: m.TripletMarginWithDistanceLoss(margin=0)):
        msg_t, msg_p = _raises_like(lambda: make(torch.nn), lambda: make(nn))
        assert msg_p == msg_t
    msg_t, msg_p = _raises_like(lambda: torch.nn.MultiMarginLoss(weight=torch.ones(2, 2)),
                                lambda: nn.MultiMarginLoss(weight=tp.ones(2, 2)))
    assert msg_p == msg_t


def test_loss_module_state_and_repr():
    w = np.arange(1.0, 6.0)
    mt, mp = torch.nn.MultiMarginLoss(weight=torch.tensor(w)), nn.MultiMarginLoss(weight=tp.tensor(w))
    assert list(mp.state_dict()) == list(mt.state_dict()) == ["weight"]
    assert repr(nn.TripletMarginWithDistanceLoss()) == repr(torch.nn.TripletMarginWithDistanceLoss())
    assert repr(nn.CTCLoss()) == repr(torch.nn.CTCLoss())


def test_nll_loss_2d_is_a_deprecated_nll_loss():
    x = np.log(rng.dirichlet(np.ones(3), (2, 4, 5)).transpose(0, 3, 1, 2))
    t = rng.integers(0, 3, (2, 4, 5))
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        mp = nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning):
        mt = torch.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(mp, nn.NLLLoss)
    np.testing.assert_allclose(mp(tp.tensor(x), tp.tensor(t)).item(), mt(torch.tensor(x), torch.tensor(t)).item())


# ---- CTC ----------------------------------------------------------------------------------------------------
T_, N_, C_ = 12, 3, 6
LP = np.log(rng.dirichlet(np.ones(C_), (T_, N_)))
TARGETS = np.array([[1, 2, 2, 3], [4, 1, 0, 0], [5, 5, 5, 1]])
IN_LEN = np.array([12, 9, 10])
TGT_LEN = np.array([4, 2, 3])


def _ctc_pair(lp, targets, in_len, tgt_len, as_tensor=True, **kw):
    """(torch loss, torchplug loss, torch input, torchplug input)."""
    lt, lpp = torch.tensor(lp, requires_grad=True), tp.tensor(lp, requires_grad=True)
    conv_t = torch.tensor if as_tensor else tuple
    conv_p = tp.tensor if as_tensor else tuple
    out_t = torch.nn.functional.ctc_loss(lt, torch.tensor(targets), conv_t(in_len), conv_t(tgt_len), **kw)
    out_p = F.ctc_loss(lpp, tp.tensor(targets), conv_p(in_len), conv_p(tgt_len), **kw)
    return out_t, out_p, lt, lpp


def _check_ctc(out_t, out_p, lt, lpp, rtol=1e-9, atol=1e-10):
    assert tuple(out_p.shape) == tuple(out_t.shape)
    np.testing.assert_allclose(to_np(out_p), out_t.detach().numpy(), rtol=rtol, atol=atol)
    out_t.sum().backward()
    out_p.sum().backward()
    np.testing.assert_allclose(to_np(lpp.grad), lt.grad.numpy(), rtol=rtol * 10, atol=atol * 10)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_torch(reduction, zero_infinity):
    _check_ctc(*_ctc_pair(LP, TARGETS, IN_LEN, TGT_LEN, reduction=reduction, zero_infinity=zero_infinity))


def test_ctc_concatenated_targets_unnormalized_and_impossible():
    # 1-d concatenated targets, raw scores (PyTorch's gradient formula assumes log-softmax inputs:
    # the comparison pins that formula), and a sample too short for its target (infinite loss, zeroed).
    flat = np.concatenate([TARGETS[0, :4], TARGETS[1, :2], TARGETS[2, :3]])
    _check_ctc(*_ctc_pair(_r(T_, N_, C_), flat, np.array([12, 9, 4]), TGT_LEN, as_tensor=False,
                          reduction="none", zero_infinity=True))


def test_ctc_impossible_alignment_is_inf():
    # Sample 2's target 5 5 5 needs 5 frames (blanks between the repeats); it gets 4.
    out_t, out_p, _, _ = _ctc_pair(LP, TARGETS, np.array([12, 9, 4]), TGT_LEN, reduction="none")
    assert np.isinf(to_np(out_p)[2]) and np.isinf(out_t.detach().numpy()[2])
    np.testing.assert_allclose(to_np(out_p)[:2], out_t.detach().numpy()[:2])


def test_ctc_unbatched_blank_and_float32():
    lt, lpp = torch.tensor(LP[:, 0], requires_grad=True), tp.tensor(LP[:, 0], requires_grad=True)
    out_t = torch.nn.functional.ctc_loss(lt, torch.tensor(TARGETS[0]), torch.tensor(12), torch.tensor(4))
    out_p = F.ctc_loss(lpp, tp.tensor(TARGETS[0]), tp.tensor(12), tp.tensor(4))
    _check_ctc(out_t, out_p, lt, lpp)
    _check_ctc(*_ctc_pair(LP, TARGETS % 5, IN_LEN, TGT_LEN, blank=5, reduction="sum"))
    out_t, out_p, lt, lpp = _ctc_pair(LP.astype(np.float32), TARGETS, IN_LEN, TGT_LEN)
    assert out_p.dtype == tp.float32
    _check_ctc(out_t, out_p, lt, lpp, rtol=1e-5, atol=1e-6)


def test_ctc_module_and_empty_target():
    lens = np.array([0, 2, 1])
    mt, mp = torch.nn.CTCLoss(blank=0, reduction="mean"), nn.CTCLoss(blank=0, reduction="mean")
    lt, lpp = torch.tensor(LP, requires_grad=True), tp.tensor(LP, requires_grad=True)
    out_t = mt(lt, torch.tensor(TARGETS), torch.tensor(IN_LEN), torch.tensor(lens))
    out_p = mp(lpp, tp.tensor(TARGETS), tp.tensor(IN_LEN), tp.tensor(lens))
    _check_ctc(out_t, out_p, lt, lpp)


def test_ctc_errors():
    for kw in ({"blank": 6}, {"reduction": "avg"}):
        msg_t, msg_p = _raises_like(
            lambda: torch.nn.functional.ctc_loss(torch.tensor(LP), torch.tensor(TARGETS), torch.tensor(IN_LEN),
                                                 torch.tensor(TGT_LEN), **kw),
            lambda: F.ctc_loss(tp.tensor(LP), tp.tensor(TARGETS), tp.tensor(IN_LEN), tp.tensor(TGT_LEN), **kw))
        assert msg_p.split("(")[0][:30] == msg_t.split("(")[0][:30]
    msg_t, msg_p = _raises_like(
        lambda: torch.nn.functional.ctc_loss(torch.tensor(LP), torch.tensor(TARGETS), torch.tensor(IN_LEN[:2]),
                                             torch.tensor(TGT_LEN)),
        lambda: F.ctc_loss(tp.tensor(LP), tp.tensor(TARGETS), tp.tensor(IN_LEN[:2]), tp.tensor(TGT_LEN)))
    assert msg_p == msg_t


# ---- AdaptiveLogSoftmaxWithLoss -------------------------------------------------------------------------------
def _asm_pair():
    torch.manual_seed(0)
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    mp = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True, dtype=tp.float64)
    assert list(mp.state_dict()) == list(mt.state_dict())
    assert [tuple(v.shape) for v in mp.state_dict().values()] == [tuple(v.shape) for v in mt.state_dict().values()]
    mp.load_state_dict({k: tp.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    return mt, mp


def test_adaptive_log_softmax_matches_torch():
    mt, mp = _asm_pair()
    assert repr(mp) == repr(mt)
    x, t = _r(7, 8), np.array([0, 9, 4, 3, 2, 7, 5])
    xt, xp = torch.tensor(x, requires_grad=True), tp.tensor(x, requires_grad=True)
    ot, op = mt(xt, torch.tensor(t)), mp(xp, tp.tensor(t))
    np.testing.assert_allclose(to_np(op.output), ot.output.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(op.loss.item(), ot.loss.item(), rtol=1e-10)
    ot.loss.backward()
    op.loss.backward()
    np.testing.assert_allclose(to_np(xp.grad), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_np(mp.tail[1][0].weight.grad), mt.tail[1][0].weight.grad.numpy(), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(to_np(mp.log_prob(xp)), mt.log_prob(xt).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(to_np(mp.predict(xp)), mt.predict(xt).numpy())
    o1, o2 = mt(xt[0], torch.tensor(t[0])), mp(xp[0], tp.tensor(t[0]))
    assert tuple(o2.output.shape) == tuple(o1.output.shape) == ()
    np.testing.assert_allclose(o2.loss.item(), o1.loss.item(), rtol=1e-10)


def test_adaptive_log_softmax_errors():
    for cutoffs in ([], [3, 3], [0, 4], [4, 2], [10]):
        msg_t, msg_p = _raises_like(lambda: torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs),
                                    lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs))
        assert msg_p == msg_t
    mt, mp = _asm_pair()
    msg_t, msg_p = _raises_like(lambda: mt(torch.zeros(2, 8, dtype=torch.float64), torch.tensor([1, 10])),
                                lambda: mp(tp.zeros(2, 8, dtype=tp.float64), tp.tensor([1, 10])))
    assert msg_p == msg_t
