"""NAdam, RAdam, Adamax, ASGD, Rprop, Adadelta, Adafactor, Muon, SparseAdam, LBFGS and every lr_scheduler class,
against real torch.

Trajectories run on the same float64 model and data from the same initial weights (gradients from each library's
own autograd), and compare parameters after every step plus the whole state_dict at the end.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.nn as nn
import torchplug.optim as optim
from torchplug_nn.optim.muon import _zeropower_via_newtonschulz
from torchplug_nn.optim.sparse_adam import sparse_adam_update

from nn_helpers import has_autograd, to_np

torch = pytest.importorskip("torch")

needs_autograd = pytest.mark.skipif(not has_autograd(), reason="the autograd plugin is not loaded")

RTOL, ATOL = 1e-8, 1e-11

rng = np.random.default_rng(7)
INIT = [rng.standard_normal(s) * 0.5 for s in [(5, 3), (5,), (1, 5), (1,)]]
X = rng.standard_normal((16, 3))
Y = np.sin(X.sum(1, keepdims=True))


def _lib(ours: bool):
    return (tp, nn) if ours else (torch, torch.nn)


def _params(ours: bool, init=INIT):
    m, mnn = _lib(ours)
    return [mnn.Parameter(m.tensor(a.copy(), dtype=m.float64)) for a in init]


def _loss(m, params, x, y):
    w1, b1, w2, b2 = params
    h = m.tanh(x @ w1.T + b1)
    return ((h @ w2.T + b2 - y) ** 2).mean()


def _closure(ours: bool, opt, params, sign=1.0):
    m = tp if ours else torch
    x, y = m.tensor(X), m.tensor(Y)

    def closure():
        opt.zero_grad()
        loss = _loss(m, params, x, y) * sign
        loss.backward()
        return loss

    return closure


def _assert_params(ours, ref, msg=""):
    for p, r in zip(ours, ref):
        np.testing.assert_allclose(to_np(p), r.detach().numpy(), rtol=RTOL, atol=ATOL, err_msg=msg)


def _dtype_name(t) -> str:
    return str(t.dtype).split(".")[-1]


def _assert_same_value(ours, ref, where, rtol=RTOL, atol=ATOL):
    """Recursively compare one state value of ours with torch's: same kind, dtype, and (close) contents."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(ours, tp.Tensor), f"{where}: expected a torchplug tensor, got {type(ours)}"
        assert _dtype_name(ours) == _dtype_name(ref), f"{where}: dtype {ours.dtype} vs {ref.dtype}"
        assert tuple(ours.shape) == tuple(ref.shape), where
        np.testing.assert_allclose(to_np(ours), ref.detach().numpy(), rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(ref, (list, tuple)):
        assert type(ours) is type(ref) and len(ours) == len(ref), where
        for i, (a, b) in enumerate(zip(ours, ref)):
            _assert_same_value(a, b, f"{where}[{i}]", rtol, atol)
    elif isinstance(ref, float):
        assert isinstance(ours, float), f"{where}: {type(ours).__name__} vs float"
        assert math.isclose(ours, ref, rel_tol=rtol, abs_tol=atol), f"{where}: {ours} vs {ref}"
    else:
        assert type(ours) is type(ref) and ours == ref, f"{where}: {ours!r} vs {ref!r}"


def _assert_same_state_dict(sd, rsd):
    assert len(sd["param_groups"]) == len(rsd["param_groups"])
    for g, rg in zip(sd["param_groups"], rsd["param_groups"]):
        assert sorted(g) == sorted(rg)
        for k in rg:
            _assert_same_value(g[k], rg[k], f"param_groups.{k}")
    assert sorted(sd["state"]) == sorted(rsd["state"])
    for idx, rstate in rsd["state"].items():
        assert sorted(sd["state"][idx]) == sorted(rstate), f"state[{idx}] keys"
        for k, v in rstate.items():
            _assert_same_value(sd["state"][idx][k], v, f"state[{idx}].{k}")


# ---- trajectories -----------------------------------------------------------------------------------
OPTIMIZERS = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("NAdam", {"lr": 0.01, "foreach": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.9), "weight_decay": 0.05}),  # rho_t > 5 from step 6: both branches
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.02, "betas": (0.8, 0.9), "eps": 1e-4, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.02, "maximize": True, "foreach": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-3, "alpha": 0.5, "t0": 10, "weight_decay": 0.01}),  # averaging from step 11
    ("ASGD", {"lr": 0.05, "t0": 3, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.001, "etas": (0.3, 1.5), "step_sizes": (1e-4, 0.05)}),
    ("Rprop", {"lr": 0.01, "maximize": True, "foreach": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 2.0, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-12, 1e-2), "d": 1.5, "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.05, "maximize": True}),
]
STEPS = 30
SIMPLE = ["NAdam", "RAdam", "Adamax", "ASGD", "Rprop", "Adadelta", "Adafactor"]


