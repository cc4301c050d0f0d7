"""``torchplug.utils.checkpoint`` in depth, each case run on torchplug and on torch: both variants against the
plain run (dropout, parameters reached only inside, kwargs, non-tensor arguments, several outputs, nesting),
autograd.grad / inputs= / double backward through the non-reentrant variant and the reentrant variant's
refusal, the determinism check, early stop, context_fn, selective checkpointing, debug, and the memory
that checkpointing saves."""

import contextlib
import functools
import warnings

import numpy as np
import pytest

import torchplug as tp
import torchplug.utils.checkpoint as tpc

torch = pytest.importorskip("torch")
import torch.utils.checkpoint  # noqa: E402

LIBS = [pytest.param(tp, id="torchplug"), pytest.param(torch, id="torch")]


def _np(t):
    return np.asarray(t.detach().tolist())


def _close(a, b):
    np.testing.assert_allclose(_np(a) if not isinstance(a, np.ndarray) else a,
                               _np(b) if not isinstance(b, np.ndarray) else b, rtol=1e-5, atol=1e-6)


def _mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2))


def _x(lib, requires_grad=False):
    return lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4), requires_grad=requires_grad)


def _grads(lib, how, reentrant=False):
    """Output and gradients of the dropout MLP run plainly or through checkpoint, for params and input."""
    m = _mlp(lib)
    x = _x(lib, requires_grad=True)
    lib.manual_seed(1)
    if how == "plain":
        y = m(x)
    else:
        y = lib.utils.checkpoint.checkpoint(m, x, use_reentrant=reentrant)
    lib.manual_seed(5)  # the ambient stream after the call must not matter to the recomputation
    y.pow(2).sum().backward()
    return [_np(y), _np(x.grad)] + [_np(p.grad) for p in m.parameters()]


@pytest.mark.parametrize("reentrant", [False, True])
def test_dropout_mlp_matches_plain_run_and_torch(reentrant):
    ref = _grads(torch, "plain")
    for lib in (tp, torch):
        for got, want in zip(_grads(lib, "checkpoint", reentrant), ref):
            _close(got, want)


@pytest.mark.parametrize("lib", LIBS)
def test_without_preserve_rng_state_dropout_masks_differ(lib):
    m = _mlp(lib)
    x = _x(lib, requires_grad=True)
    lib.manual_seed(1)
    y = lib.utils.checkpoint.checkpoint(m, x, use_reentrant=False, preserve_rng_state=False,
                                        determinism_check="none")
    y.pow(2).sum().backward()
    plain = _grads(lib, "plain")
    assert not np.allclose(_np(x.grad), plain[1])


@pytest.mark.parametrize("lib", LIBS)
def test_parameters_reached_only_inside(lib):
    m = _mlp(lib).eval()
    x = _x(lib)  # does not require grad
    y = lib.utils.checkpoint.checkpoint(m, x, use_reentrant=False)
    y.sum().backward()
    grads = [_np(p.grad) for p in m.parameters()]
    m.zero_grad()
    m(x).sum().backward()
    for g, p in zip(grads, m.parameters()):
        _close(g, p.grad)
    # reentrant: no input requires grad, so the output does not either (torch warns, then backward fails)
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None"):
        y = lib.utils.checkpoint.checkpoint(m, x, use_reentrant=True)
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn"):
        y.sum().backward()


def _multi(lib, a, w, *, scale, label):
    assert label == "tag"
    h = (a * w).sin()
    return h * scale, label, h.exp().sum()


@pytest.mark.parametrize("reentrant", [False, True])
def test_kwargs_non_tensor_arguments_and_several_outputs(reentrant):
    results = []
    for lib in (tp, torch):
        a = lib.tensor([0.2, -0.4, 0.9], requires_grad=True)
        w = lib.tensor([1.5, 0.5, -2.0], requires_grad=True)
        if reentrant:  # kwargs are refused there: a non-tensor positional argument instead
            out = lib.utils.checkpoint.checkpoint(lambda a, w, s: _multi(lib, a, w, scale=s, label="tag"), a, w, 3.0,
                                                  use_reentrant=True)
        else:
            out = lib.utils.checkpoint.checkpoint(functools.partial(_multi, lib), a, w, scale=3.0, label="tag",
                                                  use_reentrant=False)
        assert out[1] == "tag"
        (out[0].sum() + out[2]).backward()
        results.append([_np(out[0]), _np(out[2]), _np(a.grad), _np(w.grad)])
    for got, want in zip(*results):
        _close(got, want)


