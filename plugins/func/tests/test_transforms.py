"""torchplug.func's autodiff transforms against torch.func: values, argnums/has_aux pytrees, composition
with each other and with vmap, functional_call and stack_module_state."""

from __future__ import annotations

import pytest

import torchplug
from func_helpers import close, pair

torch = pytest.importorskip("torch")
# torch.func.jvp/linearize reach torch.jit.script internally, which warns in torch 2.13
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def f_scalar(m):
    return lambda x, y: (x.sin() * y).sum() + (x ** 2).mean()


def f_vector(m):
    return lambda x: m.stack([x.sin().sum(), (x * x).sum(), x.prod()])


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_argnums(argnums):
    (x, xt), (y, yt) = pair(4, 3, seed=1), pair(4, 3, seed=2)
    close(torchplug.func.grad(f_scalar(torchplug), argnums)(x, y), torch.func.grad(f_scalar(torch), argnums)(xt, yt))


def test_grad_and_value_has_aux_and_pytrees():
    (x, xt), (y, yt) = pair(3, seed=1), pair(2, 3, seed=2)

    def f(m):
        def g(d, z):
            loss = (d["a"] * d["b"][0]).sum() + z.sum() * 0
            return loss, {"aux": d["a"] * 2}
        return g

    got = torchplug.func.grad_and_value(f(torchplug), has_aux=True)({"a": x, "b": [y[0], y[1]]}, y)
    exp = torch.func.grad_and_value(f(torch), has_aux=True)({"a": xt, "b": [yt[0], yt[1]]}, yt)
    close(got[0], exp[0])
    close(got[1][0], exp[1][0])
    close(got[1][1], exp[1][1])
    g2 = torchplug.func.grad(f(torchplug), has_aux=True)({"a": x, "b": [y[0], y[1]]}, y)
    close(g2[1]["aux"], exp[1][1]["aux"])


def test_grad_errors_match_torch():
    x, xt = pair(3)
    for call in (lambda m, a: m.func.grad(lambda t: t * 2)(a),
                 lambda m, a: m.func.grad(lambda t: t.sum(), argnums=2)(a),
                 lambda m, a: m.func.grad(lambda t: t.sum(), has_aux=True)(a),
                 lambda m, a: m.func.grad(lambda t: t.sum(), argnums=1.5)(a)):
        with pytest.raises(RuntimeError) as theirs:
            call(torch, xt)
        with pytest.raises(RuntimeError) as mine:
            call(torchplug, x)
        assert str(mine.value) == str(theirs.value)


def test_vjp_and_jvp():
    (x, xt), (v, vt) = pair(4, seed=1), pair(3, seed=2)
    out, fn = torchplug.func.vjp(f_vector(torchplug), x)
    out_t, fn_t = torch.func.vjp(f_vector(torch), xt)
    close(out, out_t)
    close(fn(v), fn_t(vt))
    (t, tt) = pair(4, seed=3)
    close(torchplug.func.jvp(f_vector(torchplug), (x,), (t,)), torch.func.jvp(f_vector(torch), (xt,), (tt,)))
    # has_aux and several primals
    g = lambda m: (lambda a, b: ((a * b).exp(), a.sum()))  # noqa: E731
    (y, yt) = pair(4, seed=4)
    o, fn, aux = torchplug.func.vjp(g(torchplug), x, y, has_aux=True)
    ot, fnt, auxt = torch.func.vjp(g(torch), xt, yt, has_aux=True)
    close((o, aux), (ot, auxt))
    close(fn(o), fnt(ot))
    close(torchplug.func.jvp(g(torchplug), (x, y), (t, t), has_aux=True),
          torch.func.jvp(g(torch), (xt, yt), (tt, tt), has_aux=True))


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobians(which):
    (x, xt), (y, yt) = pair(4, seed=1), pair(3, 4, seed=2)
    mine, theirs = getattr(torchplug.func, which), getattr(torch.func, which)
    close(mine(f_vector(torchplug))(x), theirs(f_vector(torch))(xt))
    close(mine(f_scalar(torchplug), argnums=(0, 1))(y, y), theirs(f_scalar(torch), argnums=(0, 1))(yt, yt))
    two = lambda m: (lambda a: (a.sin(), a.outer(a)))  # noqa: E731
    close(mine(two(torchplug))(x), theirs(two(torch))(xt))
    close(torchplug.vmap(mine(f_vector(torchplug)))(y), torch.vmap(theirs(f_vector(torch)))(yt))


