"""validate_args: the parameter and value checks raise what torch raises (ValueError, same messages),
Distribution.set_default_validate_args switches them, and the plugin's exposure behaves like the others."""

from __future__ import annotations

import subprocess
import sys

import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _message(lib, fn):
    with pytest.raises(ValueError) as info:
        fn(lib.distributions, lib)
    return str(info.value)


def _same_message(fn):
    mine, ref = _message(tp, fn), _message(torch, fn)
    # torch prints its own tensor and type names; the rest is identical
    assert mine.replace("torchplug.", "torch.") == ref, (mine, ref)


@pytest.mark.parametrize("fn", [
    lambda D, L: D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0]), validate_args=True),
    lambda D, L: D.Bernoulli(probs=L.tensor([1.5]), validate_args=True),
    lambda D, L: D.Categorical(probs=L.tensor([[0.5, -0.5]]), validate_args=True),
    lambda D, L: D.Gamma(L.tensor(0.0), L.tensor(1.0), validate_args=True),
    lambda D, L: D.Dirichlet(L.tensor([1.0, -2.0]), validate_args=True),
    lambda D, L: D.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True),
    lambda D, L: D.Uniform(L.tensor(2.0), L.tensor(1.0), validate_args=True),
    lambda D, L: D.Binomial(L.tensor(-1.0), probs=L.tensor(0.5), validate_args=True),
    lambda D, L: D.ContinuousBernoulli(L.tensor([1.5]), validate_args=True),
    lambda D, L: D.Wishart(L.tensor(1.0), L.eye(3), validate_args=True),
])
def test_invalid_parameters(fn):
    _same_message(fn)


@pytest.mark.parametrize("fn", [
    lambda D, L: D.Normal(0.0, 1.0, validate_args=True).log_prob(L.tensor(float("nan"))),
    lambda D, L: D.Exponential(L.tensor([1.0]), validate_args=True).log_prob(L.tensor([-1.0])),
    lambda D, L: D.Bernoulli(L.tensor([0.3]), validate_args=True).log_prob(L.tensor([0.5])),
    lambda D, L: D.Categorical(L.tensor([0.3, 0.7]), validate_args=True).log_prob(L.tensor(2)),
    lambda D, L: D.Beta(L.tensor(1.0), L.tensor(2.0), validate_args=True).log_prob(L.tensor(1.5)),
    lambda D, L: D.Normal(L.zeros(3), 1.0, validate_args=True).log_prob(L.zeros(2)),
])
def test_value_outside_support(fn):
    _same_message(fn)


def test_both_probs_and_logits_refused():
    for lib in (tp, torch):
        with pytest.raises(ValueError, match="^Either `probs` or `logits` must be specified, but not both.$"):
            lib.distributions.Bernoulli(probs=lib.tensor(0.5), logits=lib.tensor(0.0))


def test_set_default_validate_args():
    D = tp.distributions
    assert D.Distribution._validate_args is True
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(tp.tensor(0.0), tp.tensor(-1.0))  # no check now
        assert float(d.scale) == -1.0
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="^Expected parameter scale"):
        D.Normal(tp.tensor(0.0), tp.tensor(-1.0))
    for lib in (tp, torch):
        with pytest.raises(ValueError):
            lib.distributions.Distribution.set_default_validate_args("yes")


def test_import_paths():
    import torchplug.distributions as dist
    from torchplug.distributions import constraints, transforms
    from torchplug.distributions.normal import Normal

    assert dist is tp.distributions and Normal is dist.Normal
    assert constraints.positive is dist.constraints.positive and transforms.ExpTransform is dist.ExpTransform
    assert sorted(set(torch.distributions.__all__) - set(dist.__all__)) == []


def test_blocked_plugin_says_which_plugin():
    code = ("import torchplug\n"
            "try:\n    torchplug.distributions\nexcept AttributeError as e:\n    print(e)\n"
            "print(float(torchplug.ones(2).sum()))\n")
    env = {"TORCHPLUG_BLOCK_PLUGINS": "distributions", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "torchplug.distributions is provided by the 'distributions' plugin" in out.stdout
    assert out.stdout.strip().endswith("2.0")  # everything else still works


def test_loaded_only_when_used():
    code = ("import sys, torchplug\n"
            "torchplug.ones(2) + 1\n"
            "print('torchplug_distributions.distributions' in sys.modules)\n"
            "print(torchplug.distributions.Normal(0.0, 1.0).mean.item())\n"
            "try:\n    torchplug.distributions.NoSuchThing\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["False", "0.0"] and lines[2].endswith("has no attribute 'NoSuchThing'")