def _nested(lib, x, w):
    ck = functools.partial(lib.utils.checkpoint.checkpoint, use_reentrant=False)

    def inner(t):
        return (t * w).tanh()

    def outer(t):
        return ck(inner, t.sin()).cos() * w

    return ck(outer, x)


@pytest.mark.parametrize("lib", LIBS)
def test_nested_checkpoint_and_autograd_grad(lib):
    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    w = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
    gx, gw = lib.autograd.grad(_nested(lib, x, w).sum(), [x, w])
    assert x.grad is None and w.grad is None  # autograd.grad returns, it does not accumulate
    x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
    ((x2.sin() * w2).tanh().cos() * w2).sum().backward()
    _close(gx, x2.grad)
    _close(gw, w2.grad)


def test_nested_checkpoint_matches_torch():
    res = []
    for lib in (tp, torch):
        x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
        w = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        _nested(lib, x, w).sum().backward()
        res.append([_np(x.grad), _np(w.grad)])
    for a, b in zip(*res):
        _close(a, b)


@pytest.mark.parametrize("lib", LIBS)
def test_backward_inputs_accumulates_only_those(lib):
    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    w = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
    y = lib.utils.checkpoint.checkpoint(lambda t: (t * w).sin(), x, use_reentrant=False)
    y.sum().backward(inputs=[w])
    assert x.grad is None
    _close(w.grad, (x * w).cos().detach() * x.detach())


def _double(lib):
    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    w = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
    y = lib.utils.checkpoint.checkpoint(lambda t: (t.sin() * w).tanh() * t, x, use_reentrant=False)
    gx, = lib.autograd.grad(y.sum(), x, create_graph=True)
    ggx, ggw = lib.autograd.grad(gx.pow(2).sum(), [x, w])
    return [_np(gx), _np(ggx), _np(ggw)]


def test_double_backward_through_non_reentrant_matches_plain_and_torch():
    x = torch.tensor([0.3, -0.7, 1.2], requires_grad=True)
    w = torch.tensor([0.5, 2.0, -1.0], requires_grad=True)
    gx, = torch.autograd.grad(((x.sin() * w).tanh() * x).sum(), x, create_graph=True)
    plain = [_np(gx)] + [_np(g) for g in torch.autograd.grad(gx.pow(2).sum(), [x, w])]
    for lib in (tp, torch):
        for got, want in zip(_double(lib), plain):
            _close(got, want)