@needs_autograd
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_trajectory_and_state_dict_match_torch(name, kwargs):
    sign = -1.0 if kwargs.get("maximize") else 1.0  # maximizing -loss is minimizing loss: a bounded problem
    ours, ref = _params(True), _params(False)
    opt, ropt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(ref, **kwargs)
    closure, rclosure = _closure(True, opt, ours, sign), _closure(False, ropt, ref, sign)
    first = last = None
    for i in range(STEPS):
        loss, rloss = opt.step(closure), ropt.step(rclosure)
        assert math.isclose(float(loss.detach()), float(rloss.detach()), rel_tol=1e-9), i
        first = float(loss.detach()) if first is None else first
        last = float(loss.detach())
        _assert_params(ours, ref, f"step {i}")
    assert abs(last) < abs(first)  # it really optimizes
    _assert_same_state_dict(opt.state_dict(), ropt.state_dict())


@needs_autograd
@pytest.mark.parametrize("name", SIMPLE)
def test_implementation_flags_are_accepted_no_ops(name):
    ours, flagged = _params(True), _params(True)
    flags = {"foreach": True} if name == "Adafactor" else {"foreach": True, "capturable": True, "differentiable": True}
    opt, fopt = getattr(optim, name)(ours, lr=0.01), getattr(optim, name)(flagged, lr=0.01, **flags)
    for g in fopt.param_groups:
        assert all(g[k] is True for k in flags)
    closure, fclosure = _closure(True, opt, ours), _closure(True, fopt, flagged)
    for _ in range(5):
        opt.step(closure)
        fopt.step(fclosure)
    for p, q in zip(ours, flagged):
        np.testing.assert_array_equal(to_np(p), to_np(q))


@pytest.mark.parametrize("name", SIMPLE)
def test_float32_hand_set_grads_match_torch(name):
    """float32 parameters with the same gradients: the scalar state's float32 rounding must agree too."""
    init = [a.astype(np.float32) for a in INIT[:2]]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in init] for _ in range(25)]
    ours = [nn.Parameter(tp.tensor(a.copy())) for a in init]
    ref = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    opt, ropt = getattr(optim, name)(ours, lr=0.01), getattr(torch.optim, name)(ref, lr=0.01)
    for step_grads in grads:
        for p, r, g in zip(ours, ref, step_grads):
            p.grad, r.grad = tp.tensor(g), torch.tensor(g)
        opt.step()
        ropt.step()
        for p, r in zip(ours, ref):
            np.testing.assert_allclose(to_np(p), r.detach().numpy(), rtol=1e-5, atol=1e-6)
    for idx, rstate in ropt.state_dict()["state"].items():
        for k, v in rstate.items():
            assert _dtype_name(opt.state_dict()["state"][idx][k]) == _dtype_name(v), k


def test_missing_grads_are_skipped():
    a, b = nn.Parameter(tp.ones(2)), nn.Parameter(tp.ones(2))
    for name in SIMPLE:
        opt = getattr(optim, name)([a, b])
        a.grad = tp.ones(2)
        b.grad = None
        opt.step()
        assert not opt.state.get(b)  # no state created for a parameter without a gradient
        np.testing.assert_array_equal(to_np(b), [1.0, 1.0])
        assert float(to_np(a)[0]) != 1.0
        a.data = tp.ones(2)


# ---- validation errors --------------------------------------------------------------------------------
BAD_ARGS = [
    ("NAdam", {"lr": -1.0}), ("NAdam", {"eps": -1e-3}), ("NAdam", {"betas": (1.0, 0.9)}),
    ("NAdam", {"betas": (0.9, -0.1)}), ("NAdam", {"weight_decay": -0.5}), ("NAdam", {"momentum_decay": -1}),
    ("RAdam", {"lr": -0.1}), ("RAdam", {"eps": -1.0}), ("RAdam", {"betas": (-0.1, 0.9)}),
    ("RAdam", {"betas": (0.9, 1.0)}), ("RAdam", {"weight_decay": -1}),
    ("Adamax", {"lr": -0.1}), ("Adamax", {"eps": -1.0}), ("Adamax", {"betas": (1.5, 0.9)}),
    ("Adamax", {"betas": (0.9, 1.0)}), ("Adamax", {"weight_decay": -1}),
    ("ASGD", {"lr": -0.1}), ("ASGD", {"weight_decay": -1e-3}),
    ("Rprop", {"lr": -0.1}), ("Rprop", {"etas": (1.2, 0.5)}), ("Rprop", {"etas": (0.5, 1.0)}),
    ("Rprop", {"etas": (0.0, 1.2)}),
    ("Adadelta", {"lr": -1.0}), ("Adadelta", {"rho": 1.5}), ("Adadelta", {"rho": -0.1}), ("Adadelta", {"eps": -1}),
    ("Adadelta", {"weight_decay": -1}),
    ("SparseAdam", {"lr": 0.0}), ("SparseAdam", {"eps": 0.0}), ("SparseAdam", {"betas": (1.0, 0.9)}),
    ("SparseAdam", {"betas": (0.9, 1.0)}),
    ("LBFGS", {"lr": -1.0}),
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}), ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1e-3)}), ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -0.9}), ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "spectral"}),
]


def _raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception itself is what is compared
        return exc
    raise AssertionError("no exception raised")


@pytest.mark.parametrize("name,kwargs", BAD_ARGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_ARGS)])
def test_validation_errors_match_torch(name, kwargs):
    init = INIT[:1] if name == "Muon" else INIT  # Muon takes only matrices
    exc = _raised(lambda: getattr(optim, name)(_params(True, init), **kwargs))
    rexc = _raised(lambda: getattr(torch.optim, name)(_params(False, init), **kwargs))
    assert type(exc) is type(rexc)
    assert str(exc) == str(rexc)


