"""``nn.utils.prune`` compared with torch: masks, reparametrization, containers, global pruning, errors."""

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn.utils.prune as prune

torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")


def _pair(shape=(4, 3, 2, 2), seed=0):
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    ours, ref = tp.nn.Conv2d(3, 4, 2), torch.nn.Conv2d(3, 4, 2)
    ours.weight.data = tp.tensor(w)
    ref.weight.data = torch.tensor(w)
    return ours, ref


def _masks_equal(ours, ref, name="weight"):
    np.testing.assert_array_equal(np.asarray(getattr(ours, name + "_mask").tolist()),
                                  getattr(ref, name + "_mask").numpy())
    np.testing.assert_allclose(np.asarray(getattr(ours, name).detach().tolist()),
                               getattr(ref, name).detach().numpy())


@pytest.mark.parametrize("how", ["random_unstructured", "l1_unstructured", "random_structured", "ln_structured"])
def test_methods_and_iterative_pruning_as_torch(how):
    ours, ref = _pair()
    kwargs = {"random_unstructured": {"amount": 0.3}, "l1_unstructured": {"amount": 5},
              "random_structured": {"amount": 0.5, "dim": 0}, "ln_structured": {"amount": 1, "n": 2, "dim": 1}}[how]
    tp.manual_seed(3)
    getattr(prune, how)(ours, "weight", **kwargs)
    torch.manual_seed(3)
    getattr(tprune, how)(ref, "weight", **kwargs)
    _masks_equal(ours, ref)
    assert sorted(n for n, _ in ours.named_parameters()) == sorted(n for n, _ in ref.named_parameters())
    assert sorted(ours.state_dict()) == sorted(ref.state_dict())
    # A second method acts on what is left (a PruningContainer).
    prune.l1_unstructured(ours, "weight", amount=0.25)
    tprune.l1_unstructured(ref, "weight", amount=0.25)
    _masks_equal(ours, ref)
    hook = next(h for h in ours._forward_pre_hooks.values() if h._tensor_name == "weight")
    assert isinstance(hook, prune.PruningContainer) and len(hook) == 2
    assert prune.is_pruned(ours)
    prune.remove(ours, "weight")
    tprune.remove(ref, "weight")
    assert isinstance(ours.weight, tp.nn.Parameter) and not prune.is_pruned(ours)
    np.testing.assert_allclose(np.asarray(ours.weight.detach().tolist()), ref.weight.detach().numpy())


def test_pruned_weight_recomputed_every_forward_and_gradient_masked():
    ours, _ = _pair()
    prune.l1_unstructured(ours, "weight", amount=0.5)
    ours.weight_orig.data.fill_(2.0)
    x = tp.randn(1, 3, 2, 2)
    ours(x).sum().backward()
    assert set(ours.weight.unique().tolist()) == {0.0, 2.0}
    assert bool((ours.weight_orig.grad[ours.weight_mask == 0] == 0).all())


def test_global_unstructured_and_custom_mask_as_torch():
    (a, ra), (b, rb) = _pair(seed=1), _pair(seed=2)
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured([(ra, "weight"), (rb, "weight")], pruning_method=tprune.L1Unstructured, amount=0.4)
    _masks_equal(a, ra)
    _masks_equal(b, rb)
    lin = tp.nn.Linear(3, 2)
    prune.custom_from_mask(lin, "bias", mask=tp.tensor([0, 1]))
    assert lin.bias[0].item() == 0.0 and lin.bias_mask.tolist() == [0.0, 1.0]
    with pytest.raises(TypeError, match='^Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(a, "bias")], pruning_method=prune.RandomStructured, amount=1)


def test_errors_as_torch():
    lin = tp.nn.Linear(3, 2)
    for args, exc in (((lin, "weight", -1), ValueError), ((lin, "weight", 1.5), ValueError),
                      ((lin, "weight", "a"), TypeError), ((lin, "weight", 7), ValueError)):
        ref_lin = torch.nn.Linear(3, 2)
        with pytest.raises(exc) as theirs:
            tprune.random_unstructured(ref_lin, *args[1:])
        with pytest.raises(exc) as ours:
            prune.random_unstructured(*args)
        assert str(ours.value) == str(theirs.value)
    # Rolled back after the failure (the parameter re-registered, as torch does).
    assert [n for n, _ in lin.named_parameters()] == [n for n, _ in ref_lin.named_parameters()]
    assert not prune.is_pruned(lin) and not hasattr(lin, "weight_orig")
    with pytest.raises(ValueError, match="^Structured pruning can only be applied to multidimensional tensors"):
        prune.ln_structured(lin, "bias", amount=1, n=2, dim=0)
    with pytest.raises(ValueError, match="^Parameter 'weight' of module .* has to be pruned before pruning can be"):
        prune.remove(lin, "weight")