def test_saved_tensors_hooks_keep_history_under_create_graph():
    # what an unpack hook returns carries the saved tensor's history again (PyTorch's SavedVariable)
    res = []
    for lib in (tp, torch):
        x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
        w = lib.tensor([1.5, -1.0, 0.3], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = (x.sin() * w).tanh().sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        res.append([_np(g)] + [_np(t) for t in lib.autograd.grad(g.sum(), [x, w])])
    for a, b in zip(*res):
        _close(a, b)


def _grad_inside(lib, early_stop):
    def fn(x):  # a backward inside the checkpointed function unpacks its own placeholders (recomputes)
        z = x.sin().cos()
        gx, = lib.autograd.grad(z.sum(), x, create_graph=True)
        return gx * x.cos(), z

    x = lib.tensor([0.3, 1.2, -0.4], requires_grad=True)
    with lib.utils.checkpoint.set_checkpoint_early_stop(early_stop):
        gx, z = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
    (gx.sum() + z.sum()).backward()
    return [_np(gx), _np(x.grad)]


@pytest.mark.parametrize("early_stop", [True, False])
def test_backward_inside_the_checkpointed_function_as_torch(early_stop):
    for got, want in zip(_grad_inside(tp, early_stop), _grad_inside(torch, early_stop)):
        _close(got, want)


REENTRANT_REFUSAL = ("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an "
                     "`inputs` parameter to .backward(). To resolve this error, you can either set use_reentrant=False,"
                     " or call .backward() without passing the `inputs` argument.")


@pytest.mark.parametrize("lib", LIBS)
def test_reentrant_refuses_grad_and_inputs(lib):
    def make():
        x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
        return x, lib.utils.checkpoint.checkpoint(lambda t: t.sin(), x, use_reentrant=True)

    x, y = make()
    with pytest.raises(RuntimeError) as info:
        lib.autograd.grad(y.sum(), x)
    assert str(info.value) == REENTRANT_REFUSAL
    x, y = make()
    with pytest.raises(RuntimeError) as info:
        y.sum().backward(inputs=[x])
    assert str(info.value) == REENTRANT_REFUSAL
    x, y = make()
    y.sum().backward()  # plain backward works
    _close(x.grad, x.detach().cos())


def _flaky(lib, recompute):
    """A function whose recomputation differs from its forward (it branches on a call counter)."""
    calls = [0]

    def fn(t):
        calls[0] += 1
        return recompute(t) if calls[0] > 1 else (t * t).sin()

    return fn


def _error(lib, recompute, **kw):
    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    y = lib.utils.checkpoint.checkpoint(_flaky(lib, recompute), x, use_reentrant=False, **kw)
    with pytest.raises(lib.utils.checkpoint.CheckpointError) as info:
        y.sum().backward()
    return str(info.value)


def test_determinism_check_raises_checkpoint_error_as_torch():
    assert issubclass(tpc.CheckpointError, RuntimeError)
    for recompute in (lambda t: t.sin(),  # fewer saved tensors
                      lambda t: (t[:2] * t[:2]).sin()):  # the same count, other shapes
        got, want = _error(tp, recompute), _error(torch, recompute)
        # torch's tip adds a paragraph about torch.compile, which torchplug does not have
        assert want.startswith(got.replace("torchplug.", "torch.").rstrip("\n")), (got, want)
    msg = _error(tp, lambda t: t.sin())
    assert "Number of tensors saved during forward: 3\nNumber of tensors saved during recomputation: 1." in msg
    msg = _error(tp, lambda t: (t[:2] * t[:2]).sin())
    assert msg.startswith("torch.utils.checkpoint: Recomputed values for the following tensors have different "
                          "metadata than during the forward pass.\ntensor at position 0:\nsaved metadata: {'shape': "
                          "torchplug.Size([3])")


@pytest.mark.parametrize("lib", LIBS)
def test_determinism_check_none_skips_the_metadata_comparison(lib):
    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    fn = _flaky(lib, lambda t: (t.double() * t.double()).sin())  # other dtypes, same count
    y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    y.sum().backward()
    _close(x.grad, (x * x).cos().detach() * 2 * x.detach())
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got x"):
        lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, determinism_check="x")


@pytest.mark.parametrize("lib", LIBS)
def test_early_stop(lib):
    events = []

    def fn(t):
        events.append("start")
        y = t.sin()  # the one saved tensor
        events.append("after sin")
        return y + 1  # add saves nothing

    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert events == ["start", "after sin", "start"]  # the recomputation stopped at sin's saved tensor
    events.clear()
    with lib.utils.checkpoint.set_checkpoint_early_stop(False):
        y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False)
    y.sum().backward()
    assert events == ["start", "after sin", "start", "after sin"]
    events.clear()
    lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, early_stop=False).sum().backward()
    assert events == ["start", "after sin", "start", "after sin"]


@pytest.mark.parametrize("lib", LIBS)
def test_more_tensors_saved_in_recomputation_without_early_stop(lib):
    with lib.utils.checkpoint.set_checkpoint_early_stop(False):
        msg = _error(lib, lambda t: (t * t).sin().exp())
    assert msg.startswith("torch.utils.checkpoint: trying to save more tensors during recomputation than during the "
                          "original forward pass.\n")


@pytest.mark.parametrize("lib", LIBS)
def test_context_fn_contexts_wrap_forward_and_recomputation(lib):
    events = []

    @contextlib.contextmanager
    def ctx(name):
        events.append(f"enter {name}")
        try:
            yield
        finally:  # early stop ends the recomputation with an exception
            events.append(f"exit {name}")

    def fn(t):
        events.append("run")
        return t.sin()

    x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
    y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, context_fn=lambda: (ctx("fwd"), ctx("re")))
    assert events == ["enter fwd", "run", "exit fwd"]
    y.sum().backward()
    assert events == ["enter fwd", "run", "exit fwd", "enter re", "run", "exit re"]
    with pytest.raises(ValueError, match="^Passing `context_fn` or `debug` is only supported when use_reentrant=False"):
        lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=True, context_fn=lambda: (ctx("a"), ctx("b")))
    with pytest.raises(ValueError, match="^debug=True is incompatible with non-default context_fn"):
        lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False, debug=True,
                                        context_fn=lambda: (ctx("a"), ctx("b")))


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_sequential_matches_torch(reentrant):
    ref = None
    for lib in (torch, tp):
        m = _mlp(lib)
        x = _x(lib, requires_grad=True)
        lib.manual_seed(1)
        y = lib.utils.checkpoint.checkpoint_sequential(m, 2, x, use_reentrant=reentrant)
        y.pow(2).sum().backward()
        got = [_np(y), _np(x.grad)] + [_np(p.grad) for p in m.parameters()]
        if ref is None:
            ref = got
        else:
            for a, b in zip(got, ref):
                _close(a, b)