def test_hessian_and_nested_transforms():
    (x, xt) = pair(4, seed=1)
    f = lambda m: (lambda a: (a.sin() * a.exp()).sum())  # noqa: E731
    close(torchplug.func.hessian(f(torchplug))(x), torch.func.hessian(f(torch))(xt), atol=1e-10)
    close(torchplug.func.jacrev(torchplug.func.jacrev(f(torchplug)))(x),
          torch.func.jacrev(torch.func.jacrev(f(torch)))(xt), atol=1e-10)
    close(torchplug.func.jacfwd(torchplug.func.jacfwd(f(torchplug)))(x),
          torch.func.jacfwd(torch.func.jacfwd(f(torch)))(xt), atol=1e-10)
    close(torchplug.func.grad(lambda a: torchplug.func.grad(f(torchplug))(a).sum())(x),
          torch.func.grad(lambda a: torch.func.grad(f(torch))(a).sum())(xt), atol=1e-10)
    (X, Xt) = pair(3, 4, seed=2)
    close(torchplug.vmap(torchplug.func.hessian(f(torchplug)))(X), torch.vmap(torch.func.hessian(f(torch)))(Xt),
          atol=1e-10)


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch.func.linearize traces with torch.fx, which warns
def test_linearize():
    (x, xt), (t, tt) = pair(4, seed=1), pair(4, seed=2)
    out, fn = torchplug.func.linearize(f_vector(torchplug), x)
    out_t, fn_t = torch.func.linearize(f_vector(torch), xt)
    close(out, out_t)
    close(fn(t), fn_t(tt))


def test_grad_of_vmap_and_vmap_of_grad():
    (X, Xt), (w, wt) = pair(5, 3, seed=1), pair(3, seed=2)
    loss = lambda m: (lambda w_, x: (x @ w_).tanh() ** 2)  # noqa: E731
    close(torchplug.func.grad(lambda w_: torchplug.vmap(loss(torchplug), in_dims=(None, 0))(w_, X).sum())(w),
          torch.func.grad(lambda w_: torch.vmap(loss(torch), in_dims=(None, 0))(w_, Xt).sum())(wt))
    close(torchplug.vmap(torchplug.func.grad(loss(torchplug)), in_dims=(None, 0))(w, X),
          torch.vmap(torch.func.grad(loss(torch)), in_dims=(None, 0))(wt, Xt))
    # the transforms' results are usable by ordinary autograd outside them
    wr = w.clone().requires_grad_()
    torchplug.vmap(loss(torchplug), in_dims=(None, 0))(wr, X).sum().backward()
    wrt = wt.clone().requires_grad_()
    torch.vmap(loss(torch), in_dims=(None, 0))(wrt, Xt).sum().backward()
    close(wr.grad, wrt.grad)


def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 3)).double()


def test_per_sample_gradients_with_functional_call():
    (X, Xt) = pair(6, 4, seed=1)
    T, Tt = pair(6, seed=2, low=0, high=3)

    def psg(m, model, data, targets):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, t):
            out = m.func.functional_call(model, p, (x.unsqueeze(0),))
            return m.nn.functional.cross_entropy(out, t.unsqueeze(0))
        return m.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(params, data, targets)

    close(psg(torchplug, _mlp(torchplug), X, T), psg(torch, _mlp(torch), Xt, Tt), atol=1e-10)


def test_stack_module_state_ensemble():
    (X, Xt) = pair(5, 4, seed=1)

    def ensemble(m, data):
        models = [_mlp(m) for _ in range(3)]
        for k, mod in enumerate(models):
            m.manual_seed(k)
            for p in mod.parameters():
                p.data.uniform_(-1, 1)
        params, buffers = m.func.stack_module_state(models)
        assert all(p.requires_grad and p.is_leaf for p in params.values())
        base = models[0]

        def call(p, b, x):
            return m.func.functional_call(base, (p, b), (x,))
        return m.vmap(call, in_dims=(0, 0, None))(params, buffers, data)

    close(ensemble(torchplug, X), ensemble(torch, Xt), atol=1e-10)