ALL_NEW = SIMPLE + ["SparseAdam", "LBFGS", "Muon"]


@pytest.mark.parametrize("name", ALL_NEW)
def test_tensor_lr(name):
    init = INIT[:1] if name == "Muon" else INIT
    exc = _raised(lambda: getattr(optim, name)(_params(True, init), lr=tp.tensor([0.1, 0.2])))
    rexc = _raised(lambda: getattr(torch.optim, name)(_params(False, init), lr=torch.tensor([0.1, 0.2])))
    assert type(exc) is type(rexc) and str(exc) == str(rexc) == "Tensor lr must be 1-element"
    if name in SIMPLE:
        ours, ours_t = _params(True), _params(True)
        opt, opt_t = getattr(optim, name)(ours, lr=0.01), getattr(optim, name)(ours_t, lr=tp.tensor(0.01))
        for p, q in zip(ours, ours_t):
            p.grad = tp.ones_like(p)
            q.grad = tp.ones_like(q)
        opt.step()
        opt_t.step()
        for p, q in zip(ours, ours_t):
            np.testing.assert_allclose(to_np(p), to_np(q), rtol=1e-7)  # 0.01 as float32 vs as a Python float


def test_defaults_match_torch():
    for name in ALL_NEW:
        init = INIT[:1] if name == "Muon" else INIT
        ours, ref = getattr(optim, name)(_params(True, init)), getattr(torch.optim, name)(_params(False, init))
        assert ours.defaults == ref.defaults, name
        assert sorted(ours.param_groups[0]) == sorted(ref.param_groups[0]), name


def test_complex_parameters_only_sparse_adam_refuses():
    # the others update them through view_as_real (trajectories against torch: tests/test_complex.py)
    p = nn.Parameter(tp.tensor([1 + 1j, 2 - 1j]))
    p.grad = tp.tensor([1 + 0j, 1 + 0j])
    optim.NAdam([p], lr=0.1).step()
    after = p.tolist()  # a zero imaginary gradient leaves the imaginary parts, the real parts step down
    assert [v.imag for v in after] == [1.0, -1.0] and after[0].real < 1 and after[1].real < 2
    with pytest.raises(ValueError, match="SparseAdam does not support complex parameters"):
        optim.SparseAdam([p])


# ---- state_dict round trips ---------------------------------------------------------------------------
ROUND_TRIP = [("NAdam", {"lr": 0.01, "weight_decay": 0.1}), ("RAdam", {"lr": 0.01}), ("Adamax", {"lr": 0.01}),
              ("ASGD", {"lr": 0.05, "t0": 2}), ("Rprop", {"lr": 0.01}), ("Adadelta", {"lr": 1.0}),
              ("Adafactor", {"lr": 0.05}),
              ("LBFGS", {"lr": 0.5, "max_iter": 4, "history_size": 3}),
              ("LBFGS", {"max_iter": 4, "history_size": 3, "line_search_fn": "strong_wolfe"})]


def _steps(opt, closure, n):
    for _ in range(n):
        opt.step(closure)


@needs_autograd
@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ROUND_TRIP)])
def test_load_state_dict_round_trip_like_torch(name, kwargs):
    """Save after 4 steps, load into a fresh optimizer over copies of the parameters, continue 4 steps, in both
    libraries: the resumed runs agree (loading casts float state such as ``mu_product``/``eta`` to the parameter
    dtype, in PyTorch too, so a resumed run can differ from the uninterrupted one in the last bits)."""
    ours, ref = _params(True), _params(False)
    opt, ropt = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(ref, **kwargs)
    _steps(opt, _closure(True, opt, ours), 4)
    _steps(ropt, _closure(False, ropt, ref), 4)
    copies = [nn.Parameter(p.detach().clone()) for p in ours]
    rcopies = [torch.nn.Parameter(r.detach().clone()) for r in ref]
    opt2 = getattr(optim, name)(copies, **{**kwargs, "lr": 123.0})
    ropt2 = getattr(torch.optim, name)(rcopies, **{**kwargs, "lr": 123.0})
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))  # as if read from a file: no shared tensors
    ropt2.load_state_dict(copy.deepcopy(ropt.state_dict()))
    assert opt2.param_groups[0]["lr"] == kwargs.get("lr", 1)
    _assert_same_state_dict(opt2.state_dict(), ropt2.state_dict())
    _steps(opt2, _closure(True, opt2, copies), 4)
    _steps(ropt2, _closure(False, ropt2, rcopies), 4)
    _assert_params(copies, rcopies)
    _assert_same_state_dict(opt2.state_dict(), ropt2.state_dict())
    if name in ("RAdam", "Adamax", "Rprop", "Adadelta", "Adafactor", "LBFGS"):  # no float scalar state to re-cast: bit-exact
        _steps(opt, _closure(True, opt, ours), 4)
        for p, c in zip(ours, copies):
            np.testing.assert_array_equal(to_np(p), to_np(c))