@pytest.mark.parametrize("reentrant", [False, True])
@pytest.mark.parametrize("lib", LIBS)
def test_autocast_state_is_restored_for_the_recomputation(lib, reentrant):
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 4)
    x = _x(lib, requires_grad=True)
    with lib.autocast("cpu", dtype=lib.bfloat16):
        y = lib.utils.checkpoint.checkpoint(lambda a: lin(a).relu(), x, use_reentrant=reentrant)
    assert y.dtype == lib.bfloat16
    y.float().sum().backward()  # outside autocast: the recomputation must run in bfloat16 again
    got = [_np(x.grad), _np(lin.weight.grad)]
    x.grad = lin.weight.grad = None
    with lib.autocast("cpu", dtype=lib.bfloat16):
        y = lin(x).relu()
    y.float().sum().backward()
    _close(got[0], x.grad)
    _close(got[1], lin.weight.grad)


# ---- selective activation checkpointing ------------------------------------------------------------------------


def _sac_run(lib, policy_fn, preserve_rng_state=True):
    x = lib.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)
    y = lib.tensor(np.linspace(-0.5, 0.7, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)

    def fn(x, y):
        # random (a functional op in both libraries): when the policy saves it, the recomputation needs no RNG state
        noise = lib.bernoulli(lib.sigmoid(x.detach()))
        return lib.sigmoid(lib.matmul(lib.matmul(x, y), y) * noise) * y

    lib.manual_seed(3)
    ctx = functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, policy_fn)
    out = lib.utils.checkpoint.checkpoint(fn, x, y, use_reentrant=False, context_fn=ctx,
                                          preserve_rng_state=preserve_rng_state)
    lib.manual_seed(99)
    out.sum().backward()
    lib.manual_seed(3)
    x2, y2 = x.detach().requires_grad_(), y.detach().requires_grad_()
    fn(x2, y2).sum().backward()
    return x, y, x2, y2


@pytest.mark.parametrize("lib", LIBS)
def test_selective_checkpoint_policy_saves_chosen_ops(lib):
    seen = []

    def save_all_but_mul(ctx, op, *args, **kwargs):
        seen.append(op)
        assert ctx.is_recompute is False and ctx.op_output is not None  # the policy runs in the forward only
        name = str(op) if lib is torch else repr(op)
        return (lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE if "aten.mul" in name
                else lib.utils.checkpoint.CheckpointPolicy.MUST_SAVE)

    # without the RNG restored, only a cached random tensor makes the recomputation match
    x, y, x2, y2 = _sac_run(lib, save_all_but_mul, preserve_rng_state=False)
    _close(x.grad, x2.grad)
    _close(y.grad, y2.grad)
    assert seen.count(lib.ops.aten.mm.default) == 2

    def recompute_all(ctx, op, *args, **kwargs):
        return lib.utils.checkpoint.CheckpointPolicy.PREFER_RECOMPUTE

    x, y, x2, y2 = _sac_run(lib, recompute_all, preserve_rng_state=False)
    assert not np.allclose(_np(x.grad), _np(x2.grad))  # the noise was drawn again


