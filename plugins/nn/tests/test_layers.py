"""Every layer's forward output compared with real torch given the same state_dict (and grads when autograd exists)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn

from nn_helpers import has_autograd, to_np

torch = pytest.importorskip("torch")
tnn = torch.nn

rng = np.random.default_rng(0)
X4 = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
X3 = rng.standard_normal((2, 3, 11)).astype(np.float32)
X5 = rng.standard_normal((1, 2, 5, 6, 4)).astype(np.float32)
SEQ = rng.standard_normal((5, 2, 8)).astype(np.float32)
SEQ_BF = rng.standard_normal((2, 5, 8)).astype(np.float32)
VEC = rng.standard_normal((4, 6)).astype(np.float32)
TOK = np.array([[1, 0, 9, 3], [2, 2, 0, 7]])

CASES = [
    ("Linear", lambda m: m.Linear(6, 5), [VEC]),
    ("Linear-nobias", lambda m: m.Linear(6, 5, bias=False), [VEC]),
    ("Bilinear", lambda m: m.Bilinear(6, 6, 3), [VEC, VEC[::-1].copy()]),
    ("Identity", lambda m: m.Identity(), [VEC]),
    ("Flatten", lambda m: m.Flatten(), [X4]),
    ("Unflatten", lambda m: m.Unflatten(1, (2, 3)), [VEC]),
    ("Conv1d", lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), [X3]),
    ("Conv1d-same", lambda m: m.Conv1d(3, 4, 4, padding="same", dilation=2), [X3]),
    ("Conv2d", lambda m: m.Conv2d(3, 4, 3, padding=1, stride=2), [X4]),
    ("Conv2d-groups", lambda m: m.Conv2d(3, 6, (3, 2), groups=3, dilation=2), [X4]),
    ("Conv2d-reflect", lambda m: m.Conv2d(3, 2, 3, padding=1, padding_mode="reflect"), [X4]),
    ("Conv3d", lambda m: m.Conv3d(2, 3, 3, padding=1), [X5]),
    ("ConvTranspose1d", lambda m: m.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1), [X3]),
    ("ConvTranspose2d", lambda m: m.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), [X4]),
    ("ConvTranspose2d-groups", lambda m: m.ConvTranspose2d(3, 6, 2, stride=2, groups=3, dilation=1), [X4]),
    ("MaxPool1d", lambda m: m.MaxPool1d(3, 2, 1), [X3]),
    ("MaxPool2d", lambda m: m.MaxPool2d(2), [X4]),
    ("MaxPool2d-ceil", lambda m: m.MaxPool2d(3, 2, 1, ceil_mode=True), [X4]),
    ("MaxPool2d-dil", lambda m: m.MaxPool2d(2, 1, dilation=2), [X4]),
    ("AvgPool1d", lambda m: m.AvgPool1d(3, 2, 1), [X3]),
    ("AvgPool2d", lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True), [X4]),
    ("AvgPool2d-nopad", lambda m: m.AvgPool2d(3, 2, 1, count_include_pad=False), [X4]),
    ("AdaptiveAvgPool1d", lambda m: m.AdaptiveAvgPool1d(4), [X3]),
    ("AdaptiveAvgPool2d", lambda m: m.AdaptiveAvgPool2d((3, 5)), [X4]),
    ("AdaptiveMaxPool1d", lambda m: m.AdaptiveMaxPool1d(4), [X3]),
    ("AdaptiveMaxPool2d", lambda m: m.AdaptiveMaxPool2d((4, 3)), [X4]),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(6), [VEC]),
    ("BatchNorm1d-3d", lambda m: m.BatchNorm1d(3, momentum=0.3), [X3]),
    ("BatchNorm2d", lambda m: m.BatchNorm2d(3), [X4]),
    ("BatchNorm2d-eval", lambda m: m.BatchNorm2d(3).eval(), [X4]),
    ("BatchNorm2d-cma", lambda m: m.BatchNorm2d(3, momentum=None), [X4]),
    ("LayerNorm", lambda m: m.LayerNorm(8), [X4]),
    ("LayerNorm-2d", lambda m: m.LayerNorm((9, 8), elementwise_affine=False), [X4]),
    ("GroupNorm", lambda m: m.GroupNorm(3, 3), [X4]),
    ("RMSNorm", lambda m: m.RMSNorm(8), [X4]),
    ("Dropout-eval", lambda m: m.Dropout(0.3).eval(), [VEC]),
    ("Dropout2d-eval", lambda m: m.Dropout2d(0.3).eval(), [X4]),
    ("Embedding", lambda m: m.Embedding(10, 4, padding_idx=0), [TOK]),
    ("RNN", lambda m: m.RNN(8, 6, 2), [SEQ]),
    ("RNN-relu-bi", lambda m: m.RNN(8, 6, nonlinearity="relu", bidirectional=True), [SEQ]),
    ("LSTM", lambda m: m.LSTM(8, 6, 2, bidirectional=True), [SEQ]),
    ("LSTM-bf", lambda m: m.LSTM(8, 6, batch_first=True), [SEQ_BF]),
    ("LSTM-proj", lambda m: m.LSTM(8, 6, proj_size=3), [SEQ]),
    ("GRU", lambda m: m.GRU(8, 6, 2, batch_first=True, bidirectional=True), [SEQ_BF]),
    ("RNNCell", lambda m: m.RNNCell(6, 5), [VEC]),
    ("LSTMCell", lambda m: m.LSTMCell(6, 5), [VEC]),
    ("GRUCell", lambda m: m.GRUCell(6, 5), [VEC]),
    ("MultiheadAttention", lambda m: m.MultiheadAttention(8, 2), [SEQ, SEQ, SEQ]),
    ("MultiheadAttention-bf-kv", lambda m: m.MultiheadAttention(8, 4, batch_first=True, kdim=5, vdim=3, add_bias_kv=True),
     [SEQ_BF, SEQ_BF[..., :5].copy(), SEQ_BF[..., :3].copy()]),
    ("TransformerEncoderLayer", lambda m: m.TransformerEncoderLayer(8, 2, 16).eval(), [SEQ]),
    ("TransformerEncoderLayer-nf-gelu", lambda m: m.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True,
                                                                            batch_first=True).eval(), [SEQ_BF]),
    ("TransformerDecoderLayer", lambda m: m.TransformerDecoderLayer(8, 2, 16).eval(), [SEQ, SEQ[::-1].copy()]),
    ("TransformerEncoder", lambda m: m.TransformerEncoder(m.TransformerEncoderLayer(8, 2, 16), 2, m.LayerNorm(8)).eval(), [SEQ]),
    ("Transformer", lambda m: m.Transformer(8, 2, 1, 1, 16).eval(), [SEQ, SEQ[:3].copy()]),
    ("ReLU", lambda m: m.ReLU(), [VEC]),
    ("ReLU6", lambda m: m.ReLU6(), [VEC * 5]),
    ("GELU", lambda m: m.GELU(), [VEC]),
    ("GELU-tanh", lambda m: m.GELU("tanh"), [VEC]),
    ("SiLU", lambda m: m.SiLU(), [VEC]),
    ("Tanh", lambda m: m.Tanh(), [VEC]),
    ("Sigmoid", lambda m: m.Sigmoid(), [VEC]),
    ("Softmax", lambda m: m.Softmax(dim=1), [VEC]),
    ("LogSoftmax", lambda m: m.LogSoftmax(dim=-1), [VEC]),
    ("LeakyReLU", lambda m: m.LeakyReLU(0.2), [VEC]),
    ("ELU", lambda m: m.ELU(0.7), [VEC]),
    ("Softplus", lambda m: m.Softplus(2.0, 1.0), [VEC]),
    ("Mish", lambda m: m.Mish(), [VEC]),
    ("Hardtanh", lambda m: m.Hardtanh(-0.5, 0.5), [VEC]),
    ("PReLU", lambda m: m.PReLU(3), [X4]),
    ("Hardswish", lambda m: m.Hardswish(), [VEC * 3]),
    ("LogSigmoid", lambda m: m.LogSigmoid(), [VEC]),
]


def _first(out):
    while isinstance(out, tuple):
        out = out[0]
    return out


@pytest.mark.parametrize("name,make,inputs", CASES, ids=[c[0] for c in CASES])
def test_forward_matches_torch(name, make, inputs):
    ours = make(nn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = make(tnn)
    ref.load_state_dict({k: torch.tensor(to_np(v)) for k, v in ours.state_dict().items()})
    out = ours(*[tp.tensor(i) for i in inputs])
    with warnings.catch_warnings():  # torch's own notices (e.g. oneDNN fallbacks) are not under test
        warnings.simplefilter("ignore")
        expected = ref(*[torch.tensor(i) for i in inputs])
    np.testing.assert_allclose(to_np(_first(out)), _first(expected).detach().numpy(), rtol=1e-4, atol=1e-5)
    if isinstance(out, tuple) and isinstance(out[1], tuple):  # LSTM (h_n, c_n)
        for a, b in zip(out[1], expected[1]):
            np.testing.assert_allclose(to_np(a), b.detach().numpy(), rtol=1e-4, atol=1e-5)
    elif isinstance(out, tuple) and out[1] is not None:
        np.testing.assert_allclose(to_np(out[1]), expected[1].detach().numpy(), rtol=1e-4, atol=1e-5)
    # Buffers updated by forward (BatchNorm running stats) match too.
    for (k, v), (k2, v2) in zip(ours.state_dict().items(), ref.state_dict().items()):
        assert k == k2
        np.testing.assert_allclose(to_np(v), v2.numpy(), rtol=1e-5, atol=1e-6)


GRAD_CASES = [c for c in CASES if c[0] in {"Linear", "Conv2d", "LSTM", "BatchNorm2d", "LayerNorm", "MultiheadAttention",
                                            "Embedding", "GRU", "TransformerEncoderLayer"}]


@pytest.mark.parametrize("name,make,inputs", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch(name, make, inputs):
    if not has_autograd():
        pytest.skip("torchplug.autograd (the autograd plugin) is not available yet; gradient comparison needs it")
    ours = make(nn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = make(tnn)
    ref.load_state_dict({k: torch.tensor(to_np(v)) for k, v in ours.state_dict().items()})
    out = _first(ours(*[tp.tensor(i) for i in inputs]))
    expected = _first(ref(*[torch.tensor(i) for i in inputs]))
    try:
        (out * out).sum().backward()
    except Exception as exc:  # noqa: BLE001 - an op without a derivative yet
        pytest.skip(f"autograd cannot differentiate this layer yet: {type(exc).__name__}: {exc}")
    (expected * expected).sum().backward()
    for (k, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        if q.grad is None:
            continue
        assert p.grad is not None, k
        np.testing.assert_allclose(to_np(p.grad), q.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=k)


def test_dropout_training_scales_and_zeroes():
    tp.manual_seed(0)
    x = tp.ones(1000)
    y = nn.Dropout(0.25)(x)
    vals = set(np.round(to_np(y), 5).tolist())
    assert vals <= {0.0, round(1 / 0.75, 5)}
    assert 150 < int((y == 0).sum()) < 350
    y2 = nn.Dropout2d(0.5)(tp.ones(4, 8, 3, 3))
    per_channel = to_np(y2).reshape(4, 8, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))


def test_default_init_distributions():
    tp.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / np.sqrt(100)
    w = to_np(lin.weight)
    assert w.shape == (50, 100) and np.abs(w).max() <= bound + 1e-7 and w.std() > bound / 3
    assert np.abs(to_np(lin.bias)).max() <= bound
    bn = nn.BatchNorm2d(4)
    assert to_np(bn.weight).tolist() == [1.0] * 4 and to_np(bn.running_var).tolist() == [1.0] * 4
    assert bn.num_batches_tracked.dtype == tp.int64
    emb = nn.Embedding(5, 3, padding_idx=2)
    assert to_np(emb.weight)[2].tolist() == [0.0, 0.0, 0.0]
    assert nn.PReLU().weight.item() == pytest.approx(0.25)
    mha = nn.MultiheadAttention(8, 2)
    assert to_np(mha.in_proj_bias).tolist() == [0.0] * 24


def test_factory_kwargs_dtype():
    lin = nn.Linear(3, 2, dtype=tp.float64)
    assert lin.weight.dtype == tp.float64
    bn = nn.BatchNorm2d(3, dtype=tp.float16)
    assert bn.running_mean.dtype == tp.float16 and bn.num_batches_tracked.dtype == tp.int64
    conv = nn.Conv2d(1, 1, 1, device="meta")
    assert conv.weight.device.type == "meta"