def test_stack_module_state_errors_match_torch():
    for make in (lambda m: [], lambda m: [m.nn.Linear(2, 2), m.nn.ReLU()],
                 lambda m: [m.nn.Linear(2, 2), m.nn.Linear(2, 2).eval()]):
        with pytest.raises(RuntimeError) as theirs:
            torch.func.stack_module_state(make(torch))
        with pytest.raises(RuntimeError) as mine:
            torchplug.func.stack_module_state(make(torchplug))
        assert str(mine.value) == str(theirs.value)


def test_functional_call_dict_sequence_and_strict():
    model_m, model_t = _mlp(torchplug), _mlp(torch)
    (X, Xt) = pair(2, 4, seed=1)
    pm = {k: v * 2 for k, v in model_m.named_parameters()}
    pt = {k: v * 2 for k, v in model_t.named_parameters()}
    close(torchplug.func.functional_call(model_m, pm, X), torch.func.functional_call(model_t, pt, Xt), atol=1e-10)
    with pytest.raises(ValueError) as theirs:
        torch.func.functional_call(model_t, (pt, pt), (Xt,))
    with pytest.raises(ValueError) as mine:
        torchplug.func.functional_call(model_m, (pm, pm), (X,))
    assert str(mine.value) == str(theirs.value)


def test_transforms_under_nested_vmaps():
    (X, Xt) = pair(2, 3, 4, seed=5)
    f = lambda m: (lambda a: (a.sin() * a.sum()).exp())  # noqa: E731
    close(torchplug.vmap(torchplug.vmap(torchplug.func.jacrev(f(torchplug))))(X),
          torch.vmap(torch.vmap(torch.func.jacrev(f(torch))))(Xt), atol=1e-10)
    close(torchplug.vmap(torchplug.vmap(torchplug.func.jacfwd(f(torchplug))), in_dims=1)(X),
          torch.vmap(torch.vmap(torch.func.jacfwd(f(torch))), in_dims=1)(Xt), atol=1e-10)
    g = lambda m: (lambda w, a: (a @ w).sin().sum())  # noqa: E731
    (w, wt) = pair(4, seed=6)
    close(torchplug.vmap(torchplug.vmap(torchplug.func.grad(g(torchplug)), in_dims=(None, 0)), in_dims=(None, 0))(w, X),
          torch.vmap(torch.vmap(torch.func.grad(g(torch)), in_dims=(None, 0)), in_dims=(None, 0))(wt, Xt), atol=1e-10)


def test_vjp_inside_vmap_with_batched_cotangents():
    (X, Xt), (C, Ct) = pair(5, 3, seed=1), pair(5, 3, seed=2)

    def f(m):
        def per(x, c):
            out, fn = m.func.vjp(lambda a: a.exp() * a.sum(), x)
            return fn(c)[0]
        return per

    close(torchplug.vmap(f(torchplug))(X, C), torch.vmap(f(torch))(Xt, Ct), atol=1e-10)


def test_grad_with_aux_under_vmap():
    (X, Xt) = pair(4, 3, seed=1)
    f = lambda m: m.vmap(m.func.grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True))  # noqa: E731
    close(f(torchplug)(X), f(torch)(Xt))


def test_functionalize_replace_batch_norm_and_debug_unwrap():
    (x, xt) = pair(3, seed=1)

    def f(a):
        b = a.clone()
        b.add_(1)
        return b * 2

    close(torchplug.func.functionalize(f)(x), torch.func.functionalize(f)(xt))
    with pytest.raises(RuntimeError) as theirs:
        torch.func.functionalize(f, remove="views")
    with pytest.raises(RuntimeError) as mine:
        torchplug.func.functionalize(f, remove="views")
    assert str(mine.value) == str(theirs.value)
    for m in (torch, torchplug):
        net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4))
        m.func.replace_all_batch_norm_modules_(net)
        assert net[1].running_mean is None and net[1].running_var is None and not net[1].track_running_stats
    seen = []
    torchplug.vmap(lambda a: seen.append(torchplug.func.debug_unwrap(a)) or a, in_dims=1)(pair(2, 5)[0])
    assert tuple(seen[0].shape) == (2, 5)