@pytest.mark.parametrize("lib", LIBS)
def test_selective_checkpoint_op_list_and_errors(lib):
    sac = lib.utils.checkpoint.create_selective_checkpoint_contexts
    ctx = functools.partial(sac, [lib.ops.aten.mm.default])
    a = lib.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)
    out = lib.utils.checkpoint.checkpoint(lambda t: lib.mm(t, t).sin(), a, use_reentrant=False, context_fn=ctx)
    out.sum().backward(retain_graph=True)
    a2 = a.detach().requires_grad_()
    lib.mm(a2, a2).sin().sum().backward()
    _close(a.grad, a2.grad)
    with pytest.raises(RuntimeError, match="^Trying to backward an extra time. You are only allowed to backward once"):
        out.sum().backward()
    with pytest.raises(ValueError, match="^Expected op in `op_list` to be an OpOverload but got: .*Please update the "
                                         "OpOverloadPacket to a specific OpOverload."):
        sac([lib.ops.aten.mm])
    with pytest.raises(TypeError, match="^policy_fn_or_list must be either a function or a list of ops."):
        sac(3)


@pytest.mark.parametrize("lib", LIBS)
def test_selective_checkpoint_refuses_a_mutated_cached_tensor(lib):
    kept = []

    def fn(t):
        h = lib.mm(t, t)
        kept.append(h)
        return h.sin()

    a = lib.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)
    ctx = functools.partial(lib.utils.checkpoint.create_selective_checkpoint_contexts, [lib.ops.aten.mm.default])
    out = lib.utils.checkpoint.checkpoint(fn, a, use_reentrant=False, context_fn=ctx)
    with lib.no_grad():
        kept[0].mul_(2)  # the cached output shares its storage
    with pytest.raises(RuntimeError, match="^Tensor cached during selective activation checkpoint has been mutated"):
        out.sum().backward()


def test_dispatch_modes_leave_nothing_behind():
    # the Python key's fallback exists only while a mode is entered; a user's own fallback there comes back
    from torchplug._dispatch.dispatcher import DISPATCHER
    from torchplug._dispatch.keys import PYTHON_BIT
    from torchplug._dispatch.tls import include_keys, tls
    from torchplug.library import Library

    seen = []

    def user_fallback(ks, op, *args):
        seen.append(op.name())
        return op.redispatch(ks & ((1 << PYTHON_BIT) - 1), *args)

    before = list(DISPATCHER.fallbacks.get("Python", []))
    with Library("_", "IMPL") as lib:
        lib.fallback(user_fallback, "Python", with_keyset=True)
        a = tp.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)
        ctx = functools.partial(tpc.create_selective_checkpoint_contexts, [tp.ops.aten.mm.default])
        with include_keys(["Python"]):
            out = tpc.checkpoint(lambda t: tp.mm(t, t).sin(), a, use_reentrant=False, context_fn=ctx)
            assert tls.include & (1 << PYTHON_BIT)  # the user's inclusion is restored after the forward
            out.sum().backward()
            plain = a.detach()
            seen.clear()
            plain.sin()
        assert seen == ["aten::sin"]  # the user's fallback serves the key again outside the modes
    assert DISPATCHER.fallbacks.get("Python", []) == before
    assert not tls.include & (1 << PYTHON_BIT)