@needs_autograd
@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ROUND_TRIP)])
def test_load_torch_state_dict_then_continue_like_torch(name, kwargs):
    """A real torch state_dict (torch tensors inside) loads into ours and continues as torch does after loading
    the same state_dict."""
    ref = _params(False)
    ropt = getattr(torch.optim, name)(ref, **kwargs)
    _steps(ropt, _closure(False, ropt, ref), 4)
    saved = ropt.state_dict()
    ours = _params(True, [r.detach().numpy() for r in ref])
    rcopies = [torch.nn.Parameter(r.detach().clone()) for r in ref]
    opt, ropt2 = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(rcopies, **kwargs)
    opt.load_state_dict(saved)
    ropt2.load_state_dict(saved)
    _assert_same_state_dict(opt.state_dict(), ropt2.state_dict())
    closure, rclosure = _closure(True, opt, ours), _closure(False, ropt2, rcopies)
    for i in range(4):
        opt.step(closure)
        ropt2.step(rclosure)
        _assert_params(ours, rcopies, f"step {i} after loading")
    _assert_same_state_dict(opt.state_dict(), ropt2.state_dict())


def test_old_checkpoints_with_float_step_are_upgraded():
    p = nn.Parameter(tp.ones(3))
    p.grad = tp.ones(3)
    opt = optim.NAdam([p])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"], sd["state"][0]["mu_product"] = 1.0, float(sd["state"][0]["mu_product"])
    del sd["param_groups"][0]["decoupled_weight_decay"]
    opt2 = optim.NAdam([nn.Parameter(tp.ones(3))])
    opt2.load_state_dict(sd)
    state = next(iter(opt2.state.values()))
    assert isinstance(state["step"], tp.Tensor) and isinstance(state["mu_product"], tp.Tensor)
    assert opt2.param_groups[0]["decoupled_weight_decay"] is False


# ---- LBFGS ---------------------------------------------------------------------------------------------
def _rosenbrock(m, p):
    x = p[0]
    return ((1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2) + ((1 - x[2]) ** 2 + 100 * (x[3] - x[2] ** 2) ** 2)


A = rng.standard_normal((12, 4))
B = rng.standard_normal(12)


def _least_squares(m, p):
    w, b = p
    return ((m.tensor(A) @ w + b - m.tensor(B)) ** 2).sum()


LBFGS_CASES = [
    ("rosenbrock", [np.array([-1.2, 1.0, -0.5, 2.0])], {"lr": 0.001, "max_iter": 10}),
    ("rosenbrock", [np.array([-1.2, 1.0, -0.5, 2.0])], {"line_search_fn": "strong_wolfe", "history_size": 5}),
    ("rosenbrock", [np.array([-1.2, 1.0, -0.5, 2.0])],
     {"lr": 0.7, "max_iter": 7, "max_eval": 9, "history_size": 2, "line_search_fn": "strong_wolfe"}),
    ("least_squares", [np.zeros(4), np.zeros(1)], {"lr": 0.05, "max_iter": 5, "history_size": 3}),
    ("least_squares", [np.zeros(4), np.zeros(1)], {"line_search_fn": "strong_wolfe", "tolerance_grad": 1e-5}),
    ("least_squares", [np.ones(4), np.zeros(1)],
     {"max_iter": 3, "tolerance_change": 1e-3, "line_search_fn": "strong_wolfe"}),
]


@needs_autograd
@pytest.mark.parametrize("problem,init,kwargs", LBFGS_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LBFGS_CASES)])
def test_lbfgs_matches_torch(problem, init, kwargs):
    objective = _rosenbrock if problem == "rosenbrock" else _least_squares
    ours, ref = _params(True, init), _params(False, init)
    opt, ropt = optim.LBFGS(ours, **kwargs), torch.optim.LBFGS(ref, **kwargs)
    evals = [0, 0]

    def make(m, o, p, k):
        def closure():
            evals[k] += 1
            o.zero_grad()
            loss = objective(m, p)
            loss.backward()
            return loss
        return closure

    closure, rclosure = make(tp, opt, ours, 0), make(torch, ropt, ref, 1)
    for i in range(8):
        loss, rloss = opt.step(closure), ropt.step(rclosure)
        assert math.isclose(float(loss.detach()), float(rloss.detach()), rel_tol=1e-7, abs_tol=1e-12), i
        assert evals[0] == evals[1], f"step {i}: {evals[0]} vs {evals[1]} function evaluations"
        for p, r in zip(ours, ref):
            np.testing.assert_allclose(to_np(p), r.detach().numpy(), rtol=1e-7, atol=1e-9, err_msg=f"step {i}")
    sd, rsd = opt.state_dict(), ropt.state_dict()
    assert sorted(sd["state"][0]) == sorted(rsd["state"][0])
    for key in ("func_evals", "n_iter"):
        assert sd["state"][0][key] == rsd["state"][0][key]
    for key, rvalue in rsd["state"][0].items():  # same kinds (t is a tensor, a float or the int lr) and values
        _assert_same_value(sd["state"][0][key], rvalue, key, rtol=1e-6, atol=1e-9)
    assert sd["param_groups"][0] == rsd["param_groups"][0]


def test_lbfgs_errors_match_torch():
    two_groups = lambda m, mnn: [{"params": [mnn.Parameter(m.ones(1))]}, {"params": [mnn.Parameter(m.ones(1))]}]  # noqa: E731
    exc, rexc = _raised(lambda: optim.LBFGS(two_groups(tp, nn))), _raised(lambda: torch.optim.LBFGS(two_groups(torch, torch.nn)))
    assert type(exc) is type(rexc) and str(exc) == str(rexc)
    p = nn.Parameter(tp.ones(2))
    opt = optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        p.grad = tp.ones(2)
        return tp.tensor(1.0)

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
    with pytest.raises(TypeError):
        optim.LBFGS([p]).step()  # the closure is required


