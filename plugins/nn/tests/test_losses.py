"""Loss modules compared with real torch for every reduction."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn

from nn_helpers import to_np

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
LOGITS = rng.standard_normal((6, 5)).astype(np.float32)
LOGITS3 = rng.standard_normal((2, 5, 3)).astype(np.float32)
IDX = np.array([1, 0, 4, 2, 4, 3])
IDX_IGN = np.array([1, -100, 4, 2, 4, -100])
IDX3 = rng.integers(0, 5, (2, 3))
PROBS = rng.random((6, 5)).astype(np.float32)
PROBS /= PROBS.sum(1, keepdims=True)
REG_A = rng.standard_normal((4, 3)).astype(np.float32) * 2
REG_B = rng.standard_normal((4, 3)).astype(np.float32) * 2
SIG = 1 / (1 + np.exp(-REG_A))
BIN = (rng.random((4, 3)) > 0.5).astype(np.float32)
W5 = rng.random(5).astype(np.float32) + 0.5

CASES = [
    ("CrossEntropyLoss", lambda m, T: m.CrossEntropyLoss(), LOGITS, IDX),
    ("CrossEntropyLoss-weight-ignore", lambda m, T: m.CrossEntropyLoss(weight=T(W5)), LOGITS, IDX_IGN),
    ("CrossEntropyLoss-smooth", lambda m, T: m.CrossEntropyLoss(weight=T(W5), label_smoothing=0.2), LOGITS, IDX_IGN),
    ("CrossEntropyLoss-kd", lambda m, T: m.CrossEntropyLoss(label_smoothing=0.1), LOGITS3, IDX3),
    ("CrossEntropyLoss-probs", lambda m, T: m.CrossEntropyLoss(label_smoothing=0.1), LOGITS, PROBS),
    ("NLLLoss", lambda m, T: m.NLLLoss(weight=T(W5)), LOGITS, IDX_IGN),
    ("MSELoss", lambda m, T: m.MSELoss(), REG_A, REG_B),
    ("L1Loss", lambda m, T: m.L1Loss(), REG_A, REG_B),
    ("SmoothL1Loss", lambda m, T: m.SmoothL1Loss(beta=0.5), REG_A, REG_B),
    ("HuberLoss", lambda m, T: m.HuberLoss(delta=0.7), REG_A, REG_B),
    ("BCELoss", lambda m, T: m.BCELoss(), SIG, BIN),
    ("BCEWithLogitsLoss", lambda m, T: m.BCEWithLogitsLoss(pos_weight=T(np.array([1.0, 2.0, 0.5], np.float32))), REG_A, BIN),
    ("KLDivLoss", lambda m, T: m.KLDivLoss(), np.log(PROBS[:, ::-1].copy()), PROBS),
    ("KLDivLoss-logt", lambda m, T: m.KLDivLoss(log_target=True), np.log(PROBS[:, ::-1].copy()), np.log(PROBS)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name,make,a,b", CASES, ids=[c[0] for c in CASES])
def test_loss_matches_torch(name, make, a, b, reduction):
    ours = make(nn, tp.tensor)
    ref = make(torch.nn, torch.tensor)
    ours.reduction = ref.reduction = reduction
    if name.startswith("KLDiv") and reduction == "mean":
        with pytest.warns(UserWarning, match="batchmean"):
            out = ours(tp.tensor(a), tp.tensor(b))
        with pytest.warns(UserWarning, match="batchmean"):
            expected = ref(torch.tensor(a), torch.tensor(b))
    else:
        out = ours(tp.tensor(a), tp.tensor(b))
        expected = ref(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(to_np(out), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_kl_div_batchmean():
    a, b = np.log(PROBS[:, ::-1].copy()), PROBS
    out = nn.KLDivLoss(reduction="batchmean")(tp.tensor(a), tp.tensor(b))
    expected = torch.nn.KLDivLoss(reduction="batchmean")(torch.tensor(a), torch.tensor(b))
    assert out.item() == pytest.approx(expected.item(), rel=1e-5)


def test_loss_errors():
    with pytest.raises(ValueError, match="different to the input size"):
        nn.BCELoss()(tp.tensor(SIG), tp.tensor(BIN[:, :2]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        nn.CrossEntropyLoss()(tp.tensor(LOGITS), tp.tensor(np.array([1, 0, 7, 2, 4, 3])))
    with pytest.warns(UserWarning, match="target size"):
        nn.MSELoss()(tp.tensor(REG_A), tp.tensor(REG_B[:1]))
