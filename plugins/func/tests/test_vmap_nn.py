"""nn.functional ops, modules and linalg under vmap equal the same calls sample by sample (the rules,
decompositions and fallbacks agree with the unbatched kernels); a few against torch.vmap."""

from __future__ import annotations

import pytest

import torchplug as tp
from func_helpers import close, pair

F = tp.nn.functional
tp.manual_seed(0)
B = 3
x4 = tp.randn(B, 2, 3, 8, 8); x3 = tp.randn(B, 2, 4, 10); x2 = tp.randn(B, 5, 6)
w2d = tp.randn(4, 3, 3, 3); w1d = tp.randn(3, 4, 3); wt = tp.randn(3, 2, 3, 3)
lstm = tp.nn.LSTMCell(6, 4); gru = tp.nn.GRU(6, 4, batch_first=True); mha = tp.nn.MultiheadAttention(6, 2, batch_first=True)
enc = tp.nn.TransformerEncoderLayer(6, 2, 8, dropout=0.0, batch_first=True)
cases = {
 "conv2d": (lambda x: F.conv2d(x, w2d, padding=1), x4),
 "conv_transpose2d": (lambda x: F.conv_transpose2d(x, wt), x4),
 "conv1d": (lambda x: F.conv1d(x, w1d), x3),
 "max_pool1d": (lambda x: F.max_pool1d(x, 2), x3),
 "avg_pool1d": (lambda x: F.avg_pool1d(x, 2), x3),
 "batch_norm_eval": (lambda x: F.batch_norm(x, tp.zeros(3), tp.ones(3), training=False), x4),
 "instance_norm": (lambda x: F.instance_norm(x), x4),
 "layer_norm": (lambda x: F.layer_norm(x, (6,)), x2),
 "group_norm": (lambda x: F.group_norm(x, 1), x4),
 "interp_bilinear": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), x4),
 "pad_replicate": (lambda x: F.pad(x, (1, 1), mode="replicate"), x3),
 "unfold": (lambda x: F.unfold(x, 3), x4),
 "fold": (lambda x: F.fold(x, (4, 4), 2), tp.randn(B, 2, 4 * 2, 9)),
 "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), tp.randn(B, 2, 8, 3, 3)),
 "normalize": (lambda x: F.normalize(x, dim=-1), x2),
 "cosine_similarity": (lambda x: F.cosine_similarity(x, x.flip(0), dim=-1), x2),
 "pairwise_distance": (lambda x: F.pairwise_distance(x, x + 1), x2),
 "kl_div": (lambda x: F.kl_div(x.log_softmax(-1), x.softmax(-1), reduction="batchmean"), x2),
 "cross_entropy_ls": (lambda x: F.cross_entropy(x, tp.tensor([1, 0, 2, 3, 4]), label_smoothing=0.1), x2),
 "mish": (lambda x: F.mish(x), x2), "hardswish": (lambda x: F.hardswish(x), x2),
 "sdpa": (lambda x: F.scaled_dot_product_attention(x, x, x), x2),
 "einsum": (lambda x: tp.einsum("ij,kj->ik", x, x), x2),
 "cdist": (lambda x: tp.cdist(x, x), x2),
 "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, 2), x4),
 "embedding_bag": (lambda x: F.embedding_bag(tp.tensor([0, 2, 1, 3]), x, tp.tensor([0, 2])), tp.randn(B, 5, 4)),
 "lstm_cell": (lambda x: lstm(x)[0], x2),
 "gru": (lambda x: gru(x.unsqueeze(0))[0], x2),
 "mha": (lambda x: mha(x[None], x[None], x[None])[0], x2),
 "transformer_layer": (lambda x: enc(x[None]), x2),
 "topk": (lambda x: x.topk(2, -1).values, x2), "cummax": (lambda x: x.cummax(0).values, x2),
 "masked_fill": (lambda x: x.masked_fill(x > 0, 0.0), x2), "where": (lambda x: tp.where(x > 0, x, 0.0), x2),
 "clamp": (lambda x: x.clamp(-0.5, 0.5), x2), "std_mean": (lambda x: tp.std_mean(x, 0)[1], x2),
 "diff": (lambda x: tp.diff(x, dim=0), x2), "tensordot": (lambda x: tp.tensordot(x, x, dims=([1], [1])), x2),
 "kron": (lambda x: tp.kron(x[:2, :2], x[:2, :2]), x2), "cross": (lambda x: tp.linalg.cross(x[:, :3], x[:, 3:]), x2),
 "matrix_norm": (lambda x: tp.linalg.matrix_norm(x), x2), "svd": (lambda x: tp.linalg.svdvals(x), x2),
 "qr": (lambda x: tp.linalg.qr(x)[1].abs(), x2), "solve": (lambda x: tp.linalg.solve(x[:, :5] + 5 * tp.eye(5), x[:, 5]), x2),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the per-sample fallback's performance warning