def test_lbfgs_returns_at_once_when_already_optimal():
    p = nn.Parameter(tp.ones(2))
    opt = optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        p.grad = tp.zeros(2)
        return tp.tensor(3.0)

    assert float(opt.step(closure)) == 3.0
    assert len(calls) == 1 and opt.state[p]["func_evals"] == 1 and opt.state[p]["n_iter"] == 0


# ---- SparseAdam ----------------------------------------------------------------------------------------
def test_sparse_adam_refuses_dense_gradients_like_torch():
    ours, ref = _params(True), _params(False)
    opt, ropt = optim.SparseAdam(ours), torch.optim.SparseAdam(ref)
    for p, r in zip(ours, ref):
        p.grad, r.grad = tp.ones_like(p), torch.ones_like(r)
    exc, rexc = _raised(opt.step), _raised(ropt.step)
    assert type(exc) is type(rexc) is RuntimeError and str(exc) == str(rexc)
    assert str(exc) == "SparseAdam does not support dense gradients, please consider Adam instead"
    # No gradient at all: nothing to do, no error.
    for p in ours:
        p.grad = None
    assert optim.SparseAdam(ours).step(lambda: 1.5) == 1.5


class _COOGrad:
    """A stand-in for a coalesced sparse COO gradient (torchplug has no sparse layout): the protocol
    ``SparseAdam.step`` reads."""

    is_sparse = True

    def __init__(self, indices, values):
        self._i, self._v = indices, values

    def coalesce(self):
        return self

    def _indices(self):
        return self._i

    def _values(self):
        return self._v


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.05, "betas": (0.5, 0.9), "eps": 1e-4}, {"lr": 0.05, "maximize": True}])
def test_sparse_adam_update_matches_torch_on_embedding_grads(kwargs):
    weight = rng.standard_normal((10, 3))
    emb = torch.nn.Embedding(10, 3, sparse=True, _weight=torch.tensor(weight.copy()))
    ropt = torch.optim.SparseAdam(emb.parameters(), **kwargs)
    ours = nn.Parameter(tp.tensor(weight.copy()))
    opt = optim.SparseAdam([ours], **kwargs)
    for step in range(20):
        idx = torch.tensor(rng.integers(0, 10, size=6))  # repeated rows: coalescing sums them
        ropt.zero_grad()
        (emb(idx) * torch.tensor(rng.standard_normal((6, 3)))).sum().backward()
        grad = emb.weight.grad.coalesce()
        ours.grad = _COOGrad(tp.tensor(grad.indices().numpy()), tp.tensor(grad.values().numpy()))
        ropt.step()
        opt.step()
        np.testing.assert_allclose(to_np(ours), emb.weight.detach().numpy(), rtol=1e-12, atol=1e-14, err_msg=str(step))
    state, rstate = opt.state[ours], ropt.state[emb.weight]
    assert state["step"] == rstate["step"] == 20 and isinstance(state["step"], int)
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(to_np(state[k]), rstate[k].numpy(), rtol=1e-12, atol=1e-15)


def test_sparse_adam_update_touches_only_addressed_rows():
    p, m, v = tp.ones(4, 2, dtype=tp.float64), tp.zeros(4, 2, dtype=tp.float64), tp.zeros(4, 2, dtype=tp.float64)
    sparse_adam_update(p, m, v, tp.tensor([[1, 3]]), tp.tensor([[1.0, -1.0], [2.0, 0.5]], dtype=tp.float64), 1,
                       lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, maximize=False)
    out = to_np(p)
    np.testing.assert_array_equal(out[[0, 2]], 1.0)
    np.testing.assert_allclose(out[[1, 3]], [[0.9, 1.1], [0.9, 0.9]], rtol=1e-6)
    np.testing.assert_array_equal(to_np(m)[[0, 2]], 0.0)


# ---- exports -------------------------------------------------------------------------------------------
def test_optimizers_exported():
    for name in ALL_NEW:
        assert name in optim.__all__ and issubclass(getattr(optim, name), optim.Optimizer)
        assert getattr(optim, name).__doc__


def test_every_torch_optimizer_exists():
    names = [n for n in torch.optim.__all__ if isinstance(getattr(torch.optim, n), type)]
    assert [n for n in names if not hasattr(optim, n)] == []


def test_every_torch_scheduler_exists():
    missing = [n for n in torch.optim.lr_scheduler.__all__ if not hasattr(optim.lr_scheduler, n)]
    assert missing == []
    assert set(torch.optim.lr_scheduler.__all__) <= set(optim.lr_scheduler.__all__)
    assert optim.lr_scheduler._LRScheduler.__name__ == "_LRScheduler"
    assert issubclass(optim.lr_scheduler._LRScheduler, optim.lr_scheduler.LRScheduler)
    assert not issubclass(optim.lr_scheduler.MultiplicativeLR, optim.lr_scheduler.LambdaLR)


# ---- schedulers ----------------------------------------------------------------------------------------
class _Scale:
    """A callable-object scale function: its __dict__ is what CyclicLR's state_dict keeps."""

    def __init__(self):
        self.base = 0.9

    def __call__(self, x):
        return self.base**x


