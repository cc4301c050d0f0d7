"""Optimizer trajectories (20 steps, grads set by hand) and scheduler LR sequences, compared with real torch."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
import torchplug.optim as optim

from nn_helpers import to_np

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)
INIT = [rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)]
GRADS = [[rng.standard_normal(p.shape).astype(np.float32) for p in INIT] for _ in range(20)]

OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"lr": 0.02, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
]


def _pair(name, kwargs):
    ours = [nn.Parameter(tp.tensor(p.copy())) for p in INIT]
    ref = [torch.nn.Parameter(torch.tensor(p.copy())) for p in INIT]
    return ours, getattr(optim, name)(ours, **kwargs), ref, getattr(torch.optim, name)(ref, **kwargs)


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_trajectory_matches_torch(name, kwargs):
    ours, opt, ref, ropt = _pair(name, kwargs)
    for step_grads in GRADS:
        for p, r, g in zip(ours, ref, step_grads):
            p.grad = tp.tensor(g)
            r.grad = torch.tensor(g)
        opt.step()
        ropt.step()
        for p, r in zip(ours, ref):
            np.testing.assert_allclose(to_np(p), r.detach().numpy(), rtol=1e-5, atol=1e-6)
    # Same state_dict structure and values.
    sd, rsd = opt.state_dict(), ropt.state_dict()
    assert [sorted(g) for g in sd["param_groups"]] == [sorted(g) for g in rsd["param_groups"]]
    assert sd["param_groups"][0]["params"] == rsd["param_groups"][0]["params"]
    for idx in rsd["state"]:
        assert sorted(sd["state"][idx]) == sorted(rsd["state"][idx])
        for k, v in rsd["state"][idx].items():
            np.testing.assert_allclose(to_np(sd["state"][idx][k]), v.numpy(), rtol=1e-5, atol=1e-6)


def test_state_dict_load_continues_identically():
    ours, opt, ref, ropt = _pair("Adam", {"lr": 0.01})
    for g in GRADS[:5]:
        for p, gi in zip(ours, g):
            p.grad = tp.tensor(gi)
        opt.step()
    # Load our state into a fresh optimizer over a copy of the params; continuing must agree.
    copies = [nn.Parameter(p.detach().clone()) for p in ours]
    opt2 = optim.Adam(copies, lr=0.5)
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))  # as if read from a file: no shared tensors
    assert opt2.param_groups[0]["lr"] == 0.01
    for g in GRADS[5:8]:
        for p, c, gi in zip(ours, copies, g):
            p.grad = tp.tensor(gi)
            c.grad = tp.tensor(gi)
        opt.step()
        opt2.step()
    for p, c in zip(ours, copies):
        np.testing.assert_array_equal(to_np(p), to_np(c))


def test_param_groups_add_and_zero_grad():
    a, b = nn.Parameter(tp.ones(2)), nn.Parameter(tp.ones(3))
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    c = nn.Parameter(tp.ones(1))
    opt.add_param_group({"params": [c], "lr": 0.01})
    assert len(opt.param_groups) == 3
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    for p in (a, b, c):
        p.grad = tp.ones_like(p)
    opt.zero_grad(set_to_none=False)
    assert float(a.grad.sum()) == 0
    opt.zero_grad()
    assert a.grad is None
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1], [2]]


def test_optimizer_errors():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {nn.Parameter(tp.ones(1))}}], lr=0.1)
    with pytest.raises(TypeError):
        optim.SGD(nn.Parameter(tp.ones(1)), lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([nn.Parameter(tp.ones(1))], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([nn.Parameter(tp.ones(1))], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0"):
        optim.Adam([nn.Parameter(tp.ones(1))], betas=(1.0, 0.9))
    opt = optim.SGD([nn.Parameter(tp.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})


def test_model_parameters_and_closure():
    model = nn.Linear(3, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    for p in model.parameters():
        p.grad = tp.ones_like(p)
    before = to_np(model.bias).copy()
    assert opt.step(lambda: 42.0) == 42.0
    np.testing.assert_allclose(to_np(model.bias), before - 0.1, rtol=1e-6)


# ---- schedulers -----------------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", lambda m, o: m.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
    ("LambdaLR", lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (e + 1))),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.25, total_iters=6)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=8, power=2.0)),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=25)),
    ("OneCycleLR-3phase-linear", lambda m, o: m.OneCycleLR(o, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=5,
                                                           anneal_strategy="linear", three_phase=True)),
    ("SequentialLR", lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, total_iters=4), m.ExponentialLR(o, 0.8)],
                                                 milestones=[4])),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.5, total_iters=3), m.ExponentialLR(o, 0.9)])),
]


def _groups(mod, param_cls, tensor):
    return [{"params": [param_cls(tensor(np.ones(2, np.float32)))]},
            {"params": [param_cls(tensor(np.ones(1, np.float32)))], "lr": 0.05}]


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_sequence_matches_torch(name, make):
    opt = optim.SGD(_groups(nn, nn.Parameter, tp.tensor), lr=0.1, momentum=0.9)
    ropt = torch.optim.SGD(_groups(torch.nn, torch.nn.Parameter, torch.tensor), lr=0.1, momentum=0.9)
    sched, rsched = make(optim.lr_scheduler, opt), make(torch.optim.lr_scheduler, ropt)
    ours, ref = [sched.get_last_lr()], [rsched.get_last_lr()]
    moms, rmoms = [], []
    for _ in range(24):
        opt.step()
        ropt.step()
        sched.step()
        rsched.step()
        ours.append(sched.get_last_lr())
        ref.append(rsched.get_last_lr())
        moms.append([g["momentum"] for g in opt.param_groups])
        rmoms.append([g["momentum"] for g in ropt.param_groups])
    np.testing.assert_allclose(np.array(ours), np.array(ref), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.array(moms), np.array(rmoms), rtol=1e-12)


def test_reduce_lr_on_plateau_matches_torch():
    opt = optim.Adam([nn.Parameter(tp.ones(1))], lr=1.0)
    ropt = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], lr=1.0)
    kw = dict(mode="min", factor=0.5, patience=2, threshold=0.01, cooldown=1, min_lr=0.05)
    s, rs = optim.lr_scheduler.ReduceLROnPlateau(opt, **kw), torch.optim.lr_scheduler.ReduceLROnPlateau(ropt, **kw)
    metrics = [5, 4, 4, 4, 4, 4, 3.99, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5]
    for m in metrics:
        s.step(m)
        rs.step(m)
        assert s.get_last_lr() == rs.get_last_lr()
    assert s.get_last_lr()[0] < 1.0


def test_scheduler_state_dict_and_order_warning():
    opt = optim.SGD([nn.Parameter(tp.ones(1))], lr=1.0)
    s = optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 1
    s2 = optim.lr_scheduler.StepLR(opt, 5)
    s2.load_state_dict(sd)
    assert s2.step_size == 2