@pytest.mark.parametrize("name", sorted(cases))
def test_matches_per_sample_calls(name):
    f, inp = cases[name]
    expected = tp.stack([f(inp[i]) for i in range(B)])
    got = tp.vmap(f)(inp)
    assert tuple(got.shape) == tuple(expected.shape)
    assert bool(((got - expected).abs() < 1e-4).all()), float((got - expected).abs().max())


@pytest.mark.parametrize("p,train", [(0.0, True), (0.5, False), (1.0, True)])
def test_dropout_that_draws_nothing_is_not_random(p, train):
    torch = pytest.importorskip("torch")
    x, xt = pair(3, 4)
    close(tp.vmap(lambda a: tp.nn.functional.dropout(a, p, train))(x),
          torch.vmap(lambda a: torch.nn.functional.dropout(a, p, train))(xt))


@pytest.mark.parametrize("make", [
    lambda m: (lambda a: m.stack(a.chunk(2, 1), 0)), lambda m: (lambda a: a.split([1, 3], 1)[1]),
    lambda m: (lambda a: m.stack(m.tensor_split(a, 2, 1))), lambda m: (lambda a: a.unbind(1)[2]),
], ids=["chunk", "split", "tensor_split", "unbind"])
def test_splitting_ops_against_torch(make):
    torch = pytest.importorskip("torch")
    x, xt = pair(5, 4, 4)
    for in_dims in (0, 2):
        close(tp.vmap(make(tp), in_dims=in_dims)(x), torch.vmap(make(torch), in_dims=in_dims)(xt))


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_module_against_torch(training):
    """Evaluation mode batches through the rule; training mode normalizes each sample over its own N."""
    torch = pytest.importorskip("torch")
    x, xt = pair(4, 5, 3, 6, dtype="float64")
    outs = []
    for m, inp in ((tp, x), (torch, xt)):
        bn = m.nn.BatchNorm1d(3, track_running_stats=not training).double()
        with m.no_grad():
            bn.weight.copy_(m.arange(3, dtype=m.float64) + 1)
            if not training:
                bn.running_mean.copy_(m.arange(3, dtype=m.float64) * 0.1)
                bn.running_var.copy_(m.arange(3, dtype=m.float64) + 0.5)
        bn.train(training)
        outs.append(m.vmap(bn)(inp))
    close(outs[0], outs[1])


# (functional, input shape, weight shape, kwargs): batched weights take one grouped convolution, and
# convolution_backward batches every input/weight/bias combination without the per-sample loop
CONV_CASES = [
    ("conv2d", (2, 3, 6, 6), (4, 3, 3, 3), {}),
    ("conv2d", (2, 4, 6, 6), (6, 2, 3, 3), {"groups": 2, "stride": 2, "padding": 1}),
    ("conv1d", (2, 3, 7), (4, 3, 2), {"dilation": 2}),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 1, 3, 3), {"groups": 2, "stride": 2}),
    ("conv2d", (3, 6, 6), (4, 3, 3, 3), {}),  # an unbatched (no N) convolution per sample
]


@pytest.mark.filterwarnings("error::UserWarning")  # no per-sample fallback warning
@pytest.mark.parametrize("dims", [(0, 0, 0), (0, 0, None), (None, None, 0), (0, None, None)])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_convolution_and_its_backward_with_batched_weights_against_torch(case, dims):
    torch = pytest.importorskip("torch")
    name, xs, ws, kw = CONV_CASES[case]
    out_channels = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    tensors = [pair(B, *ws, seed=1), pair(B, out_channels, seed=2), pair(B, *xs, seed=3)]  # weight, bias, input
    mine = [t[0] if d is not None else t[0][0] for t, d in zip(tensors, dims)]
    theirs = [t[1] if d is not None else t[1][0] for t, d in zip(tensors, dims)]

    def run(M):
        conv = getattr(M.nn.functional, name)

        def loss(w, b, x):
            return (conv(x, w, b, **kw) ** 2).sum()

        args = mine if M is tp else theirs
        out = M.vmap(lambda w, b, x: conv(x, w, b, **kw), in_dims=dims)(*args)
        grads = M.vmap(M.func.grad(loss, argnums=(0, 1, 2)), in_dims=dims)(*args)
        return [out, *grads]

    close(run(tp), run(torch), atol=1e-9, rtol=1e-9)