SCHEDULERS = [
    ("LambdaLR", lambda m, o: m.LambdaLR(o, [lambda e: 0.97**e, lambda e: 1.0 / (1 + e)])),
    ("MultiplicativeLR", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95 if e % 3 else 1.02)),
    ("StepLR", lambda m, o: m.StepLR(o, step_size=4, gamma=0.7)),
    ("MultiStepLR", lambda m, o: m.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.5)),
    ("ConstantLR", lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=7)),
    ("LinearLR", lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=12)),
    ("ExponentialLR", lambda m, o: m.ExponentialLR(o, gamma=0.93)),
    ("PolynomialLR", lambda m, o: m.PolynomialLR(o, total_iters=20, power=0.5)),
    ("CosineAnnealingLR", lambda m, o: m.CosineAnnealingLR(o, T_max=9, eta_min=0.002)),
    ("SequentialLR", lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, 0.2, total_iters=5), m.CosineAnnealingLR(o, T_max=10), m.ExponentialLR(o, 0.9)],
        milestones=[5, 15])),
    ("ChainedScheduler", lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.5, total_iters=6),
                                                          m.ExponentialLR(o, 0.95), m.StepLR(o, 10, 0.5)])),
    ("OneCycleLR", lambda m, o: m.OneCycleLR(o, max_lr=[0.4, 0.2], total_steps=40, pct_start=0.25)),
    ("CyclicLR-triangular", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5)),
    ("CyclicLR-triangular2", lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3,
                                                      step_size_down=6, mode="triangular2",
                                                      base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR-exp_range", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, mode="exp_range", gamma=0.97,
                                                    cycle_momentum=False)),
    ("CyclicLR-custom", lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=_Scale(),
                                                 scale_mode="iterations")),
    ("CosineAnnealingWarmRestarts", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts-Tmult", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
]


def _sched_opt(ours: bool, kind: str = "SGD"):
    m, mnn = _lib(ours)
    groups = [{"params": [mnn.Parameter(m.ones(2))]}, {"params": [mnn.Parameter(m.ones(1))], "lr": 0.05}]
    lib = optim if ours else torch.optim
    if kind == "Adam":
        return lib.Adam(groups, lr=0.1)
    return lib.SGD(groups, lr=0.1, momentum=0.9)


def _run(sched, opt, n, metrics=None):
    lrs, moms = [sched.get_last_lr()], []
    for i in range(n):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        lrs.append(sched.get_last_lr())
        moms.append([g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups])
    return np.array(lrs), np.array(moms)


