"""nn.functional.linear_cross_entropy (PyTorch 2.13's reference path) and assert_int_or_pair against torch."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
B = RNG.standard_normal(3)
WK = RNG.standard_normal((3, 2, 4))


CASES = {
    "bias, smoothing, ignored row": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 2, 1, 1, -100]), linear_bias=m.tensor(B), label_smoothing=0.1),
    "class weights, sum": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 2, 1, 1, 0]), weight=m.tensor([1.0, 2.0, 0.5], dtype=m.float64), reduction="sum"),
    "no reduction, ignore_index": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 2, 1, 1, 0]), reduction="none", ignore_index=1),
    "probabilities": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.softmax(m.tensor(RNG_P), 1)),
    "unbatched": lambda m, x, w: m.nn.functional.linear_cross_entropy(x[0], w, m.tensor(1)),
    "K-dimensional": lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, m.tensor(WK), m.tensor([[0, 1], [2, 2], [1, 0], [0, 0], [1, 1]])),
}
RNG_P = RNG.standard_normal((5, 3))


@pytest.mark.parametrize("name", sorted(CASES))
def test_linear_cross_entropy_matches_torch(name):
    def run(m):
        x, w = m.tensor(X, requires_grad=True), m.tensor(W, requires_grad=True)
        loss = CASES[name](m, x, w)
        loss.sum().backward()
        return loss.detach().numpy(), x.grad.numpy(), None if w.grad is None else w.grad.numpy()

    for o, t in zip(run(tp), run(torch)):
        assert (o is None) == (t is None)
        if o is not None:
            np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_refusals_match_torch():
    def run(m):
        F = m.nn.functional
        x, w, wk = m.tensor(X), m.tensor(W), m.tensor(WK)
        out = []
        for call in (lambda: F.linear_cross_entropy(x, w[:, :3], m.tensor([0] * 5)),
                     lambda: F.linear_cross_entropy(x[0], wk, m.tensor([0, 1])),
                     lambda: F.linear_cross_entropy(x, w, m.tensor([0] * 5), linear_bias=m.ones(2)),
                     lambda: F.linear_cross_entropy(x, w, m.ones(5, 3) / 3, ignore_index=0)):
            try:
                call()
                out.append(None)
            except RuntimeError as exc:
                out.append(str(exc))
        return out

    assert run(tp) == run(torch)


def test_assert_int_or_pair_matches_torch():
    for m in (tp, torch):
        m.nn.functional.assert_int_or_pair(3, "k", "{} bad")
        m.nn.functional.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="kernel must be int or pair"):
            m.nn.functional.assert_int_or_pair([1, 2, 3], "kernel", "{} must be int or pair")


@pytest.mark.parametrize("name", ["eye", "dirac", "orthogonal", "sparse"])
def test_deprecated_init_aliases_warn_and_initialize_like_torch(name):
    shapes = {"eye": (3, 4), "dirac": (2, 2, 3), "orthogonal": (3, 5), "sparse": (4, 3)}
    args = {"sparse": (0.5,)}.get(name, ())
    for m in (tp, torch):
        t = m.empty(*shapes[name])
        with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
            out = getattr(m.nn.init, name)(t, *args)
        assert out is t and getattr(m.nn.init, name).__name__ == name
    if name in ("eye", "dirac"):  # deterministic: the same values as torch's
        ours = getattr(tp.nn.init, name + "_")(tp.empty(*shapes[name]))
        theirs = getattr(torch.nn.init, name + "_")(torch.empty(*shapes[name]))
        assert ours.tolist() == theirs.tolist()


def test_factory_kwargs_matches_torch():
    def run(m):
        out = [m.nn.factory_kwargs(None), m.nn.factory_kwargs({"device": "cpu"}),
               sorted(m.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": m.float64}}))]
        for bad in ({"devices": "cpu"}, {"dtype": m.float32, "factory_kwargs": {"dtype": m.float64}}):
            try:
                m.nn.factory_kwargs(bad)
            except TypeError as exc:
                out.append(str(exc))
        return out

    assert run(tp) == run(torch)


def test_linear_cross_entropy_options_have_torchs_fields_and_change_no_value():
    import dataclasses

    ours = [(f.name, f.default) for f in dataclasses.fields(tp.nn.LinearCrossEntropyOptions)]
    theirs = [(f.name, f.default) for f in dataclasses.fields(torch.nn.LinearCrossEntropyOptions)]
    assert ours == theirs
    x, w, t = tp.tensor(X), tp.tensor(W), tp.tensor([0, 2, 1, 1, 0])
    chunked = tp.nn.functional.linear_cross_entropy(x, w, t, options=tp.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    assert chunked.item() == tp.nn.functional.linear_cross_entropy(x, w, t).item()