def test_debug_lists_the_ops_of_forward_and_recomputation():
    x = tp.tensor([0.3, -0.7, 1.2], requires_grad=True)
    y = tpc.checkpoint(_flaky(tp, lambda t: (t[:2] * t[:2]).sin()), x, use_reentrant=False, debug=True)
    with pytest.raises(tpc.CheckpointError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert msg.startswith("An error happened while unpacking tensors; dumping logs of latest computation\n")
    forward_ops = msg.split("Operations executed during the original forward:\n\n")[1].split("\n\nOperations")[0]
    assert forward_ops.splitlines() == ["float32[3] = aten.mul.Tensor(float32[3], float32[3])",
                                        "float32[3] = aten.sin.default(float32[3])"]
    assert "aten.slice.Tensor(float32[3], 0, 0, 2, 1)" in msg.split("Operations executed during recomputation:")[1]
    assert "test_checkpoint_variants.py" in msg  # the stack of each op points at the caller's code
    assert isinstance(info.value.__cause__, tpc.CheckpointError)
    with tpc.set_checkpoint_debug_enabled(True):  # the global switch turns it on without the argument
        y = tpc.checkpoint(_flaky(tp, lambda t: t.sin()), x, use_reentrant=False)
    with pytest.raises(tpc.CheckpointError, match="^An error happened while unpacking tensors"):
        y.sum().backward()


# ---- the public names ------------------------------------------------------------------------------------------


def test_public_names_as_torch():
    assert set(torch.utils.checkpoint.__all__) <= set(tpc.__all__)
    for name in tpc.__all__:
        assert getattr(tpc, name) is not None
    assert issubclass(tpc.CheckpointFunction, tp.autograd.Function)
    assert [p.name for p in tpc.CheckpointPolicy] == [p.name for p in torch.utils.checkpoint.CheckpointPolicy]
    a = tp.ones(2, requires_grad=True)
    d = tpc.detach_variable((a, 3))
    assert d[1] == 3 and d[0].requires_grad and d[0].grad_fn is None and d[0] is not a
    with pytest.raises(RuntimeError, match="^Only tuple of tensors is supported. Got Unsupported input type: list"):
        tpc.detach_variable([a])
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True"):
        tpc.check_backward_validity([tp.ones(1), 2])
    assert tpc.get_device_states(tp.ones(2), 3) == ([], [])
    tpc.set_device_states([], [])
    assert tpc.DefaultDeviceType.get_device_type() == "cpu" or tp.accelerator.current_accelerator(True) is not None
    with tpc.GraphExecGroup():
        with pytest.raises(RuntimeError, match="^GraphExecGroup contexts cannot be nested"):
            tpc.GraphExecGroup().__enter__()


@pytest.mark.parametrize("lib", LIBS)
def test_graph_exec_group_recomputes_once_across_backwards(lib):
    runs = []

    def fn(a, b):
        runs.append(1)
        return a.sin(), b.cos()

    a = lib.tensor([0.3, -0.7], requires_grad=True)
    b = lib.tensor([1.1, 0.4], requires_grad=True)
    ya, yb = lib.utils.checkpoint.checkpoint(fn, a, b, use_reentrant=False, early_stop=False)
    with lib.utils.checkpoint.GraphExecGroup():
        ya.sum().backward()
        yb.sum().backward()
    assert len(runs) == 2  # forward, then one recomputation for both backward calls
    _close(a.grad, a.detach().cos())
    _close(b.grad, -b.detach().sin())


def test_no_grad_mode_runs_the_function_plainly():
    calls = []
    x = tp.ones(2, requires_grad=True)
    with tp.no_grad():
        y = tpc.checkpoint(lambda t: calls.append(1) or t * 2, x, use_reentrant=False)
    assert not y.requires_grad and calls == [1]


def test_inputs_modified_in_place_before_backward_are_an_error():
    res = []
    for lib in (tp, torch):
        x = lib.tensor([0.3, -0.7, 1.2], requires_grad=True)
        h = x * 1
        y = lib.utils.checkpoint.checkpoint(lambda t: t.sin(), h, use_reentrant=False)
        with lib.no_grad():
            h.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        res.append(str(info.value))
    assert res[0].startswith("one of the variables needed for gradient computation has been modified by an inplace "
                             "operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead.")
    assert res[1].startswith(res[0][:90])


# ---- memory ----------------------------------------------------------------------------------------------------


def _held_after_forward(run):
    """Bytes the CPU allocator holds after the forward (what backward will need), then backward."""
    tp.cpu.reset_peak_memory_stats()
    base = tp.cpu.memory_allocated()
    y = run()
    held = tp.cpu.memory_allocated() - base
    y.sum().backward()
    return held


def test_checkpoint_keeps_a_small_fraction_of_the_activations():
    tp.manual_seed(0)
    depth, width, batch = 8, 64, 32
    layers = []
    for _ in range(depth):
        layers += [tp.nn.Linear(width, width), tp.nn.ReLU()]
    model = tp.nn.Sequential(*layers)
    x = tp.randn(batch, width)
    activation = batch * width * 4  # one float32 activation
    plain = _held_after_forward(lambda: model(x))
    assert plain >= depth * activation  # every ReLU output is kept for backward
    for run in (lambda: tpc.checkpoint(model, x, use_reentrant=False),
                lambda: tpc.checkpoint(model, x.detach().requires_grad_(), use_reentrant=True)):
        held = _held_after_forward(run)
        assert held <= plain / 4, (held, plain)  # the output and a few bookkeeping bytes
    # four segments: the last one's activations and the other segments' inputs are kept
    held = _held_after_forward(lambda: tpc.checkpoint_sequential(model, 4, x, use_reentrant=False))
    assert held < plain


def test_use_reentrant_default_warns_and_reentrant_kwargs_refused():
    a = tp.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
        tpc.checkpoint(lambda t: t * 2, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tpc.checkpoint(lambda t: t * 2, a, use_reentrant=False)