def _sched_state(sd):
    """A scheduler state_dict with nested scheduler states flattened to comparable plain values."""
    out = {}
    for k, v in sd.items():
        if k == "_schedulers":
            out[k] = [_sched_state(s) for s in v]
        elif callable(v) or k in ("_scale_fn_custom",):
            out[k] = None if v is None else "set"
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_scheduler_sequence_and_state_match_torch(name, make, kind):
    opt, ropt = _sched_opt(True, kind), _sched_opt(False, kind)
    sched, rsched = make(optim.lr_scheduler, opt), make(torch.optim.lr_scheduler, ropt)
    lrs, moms = _run(sched, opt, 40)
    rlrs, rmoms = _run(rsched, ropt, 40)
    np.testing.assert_allclose(lrs, rlrs, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(moms, rmoms, rtol=1e-13)
    assert [sorted(g) for g in opt.param_groups] == [sorted(g) for g in ropt.param_groups]
    sd, rsd = _sched_state(sched.state_dict()), _sched_state(rsched.state_dict())
    assert sorted(sd) == sorted(rsd)
    for k in rsd:
        if k in ("_schedulers", "base_lrs", "_last_lr"):
            continue
        if isinstance(rsd[k], float):
            assert math.isclose(sd[k], rsd[k], rel_tol=1e-13), k
        elif not isinstance(rsd[k], (list, dict)):
            assert sd[k] == rsd[k], k


@pytest.mark.parametrize("name,make", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_scheduler_state_dict_round_trip(name, make):
    """Save mid-run, rebuild, load: the continuation equals the uninterrupted run."""
    opt = _sched_opt(True)
    sched = make(optim.lr_scheduler, opt)
    _run(sched, opt, 13)
    saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
    expected, _ = _run(sched, opt, 15)
    opt2 = _sched_opt(True)
    sched2 = make(optim.lr_scheduler, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    got, _ = _run(sched2, opt2, 15)
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_cyclic_lr_custom_scale_fn_object_state():
    opt = _sched_opt(True)
    sched = optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=_Scale())
    sd = sched.state_dict()
    assert sd["_scale_fn_custom"] == {"base": 0.9} and "_scale_fn_ref" not in sd
    fn = _Scale()
    fn.base = 0.5
    other = optim.lr_scheduler.CyclicLR(_sched_opt(True), 0.01, 0.1, step_size_up=2, scale_fn=fn)
    other.load_state_dict(sd)
    assert fn.base == 0.9
    plain = optim.lr_scheduler.CyclicLR(_sched_opt(True), 0.01, 0.1, scale_fn=lambda x: 1.0)
    assert plain.state_dict()["_scale_fn_custom"] is None


def test_reduce_lr_on_plateau_max_abs_matches_torch():
    kw = dict(mode="max", factor=0.3, patience=1, threshold=0.05, threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.0])
    metrics = [1, 1.1, 1.12, 1.13, 1.2, 1.2, 1.2, 1.19, 1.3, 1.3, 1.3, 1.3, 1.31, 1.3, 1.2, 1.2, 1.2, 1.2] * 2
    opt, ropt = _sched_opt(True), _sched_opt(False)
    s = optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    rs = torch.optim.lr_scheduler.ReduceLROnPlateau(ropt, **kw)
    lrs, _ = _run(s, opt, len(metrics), metrics)
    rlrs, _ = _run(rs, ropt, len(metrics), metrics)
    np.testing.assert_allclose(lrs, rlrs, rtol=1e-15)
    assert lrs[-1][0] < 0.1
    assert sorted(s.state_dict()) == sorted(rs.state_dict())
    s2 = optim.lr_scheduler.ReduceLROnPlateau(_sched_opt(True))
    s2.load_state_dict(s.state_dict())
    assert (s2.mode, s2.threshold_mode, s2.best, s2.min_lrs) == ("max", "abs", s.best, [0.01, 0.0])


def test_scheduler_errors_match_torch():
    cases = [
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.5),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
        lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
        lambda m, o: m.CyclicLR(o, 0.01, 0.1, mode="sawtooth"),
        lambda m, o: m.CyclicLR(o, [0.01], 0.1),
        lambda m, o: m.MultiplicativeLR(o, [lambda e: 1.0, 0.5]),
        lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
        lambda m, o: m.StepLR(o, 2, last_epoch=3),
        lambda m, o: m.ChainedScheduler([m.StepLR(o, 2), m.ReduceLROnPlateau(o)]),
        lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]),
        lambda m, o: m.ReduceLROnPlateau(o, mode="avg"),
        lambda m, o: m.ReduceLROnPlateau(o, factor=1.5),
    ]
    for i, case in enumerate(cases):
        exc = _raised(lambda: case(optim.lr_scheduler, _sched_opt(True)))
        rexc = _raised(lambda: case(torch.optim.lr_scheduler, _sched_opt(False)))
        assert type(exc) is type(rexc), (i, exc, rexc)
        assert str(exc) == str(rexc), i
    exc = _raised(lambda: optim.lr_scheduler.CyclicLR(optim.Adagrad([nn.Parameter(tp.ones(1))]), 0.01, 0.1))
    assert isinstance(exc, ValueError) and "must support momentum or beta1" in str(exc)
    other = _sched_opt(True)
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer, but got scheduler"):
        opt = _sched_opt(True)
        optim.lr_scheduler.SequentialLR(opt, [optim.lr_scheduler.StepLR(other, 2), optim.lr_scheduler.StepLR(opt, 2)],
                                        milestones=[3])


def test_cosine_warm_restarts_fractional_epochs_match_torch():
    opt, ropt = _sched_opt(True), _sched_opt(False)
    kw = dict(T_0=4, T_mult=2, eta_min=0.01)
    s = optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **kw)
    rs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(ropt, **kw)
    for epoch in np.arange(0, 30, 0.25).tolist() + [3, 17.5, 2]:
        opt.step()
        ropt.step()
        s.step(epoch)
        rs.step(epoch)
        np.testing.assert_allclose(s.get_last_lr(), rs.get_last_lr(), rtol=1e-13)
        assert (s.T_i, s.last_epoch) == (rs.T_i, rs.last_epoch)
        assert math.isclose(s.T_cur, rs.T_cur, rel_tol=1e-13, abs_tol=1e-15)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def test_epoch_argument_uses_closed_form_and_warns_like_torch():
    for make in (lambda m, o: m.StepLR(o, 3, 0.5), lambda m, o: m.CosineAnnealingLR(o, 10),
                 lambda m, o: m.PolynomialLR(o, 8, 2.0), lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3)):
        opt, ropt = _sched_opt(True), _sched_opt(False)
        s, rs = make(optim.lr_scheduler, opt), make(torch.optim.lr_scheduler, ropt)
        opt.step()
        ropt.step()
        for epoch in [5, 2, 7, 7, 12]:
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
                s.step(epoch)
            with pytest.warns(UserWarning, match="The epoch parameter"):
                rs.step(epoch)
            np.testing.assert_allclose(s.get_last_lr(), rs.get_last_lr(), rtol=1e-13)


def test_get_lr_outside_step_warns_like_torch():
    for make in (lambda m, o: m.CyclicLR(o, 0.01, 0.1), lambda m, o: m.CosineAnnealingWarmRestarts(o, 3),
                 lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9)):
        s, rs = make(optim.lr_scheduler, _sched_opt(True)), make(torch.optim.lr_scheduler, _sched_opt(False))
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            s.get_lr()
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            rs.get_lr()


