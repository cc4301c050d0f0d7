"""``optim.swa_utils`` against torch's: AveragedModel (SWA, EMA via avg_fn and multi_avg_fn, use_buffers),
SWALR schedules, update_bn, and the optimizers' Tensor-lr check."""

from __future__ import annotations

import numpy as np
import pytest

import torchplug as tp

torch = pytest.importorskip("torch")


def _model(L, seed=0):
    rng = np.random.default_rng(seed)
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.ReLU(), L.nn.Linear(4, 2))
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)), dtype=L.float32))
    return m


def _batches(L, n=4):
    rng = np.random.default_rng(7)
    return [L.tensor(rng.standard_normal((5, 3)), dtype=L.float32) for _ in range(n)]


def _train_and_average(L, **averaged_kwargs):
    model = _model(L)
    averaged = L.optim.swa_utils.AveragedModel(model, **averaged_kwargs)
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    for x in _batches(L):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        averaged.update_parameters(model)
    return averaged


def _state(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def _assert_same_states(ours, theirs):
    a, b = _state(ours), _state(theirs)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema_avg_fn", "swa_avg_fn", "ema_buffers"])
def test_averaged_model_matches_torch(kind):
    def kwargs(L):
        su = L.optim.swa_utils
        return {
            "swa": {},
            "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
            "ema_avg_fn": {"avg_fn": su.get_ema_avg_fn(0.8)},
            "swa_avg_fn": {"avg_fn": su.get_swa_avg_fn()},
            "ema_buffers": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.7), "use_buffers": True},
        }[kind]

    ours, theirs = _train_and_average(tp, **kwargs(tp)), _train_and_average(torch, **kwargs(torch))
    _assert_same_states(ours, theirs)
    assert int(ours.n_averaged) == int(theirs.n_averaged) == 4
    x = _batches(tp, 1)[0]
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(x).detach().numpy(), theirs(torch.tensor(x.numpy())).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_averaged_model_rejects_both_functions_and_bad_decay():
    su = tp.optim.swa_utils
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        su.AveragedModel(_model(tp), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
    for fn in (su.get_ema_avg_fn, su.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            fn(1.5)


def test_swa_multi_avg_fn_on_integers_raises_as_torch():
    # integer tensors take the addcdiv path, which refuses integer division in both libraries
    errors = []
    for L in (tp, torch):
        avg, cur = [L.tensor([10, 20, 31])], [L.tensor([14, 0, 1])]
        with pytest.raises(RuntimeError) as info:
            L.optim.swa_utils.get_swa_multi_avg_fn()(avg, cur, L.tensor(3))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_ema_multi_avg_fn_on_integers_matches_torch():
    results = []
    for L in (tp, torch):
        avg, cur = [L.tensor([10, 20, 31])], [L.tensor([14, 0, 1])]
        L.optim.swa_utils.get_ema_multi_avg_fn(0.5)(avg, cur, L.tensor(3))
        results.append(avg[0].tolist())
    assert results[0] == results[1]


@pytest.mark.parametrize("strategy,anneal_epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr_schedule_matches_torch(strategy, anneal_epochs):
    def lrs(L):
        opt = L.optim.SGD([L.nn.Parameter(L.zeros(2)), ], lr=0.5)
        opt.add_param_group({"params": [L.nn.Parameter(L.zeros(1))], "lr": 0.2})
        sched = L.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs,
                                         anneal_strategy=strategy)
        out = []
        for _ in range(7):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return out, sched

    (ours, sched), (theirs, tsched) = lrs(tp), lrs(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    state = sched.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    assert set(state) <= set(tsched.state_dict()) | {"_get_lr_called_within_step", "_is_initial"}
    sched.load_state_dict(state)
    assert sched.anneal_func == (sched._cosine_anneal if strategy == "cos" else sched._linear_anneal)


def test_swalr_errors_match_torch():
    for bad, match in (({"anneal_strategy": "exp"}, "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
                       ({"anneal_epochs": -1}, "anneal_epochs must be equal or greater than 0, got -1"),
                       ({"swa_lr": [0.1, 0.2]}, "swa_lr must have the same length as optimizer.param_groups")):
        for L in (tp, torch):
            opt = L.optim.SGD([L.nn.Parameter(L.zeros(2))], lr=0.5)
            with pytest.raises(ValueError, match=match):
                L.optim.swa_utils.SWALR(opt, **{"swa_lr": 0.05, **bad})


def test_update_bn_matches_torch():
    def run(L):
        model = _model(L)
        model[1].running_mean.fill_(3.0)
        model.eval()
        L.optim.swa_utils.update_bn([(x, 0) for x in _batches(L)], model)
        assert not model.training
        assert model[1].momentum == 0.1
        return model

    _assert_same_states(run(tp), run(torch))


def test_update_bn_without_batchnorm_is_a_no_op():
    model = tp.nn.Linear(3, 2)
    tp.optim.swa_utils.update_bn([tp.ones(2, 3)], model)  # no BatchNorm: the loader is not read
    assert model.training


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "SGD", "Adagrad"])
def test_tensor_lr_must_have_one_element(name):
    for L in (tp, torch):
        with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
            getattr(L.optim, name)([L.nn.Parameter(L.zeros(2))], lr=L.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "SGD"])
def test_one_element_tensor_lr_gives_torchs_trajectory(name):
    def traj(L):
        w = L.nn.Parameter(L.tensor(np.linspace(-1, 1, 6).reshape(2, 3)))
        opt = getattr(L.optim, name)([w], lr=L.tensor([0.1]))
        for _ in range(4):
            opt.zero_grad()
            ((w * w * L.tensor(np.arange(6.0).reshape(2, 3))).sum() + w.sum()).backward()
            opt.step()
        return w.detach().numpy()

    np.testing.assert_allclose(traj(tp), traj(torch), rtol=1e-12, atol=1e-15)


def test_public_names_match_torchs_module():
    ours = {n for n in dir(tp.optim.swa_utils) if not n.startswith("_")}
    assert set(torch.optim.swa_utils.__all__) <= ours
    assert not sorted(n for n in ours if not hasattr(torch.optim.swa_utils, n))