@pytest.mark.parametrize("which", ["grad", "jacrev", "jacfwd", "jvp", "vjp", "hessian"])
def test_results_are_differentiable_by_ordinary_autograd(which):
    """A transform applied to inputs that require grad returns results ordinary backward() goes through."""
    (a, at) = pair(4, seed=3)

    def run(m, x):
        f = lambda t: (t.exp() * t.sum()).sin()  # noqa: E731
        if which == "grad":
            return m.func.grad(lambda t: f(t).sum())(x)
        if which in ("jacrev", "jacfwd"):
            return getattr(m.func, which)(f)(x)
        if which == "hessian":
            return m.func.hessian(lambda t: f(t).sum())(x)
        if which == "jvp":
            return m.func.jvp(f, (x,), (m.ones_like(x),))[1]
        return m.func.vjp(f, x)[1](m.ones_like(x))[0]

    results = []
    for m, base in ((torchplug, a), (torch, at)):
        x = base.clone().requires_grad_()
        out = run(m, x)
        out.sum().backward()
        results.append((out.detach(), x.grad))
    close(results[0], results[1], atol=1e-10)


@pytest.mark.parametrize("pattern,kw", [
    ("a b c -> (a b) c", {}), ("a (b1 b2) c -> a b1 b2 c", {"b1": 3}), ("... c -> c ...", {}),
    ("a b c -> a 1 b c", {}), ("a b c -> c b a", {}), ("a b c -> a b c 1", {}), ("a ... -> (a ...)", {}),
    ("a b c -> a b", {}), ("a b -> a b", {}), ("a (b c) d -> a b c d", {}), ("a b c -> a b a", {}),
])
def test_rearrange(pattern, kw):
    (x, xt) = pair(2, 6, 4, seed=1)
    try:
        expected = torch.func.rearrange(xt, pattern, **kw)
    except Exception as exc:  # noqa: BLE001 - einops's own error types
        with pytest.raises(ValueError) as mine:
            torchplug.func.rearrange(x, pattern, **kw)
        assert str(mine.value).split(":")[0].split(" (")[0][:30] == str(exc).split(":")[0].split(" (")[0][:30]
        return
    close(torchplug.func.rearrange(x, pattern, **kw), expected)
    close(torchplug.func.rearrange([x, x], "n " + pattern.replace("->", "-> n", 1), **kw),
          torch.func.rearrange([xt, xt], "n " + pattern.replace("->", "-> n", 1), **kw))


@pytest.mark.parametrize("call", [
    lambda m: m.func.grad(lambda t: t.sum())(m.ones(3, dtype=m.long)),
    lambda m: m.func.vjp(lambda t: t, 3.0),
    lambda m: m.func.jvp(lambda t: t, (m.ones(2),), (m.ones(3),)),
    lambda m: m.func.jvp(lambda t: t, [m.ones(2)], [m.ones(2)]),
    lambda m: m.func.vjp(lambda t: t * 2, m.ones(2))[1](m.ones(3)),
], ids=["int-input", "not-a-tensor", "tangent-shape", "primals-list", "cotangent-shape"])
def test_transform_errors_match_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as mine:
        call(torchplug)
    assert type(mine.value) is type(theirs.value)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("which", ["jacrev", "jacfwd"])
def test_jacobian_has_aux_and_chunks(which):
    (x, xt) = pair(5, seed=2)
    f = lambda m: (lambda a: (a.sin() * a.sum(), {"aux": a.cos()}))  # noqa: E731
    mine, theirs = getattr(torchplug.func, which), getattr(torch.func, which)
    close(mine(f(torchplug), has_aux=True)(x), theirs(f(torch), has_aux=True)(xt))
    if which == "jacrev":
        g = lambda m: (lambda a: a.exp() * a.sum())  # noqa: E731
        close(mine(g(torchplug), chunk_size=2)(x), theirs(g(torch), chunk_size=2)(xt))