def test_scheduler_before_optimizer_step_warns():
    s = optim.lr_scheduler.CyclicLR(_sched_opt(True), 0.01, 0.1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()  # only the first call is checked


def test_tensor_lr_is_updated_in_place():
    lr = tp.tensor(0.1)
    opt = optim.SGD([nn.Parameter(tp.ones(1))], lr=lr)
    sched = optim.lr_scheduler.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and math.isclose(float(lr), 0.05, rel_tol=1e-6)
    last = sched.get_last_lr()[0]
    assert isinstance(last, tp.Tensor) and last is not lr  # get_last_lr never aliases the group's tensor


# ---- Muon ----------------------------------------------------------------------------------------------
# Muon orthogonalizes in bfloat16, and torch's bfloat16 matmuls round differently with the CPU's dispatch level,
# so torch is a reference only to bfloat16 accuracy here; the exact parts (momentum, lr adjustment, weight decay)
# are checked separately with the Newton-Schulz step replaced by its float64 result.
def _newton_schulz_f64(g, steps=5, a=3.4445, b=-4.775, c=2.0315, eps=1e-7):
    x = g.T if g.shape[0] > g.shape[1] else g
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if g.shape[0] > g.shape[1] else x


@pytest.mark.parametrize("shape", [(4, 3), (3, 6), (5, 5)])
def test_muon_newton_schulz_is_bfloat16_accurate(shape):
    g = np.random.default_rng(11).standard_normal(shape)  # its own stream: the result must not depend on test order
    out = _zeropower_via_newtonschulz(tp.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
    assert out.dtype == tp.bfloat16 and tuple(out.shape) == shape
    ref = _newton_schulz_f64(g)
    np.testing.assert_allclose(to_np(out.float()), ref, atol=0.06)
    singular = np.linalg.svd(to_np(out.float()), compute_uv=False)
    assert singular.min() > 0.5 and singular.max() < 1.3  # the iteration drives singular values towards ~1
    rout = torch.optim._muon._zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
    np.testing.assert_allclose(to_np(out.float()), rout.float().numpy(), atol=0.06)
    for bad, message in [((g, (1.0, 2.0), 5), "exactly 3 values"), ((g, (1.0, 2.0, 3.0), 100), "less than 100"),
                         ((g[0], (1.0, 2.0, 3.0), 5), "2D matrix")]:
        with pytest.raises(ValueError, match=message):
            _zeropower_via_newtonschulz(tp.tensor(bad[0]), bad[1], bad[2], 1e-7)


@pytest.mark.parametrize("kwargs", [{"lr": 0.02}, {"lr": 0.02, "nesterov": False, "momentum": 0.8},
                                    {"lr": 0.01, "weight_decay": 0.0, "adjust_lr_fn": "match_rms_adamw"}])
def test_muon_trajectory_close_to_torch(kwargs):
    shape = (6, 4)
    w = rng.standard_normal(shape)
    ours, ref = nn.Parameter(tp.tensor(w.copy())), torch.nn.Parameter(torch.tensor(w.copy()))
    opt, ropt = optim.Muon([ours], **kwargs), torch.optim.Muon([ref], **kwargs)
    for _ in range(10):
        g = rng.standard_normal(shape)
        ours.grad, ref.grad = tp.tensor(g), torch.tensor(g)
        opt.step()
        ropt.step()
    moved = np.abs(ref.detach().numpy() - w).max()
    assert moved > 0.01
    assert np.abs(to_np(ours) - ref.detach().numpy()).max() < 0.05 * moved  # bfloat16-level agreement
    np.testing.assert_allclose(to_np(opt.state[ours]["momentum_buffer"]),
                               ropt.state[ref]["momentum_buffer"].numpy(), rtol=1e-12)
    assert sorted(opt.state_dict()["param_groups"][0]) == sorted(ropt.state_dict()["param_groups"][0])


def test_muon_update_rule_exact(monkeypatch):
    """With the orthogonalization done in float64, one step is exactly PyTorch's documented rule."""
    import torchplug_nn.optim.muon as muon_mod

    monkeypatch.setattr(muon_mod, "_zeropower_via_newtonschulz",
                        lambda u, *args: tp.tensor(_newton_schulz_f64(to_np(u))))
    w, g = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    p = nn.Parameter(tp.tensor(w.copy()))
    opt = optim.Muon([p], lr=0.02, weight_decay=0.1, momentum=0.9)
    p.grad = tp.tensor(g)
    opt.step()
    buf = 0.1 * g
    update = _newton_schulz_f64(g + 0.9 * (buf - g))  # nesterov: lerp(g, buf, momentum)
    expected = w * (1 - 0.02 * 0.1) - 0.02 * math.sqrt(6 / 3) * update
    np.testing.assert_allclose(to_np(p), expected, rtol=1e-12, atol=1e-14)


def test_muon_refuses_non_matrices_like_torch():
    exc = _raised(lambda: optim.Muon(_params(True)))
    rexc = _raised(lambda: torch.optim.Muon(_params(False)))
    assert type(exc) is type(rexc) is ValueError
    assert str(exc).startswith("Muon only supports 2D parameters whereas we found a parameter with size: ")


def test_step_hooks_run_for_new_optimizers():
    p = nn.Parameter(tp.ones(2, 2))
    calls = []
    for opt in (optim.NAdam([p]), optim.Adafactor([p]), optim.LBFGS([p], max_iter=2)):
        opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", type(o).__name__)))
        opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", type(o).__name__)))

        def closure():
            p.grad = tp.ones(2, 2)
            return tp.tensor(1.0)

        opt.step(closure)
    assert calls == [("pre", "NAdam"), ("post", "NAdam"), ("pre", "Adafactor"), ("post", "Adafactor"),
                     ("pre", "LBFGS"), ("post", "LBFGS")]
